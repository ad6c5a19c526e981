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

ChakraProtoMsg::Node to_proto(const Node& node) {
  namespace pb = ChakraProtoMsg;
  pb::Node n;
  n.set_id(node.id);
  n.set_name(node.name);
  switch (node.kind) {
    case NodeKind::compute: n.set_type(pb::COMP_NODE); break;
    case NodeKind::send: n.set_type(pb::COMM_SEND_NODE); break;
    case NodeKind::recv: n.set_type(pb::COMM_RECV_NODE); break;
    case NodeKind::collective: n.set_type(pb::COMM_COLL_NODE); break;
    case NodeKind::metadata: n.set_type(pb::METADATA_NODE); break;
  }
  n.set_duration_micros(node.duration_micros);
  for (std::uint64_t d : node.data_deps) n.add_data_deps(d);
  for (std::uint64_t d : node.ctrl_deps) n.add_ctrl_deps(d);
  if (!node.inputs.empty()) n.mutable_inputs()->set_values(node.inputs);
  auto integer = [&](const char* name, std::int64_t v) {
    auto* a = n.add_attr();
    a->set_name(name);
    a->set_int64_val(v);
  };
  auto* cpu = n.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(node.is_cpu_op);
  switch (node.kind) {
    case NodeKind::compute:
      integer("num_ops", static_cast<std::int64_t>(node.num_ops));
      integer("tensor_size", static_cast<std::int64_t>(node.tensor_size));
      break;
    case NodeKind::collective:
      integer("comm_type", static_cast<std::int64_t>(*node.comm_type));
      integer("comm_size", static_cast<std::int64_t>(node.comm_size));
      break;
    case NodeKind::send:
    case NodeKind::recv:
      integer("comm_size", static_cast<std::int64_t>(node.comm_size));
      integer("comm_tag", node.comm_tag);
      break;
    case NodeKind::metadata: break;
  }
  if (node.comm_src) integer("comm_src", *node.comm_src);
  if (node.comm_dst) integer("comm_dst", *node.comm_dst);
  if (!node.pg_name.empty()) {
    auto* a = n.add_attr();
    a->set_name("pg_name");
    a->set_string_val(node.pg_name);
  }
  return n;
}

void write_rank_file(const std::string& file, const RankTrace& rank) {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version(rank.version);
  std::vector<ChakraProtoMsg::Node> nodes;
  nodes.reserve(rank.order.size());
  for (const Node& node : rank.nodes) nodes.push_back(to_proto(node));
  write_rank_file(file, metadata, nodes);
}

}  // namespace fabricsim::chakra
