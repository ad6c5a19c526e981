// Writing Chakra trace files: a GlobalMetadata then Nodes, each preceded by its
// length as a varint (Chakra's encode_message). Used by the example generator and
// the tests; fabricsim itself only reads traces (trace.h).
#pragma once

#include <string>
#include <vector>

#include "et_def.pb.h"
#include "testbench/chakra/trace.h"

namespace fabricsim::chakra {

void write_rank_file(const std::string& file, const ChakraProtoMsg::GlobalMetadata& metadata,
                     const std::vector<ChakraProtoMsg::Node>& nodes);

// A node as Chakra writes it: the attributes trace.h reads (integers as int64,
// is_cpu_op as a bool), a metadata node's inputs as IOInfo.values.
ChakraProtoMsg::Node to_proto(const Node& node);

// A rank built in memory, written to `file` with its version.
void write_rank_file(const std::string& file, const RankTrace& rank);

}  // namespace fabricsim::chakra
