#include "testbench/chakra/writer.h"

#include <fstream>

#include <google/protobuf/util/delimited_message_util.h>

#include "testbench/chakra/trace.h"

namespace fabricsim::chakra {

void write_rank_file(const std::string& file, const ChakraProtoMsg::GlobalMetadata& metadata,
                     const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  using google::protobuf::util::SerializeDelimitedToOstream;
  bool ok = out && SerializeDelimitedToOstream(metadata, &out);
  for (const auto& node : nodes) ok = ok && SerializeDelimitedToOstream(node, &out);
  out.close();
  if (!ok || !out) throw TraceError(file + ": cannot write");
}

}  // namespace fabricsim::chakra
