// Writes the example Chakra trace examples/chakra/tiny.RANK.et (4 ranks):
//   chakra_example_gen DIR
// Every rank computes a forward pass, then an AllReduce of 1 MiB over all ranks
// (data-dependent on the forward pass), then an optimizer step. Rank 0 also sends
// 64 KiB (tag 7) to rank 1 after its forward pass, which rank 1 receives before its
// optimizer step.
#include <cstdio>
#include <string>
#include <vector>

#include "testbench/chakra/writer.h"

namespace {

using ChakraProtoMsg::Node;

ChakraProtoMsg::AttributeProto* attr(Node& n, const char* name) {
  auto* a = n.add_attr();
  a->set_name(name);
  return a;
}

Node comp(std::uint64_t id, const char* name, std::uint64_t micros, std::uint64_t ops) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(micros);
  attr(n, "is_cpu_op")->set_bool_val(false);
  attr(n, "num_ops")->set_int64_val(static_cast<std::int64_t>(ops));
  return n;
}

Node p2p(std::uint64_t id, bool send, int src, int dst, std::uint64_t bytes, int tag) {
  Node n;
  n.set_id(id);
  n.set_name(send ? "send_activations" : "recv_activations");
  n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  attr(n, "is_cpu_op")->set_bool_val(false);
  attr(n, "comm_src")->set_int32_val(src);
  attr(n, "comm_dst")->set_int32_val(dst);
  attr(n, "comm_size")->set_int64_val(static_cast<std::int64_t>(bytes));
  attr(n, "comm_tag")->set_int32_val(tag);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR  (writes DIR/tiny.RANK.et, 4 ranks)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  constexpr int kRanks = 4;
  try {
    for (int rank = 0; rank < kRanks; ++rank) {
      ChakraProtoMsg::GlobalMetadata meta;
      meta.set_version("0.0.4");
      std::vector<Node> nodes;
      nodes.push_back(comp(1, "forward", 120, 4'000'000'000));

      Node allreduce;
      allreduce.set_id(2);
      allreduce.set_name("allreduce_gradients");
      allreduce.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      allreduce.add_data_deps(1);
      attr(allreduce, "is_cpu_op")->set_bool_val(false);
      attr(allreduce, "comm_type")->set_int64_val(ChakraProtoMsg::ALL_REDUCE);
      attr(allreduce, "comm_size")->set_int64_val(1 << 20);
      attr(allreduce, "pg_name")->set_string_val("0");
      nodes.push_back(allreduce);

      Node step = comp(3, "optimizer_step", 30, 500'000'000);
      step.add_data_deps(2);
      if (rank == 0) {
        nodes.push_back(p2p(4, true, 0, 1, 64 << 10, 7));
        nodes.back().add_data_deps(1);
      } else if (rank == 1) {
        nodes.push_back(p2p(4, false, 0, 1, 64 << 10, 7));
        step.add_ctrl_deps(4);
      }
      nodes.push_back(step);
      fabricsim::chakra::write_rank_file(dir + "/tiny." + std::to_string(rank) + ".et", meta, nodes);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
