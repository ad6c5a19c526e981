// Writing Chakra trace files: a GlobalMetadata then Nodes, each preceded by its
// length as a varint (Chakra's encode_message). Used by the example generator and
// the tests; fabricsim itself only reads traces (trace.h).
#pragma once

#include <string>
#include <vector>

#include "et_def.pb.h"

namespace fabricsim::chakra {

void write_rank_file(const std::string& file, const ChakraProtoMsg::GlobalMetadata& metadata,
                     const std::vector<ChakraProtoMsg::Node>& nodes);

}  // namespace fabricsim::chakra
