// MLCommons Chakra execution traces: reading and checking. A trace is one file per
// rank, PREFIX.RANK.et, each a GlobalMetadata followed by Nodes, every message
// preceded by its length as a varint (Chakra's encode_message). read_trace() parses
// every rank, checks each file on its own and the ranks against each other, and gives
// each rank its nodes with the attributes fabricsim uses and an execution order.
// Every error is a TraceError naming the file and the node id (docs/workloads.md).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fabricsim::chakra {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Longest message accepted: a length prefix above this is refused before anything
// is allocated for it.
inline constexpr std::uint64_t kMaxMessageBytes = 64ull << 20;

// The node types fabricsim runs. A metadata node takes no time; it only orders.
enum class NodeKind { compute, send, recv, collective, metadata };
std::string_view to_string(NodeKind k);

// Chakra's CollectiveCommType, same values.
enum class CollectiveType {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};
std::string_view to_string(CollectiveType t);

struct Node {
  std::uint64_t id = 0;
  std::string name;
  NodeKind kind = NodeKind::compute;
  std::uint64_t duration_micros = 0;
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  // Communication (attributes comm_type, comm_size, comm_src, comm_dst, comm_tag,
  // pg_name). A collective has comm_type and comm_size (a barrier may omit the size);
  // a send has comm_dst, a receive comm_src. comm_type is read on collectives only.
  std::optional<CollectiveType> comm_type;
  std::uint64_t comm_size = 0;  // bytes
  std::optional<std::int64_t> comm_src;
  std::optional<std::int64_t> comm_dst;
  std::int64_t comm_tag = 0;
  std::string pg_name;  // process group; empty: every rank
  // Computation (attributes num_ops, tensor_size, is_cpu_op).
  std::uint64_t num_ops = 0;
  std::uint64_t tensor_size = 0;  // bytes
  bool is_cpu_op = false;
  // A METADATA_NODE's inputs (IOInfo.values): PyTorch's "## process_group:init ##"
  // node carries the process groups there (process_groups.h).
  std::string inputs;
};

struct RankTrace {
  int rank = 0;
  std::string file;
  std::string version;  // GlobalMetadata.version
  std::vector<Node> nodes;  // in file order
  // Indices into nodes, a topological order of both dependency kinds; among nodes
  // ready at once, the one earlier in the file comes first.
  std::vector<std::size_t> order;

  const Node* find(std::uint64_t id) const;

 private:
  friend void finish_rank(RankTrace& t);
  std::unordered_map<std::uint64_t, std::size_t> index_;
};

struct Trace {
  std::string prefix;
  std::vector<RankTrace> ranks;  // ranks[r].rank == r
};

// PREFIX.0.et ... PREFIX.(N-1).et: the rank numbers in the directory must run from 0
// without a gap.
std::vector<std::string> rank_files(const std::string& prefix);

// One file on its own: framing, parsing, node types and attributes, dependencies,
// duplicate ids, cycles; fills the execution order.
RankTrace read_rank_file(const std::string& file, int rank);

// A rank built in memory (nodes filled, file naming it in errors): the checks
// read_rank_file makes after parsing (duplicate ids, dependencies, cycles); fills
// the index and the execution order.
void finish_rank(RankTrace& t);

// Across ranks: collectives of a process group in the same order with the same type
// and size on every rank that takes part; every send has its receive (peer, tag, size)
// and the other way round; peers are ranks of the trace.
void check_ranks(const Trace& trace);

// rank_files + read_rank_file for each + check_ranks.
Trace read_trace(const std::string& prefix);

}  // namespace fabricsim::chakra
