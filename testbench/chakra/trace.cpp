#include "testbench/chakra/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "et_def.pb.h"

namespace fabricsim::chakra {

namespace pb = ChakraProtoMsg;

std::string_view to_string(NodeKind k) {
  switch (k) {
    case NodeKind::compute: return "COMP_NODE";
    case NodeKind::send: return "COMM_SEND_NODE";
    case NodeKind::recv: return "COMM_RECV_NODE";
    case NodeKind::collective: return "COMM_COLL_NODE";
    case NodeKind::metadata: return "METADATA_NODE";
  }
  return "?";
}

std::string_view to_string(CollectiveType t) {
  switch (t) {
    case CollectiveType::all_reduce: return "ALL_REDUCE";
    case CollectiveType::reduce: return "REDUCE";
    case CollectiveType::all_gather: return "ALL_GATHER";
    case CollectiveType::gather: return "GATHER";
    case CollectiveType::scatter: return "SCATTER";
    case CollectiveType::broadcast: return "BROADCAST";
    case CollectiveType::all_to_all: return "ALL_TO_ALL";
    case CollectiveType::reduce_scatter: return "REDUCE_SCATTER";
    case CollectiveType::reduce_scatter_block: return "REDUCE_SCATTER_BLOCK";
    case CollectiveType::barrier: return "BARRIER";
  }
  return "?";
}

const Node* RankTrace::find(std::uint64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &nodes[it->second];
}

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw TraceError(os.str());
}

std::string node_ref(const std::string& file, std::uint64_t id) {
  return file + ": node " + std::to_string(id);
}

// Where a framing or parse error sits: the message's byte offset and the node before it.
std::string position(const std::string& file, std::uint64_t offset, const std::optional<std::uint64_t>& previous) {
  std::string s = file + ": byte " + std::to_string(offset);
  s += previous ? " (after node " + std::to_string(*previous) + ")" : std::string(" (the GlobalMetadata)");
  return s;
}

// An integer attribute, whichever integer type the producer wrote it as.
std::int64_t integer_attr(const pb::AttributeProto& a, const std::string& where) {
  using A = pb::AttributeProto;
  const auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  auto from_unsigned = [&](std::uint64_t v) {
    if (v > kMax) fail(where, ": attribute ", a.name(), " = ", v, " is out of range");
    return static_cast<std::int64_t>(v);
  };
  switch (a.value_case()) {
    case A::kInt32Val: return a.int32_val();
    case A::kInt64Val: return a.int64_val();
    case A::kUint32Val: return a.uint32_val();
    case A::kUint64Val: return from_unsigned(a.uint64_val());
    case A::kSint32Val: return a.sint32_val();
    case A::kSint64Val: return a.sint64_val();
    case A::kFixed32Val: return a.fixed32_val();
    case A::kFixed64Val: return from_unsigned(a.fixed64_val());
    case A::kSfixed32Val: return a.sfixed32_val();
    case A::kSfixed64Val: return a.sfixed64_val();
    case A::VALUE_NOT_SET: fail(where, ": attribute ", a.name(), " has no value");
    default: fail(where, ": attribute ", a.name(), " is not an integer");
  }
}

std::uint64_t size_attr(const pb::AttributeProto& a, const std::string& where) {
  std::int64_t v = integer_attr(a, where);
  if (v < 0) fail(where, ": attribute ", a.name(), " = ", v, " is negative");
  return static_cast<std::uint64_t>(v);
}

NodeKind node_kind(const pb::Node& n, const std::string& where) {
  switch (n.type()) {
    case pb::COMP_NODE: return NodeKind::compute;
    case pb::COMM_SEND_NODE: return NodeKind::send;
    case pb::COMM_RECV_NODE: return NodeKind::recv;
    case pb::COMM_COLL_NODE: return NodeKind::collective;
    case pb::METADATA_NODE: return NodeKind::metadata;
    case pb::INVALID_NODE: fail(where, ": node type INVALID_NODE (no type set)");
    default: break;
  }
  if (!pb::NodeType_IsValid(n.type())) fail(where, ": unknown node type ", static_cast<int>(n.type()));
  fail(where, ": node type ", pb::NodeType_Name(n.type()),
       " is not supported (supported: COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE, METADATA_NODE)");
}

Node convert(const pb::Node& n, const std::string& file) {
  const std::string where = node_ref(file, n.id());
  Node out;
  out.id = n.id();
  out.name = n.name();
  out.kind = node_kind(n, where);
  out.duration_micros = n.duration_micros();
  out.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  out.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  bool has_size = false;
  for (const auto& a : n.attr()) {
    const std::string& key = a.name();
    if (key == "comm_type") {
      // Only a collective's comm_type means anything: some producers put other values
      // on sends and receives.
      if (out.kind != NodeKind::collective) continue;
      std::int64_t v = integer_attr(a, where);
      if (!pb::CollectiveCommType_IsValid(static_cast<int>(v)) || v != static_cast<int>(v))
        fail(where, ": comm_type ", v, " is not a collective type (0..9)");
      out.comm_type = static_cast<CollectiveType>(v);
    } else if (key == "comm_size") {
      out.comm_size = size_attr(a, where);
      has_size = true;
    } else if (key == "comm_src") {
      out.comm_src = integer_attr(a, where);
    } else if (key == "comm_dst") {
      out.comm_dst = integer_attr(a, where);
    } else if (key == "comm_tag") {
      out.comm_tag = integer_attr(a, where);
    } else if (key == "pg_name") {
      if (a.value_case() != pb::AttributeProto::kStringVal) fail(where, ": attribute pg_name is not a string");
      out.pg_name = a.string_val();
    } else if (key == "num_ops") {
      out.num_ops = size_attr(a, where);
    } else if (key == "tensor_size") {
      out.tensor_size = size_attr(a, where);
    } else if (key == "is_cpu_op") {
      out.is_cpu_op = a.value_case() == pb::AttributeProto::kBoolVal ? a.bool_val() : integer_attr(a, where) != 0;
    }
  }
  switch (out.kind) {
    case NodeKind::collective:
      if (!out.comm_type) fail(where, ": COMM_COLL_NODE without a comm_type attribute");
      if (!has_size && *out.comm_type != CollectiveType::barrier)
        fail(where, ": COMM_COLL_NODE (", to_string(*out.comm_type), ") without a comm_size attribute");
      break;
    case NodeKind::send:
      if (!out.comm_dst) fail(where, ": COMM_SEND_NODE without a peer (comm_dst attribute)");
      break;
    case NodeKind::recv:
      if (!out.comm_src) fail(where, ": COMM_RECV_NODE without a peer (comm_src attribute)");
      break;
    case NodeKind::metadata:
      out.inputs = n.inputs().values();
      break;
    default: break;
  }
  return out;
}

// The messages of one file: returns the GlobalMetadata and hands each node, in file
// order, to on_node.
pb::GlobalMetadata read_messages(const std::string& file, const std::function<void(const pb::Node&)>& on_node) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(file, ": cannot open: ", std::strerror(errno));
  google::protobuf::io::FileInputStream stream(fd);
  stream.SetCloseOnDelete(true);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail(file, ": not a regular file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) fail(file, ": empty file (a trace starts with a GlobalMetadata message)");
  unsigned char magic[2] = {0, 0};
  if (::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    fail(file, ": gzip-compressed; decompress it first (gunzip)");

  pb::GlobalMetadata metadata;
  pb::Node node;
  std::optional<std::uint64_t> previous;  // id of the last node read
  std::uint64_t offset = 0;
  while (offset < size) {
    // A fresh CodedInputStream per message keeps its byte counter far from its limit
    // on files of any length; it hands unread bytes back to `stream` when destroyed.
    google::protobuf::io::CodedInputStream in(&stream);
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length))
      fail(position(file, offset, previous), ": length prefix cut short by the end of the file or malformed");
    const auto header = static_cast<std::uint64_t>(in.CurrentPosition());
    if (length > kMaxMessageBytes)
      fail(position(file, offset, previous), ": message length ", length, " bytes exceeds the limit of ",
           kMaxMessageBytes, " bytes");
    if (offset + header + length > size)
      fail(position(file, offset, previous), ": message of ", length, " bytes runs past the end of the file (",
           size, " bytes): truncated");
    auto limit = in.PushLimit(static_cast<int>(length));
    const bool first = offset == 0;
    bool ok = first ? metadata.ParseFromCodedStream(&in) : node.ParseFromCodedStream(&in);
    ok = ok && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    if (!ok)
      fail(position(file, offset, previous), ": message of ", length, " bytes does not parse as a Chakra ",
           first ? "GlobalMetadata" : "Node");
    offset += header + length;
    if (first) continue;
    on_node(node);
    previous = node.id();
  }
  return metadata;
}

// Kahn's algorithm over both dependency kinds, the earliest ready node in file order
// first; a dependency listed twice is an edge counted twice. The edges are kept in
// compressed-sparse-row form (one array of offsets, one of node indices). A node left
// over lies on a cycle or behind one; the error walks back from the first such node
// until it repeats and names that cycle.
std::vector<std::size_t> execution_order(const RankTrace& t, const std::function<std::size_t(std::uint64_t)>& at) {
  const std::size_t n = t.nodes.size();
  std::vector<std::size_t> dep_at(n + 1, 0);  // deps of node i: deps[dep_at[i] .. dep_at[i + 1])
  for (std::size_t i = 0; i < n; ++i)
    dep_at[i + 1] = dep_at[i] + t.nodes[i].data_deps.size() + t.nodes[i].ctrl_deps.size();
  std::vector<std::size_t> deps(dep_at[n]);
  std::vector<std::size_t> dependent_at(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t k = dep_at[i];
    for (const auto* list : {&t.nodes[i].data_deps, &t.nodes[i].ctrl_deps})
      for (std::uint64_t d : *list) {
        const std::size_t j = at(d);
        deps[k++] = j;
        ++dependent_at[j + 1];
      }
  }
  for (std::size_t i = 0; i < n; ++i) dependent_at[i + 1] += dependent_at[i];
  std::vector<std::size_t> dependents(dep_at[n]);
  std::vector<std::size_t> fill(dependent_at.begin(), dependent_at.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = dep_at[i]; k < dep_at[i + 1]; ++k) dependents[fill[deps[k]]++] = i;

  std::vector<std::size_t> waiting(n);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    waiting[i] = dep_at[i + 1] - dep_at[i];
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t k = dependent_at[i]; k < dependent_at[i + 1]; ++k)
      if (--waiting[dependents[k]] == 0) ready.push(dependents[k]);
  }
  if (order.size() == n) return order;

  std::size_t start = 0;
  while (waiting[start] == 0) ++start;
  std::vector<std::size_t> path;
  std::vector<std::size_t> seen_at(n, n);
  std::size_t v = start;
  while (seen_at[v] == n) {
    seen_at[v] = path.size();
    path.push_back(v);
    v = *std::find_if(deps.begin() + dep_at[v], deps.begin() + dep_at[v + 1],
                      [&](std::size_t d) { return waiting[d] != 0; });
  }
  std::string cycle;
  for (std::size_t k = seen_at[v]; k < path.size(); ++k) cycle += std::to_string(t.nodes[path[k]].id) + " -> ";
  cycle += std::to_string(t.nodes[v].id);
  fail(node_ref(t.file, t.nodes[v].id), ": dependency cycle ", cycle, " (each node depends on the next)");
}

}  // namespace

void finish_rank(RankTrace& t) {
  t.index_.clear();
  t.index_.reserve(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    auto [it, fresh] = t.index_.emplace(t.nodes[i].id, i);
    if (!fresh)
      fail(node_ref(t.file, t.nodes[i].id), ": duplicate node id (nodes ", it->second + 1, " and ", i + 1,
           " of the file)");
  }
  auto at = [&](std::uint64_t id) { return t.index_.at(id); };
  for (const Node& node : t.nodes) {
    for (const auto& [list, kind] : {std::pair{&node.data_deps, "data_deps"}, std::pair{&node.ctrl_deps, "ctrl_deps"}})
      for (std::uint64_t d : *list)
        if (!t.index_.count(d))
          fail(node_ref(t.file, node.id), ": depends on node ", d, " (", kind, "), which is not in the file");
  }
  t.order = execution_order(t, at);
}

RankTrace read_rank_file(const std::string& file, int rank) {
  RankTrace t;
  t.rank = rank;
  t.file = file;
  t.version = read_messages(file, [&](const pb::Node& n) { t.nodes.push_back(convert(n, file)); }).version();
  finish_rank(t);
  return t;
}

std::vector<std::string> rank_files(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string base = p.filename().string();
  if (base.empty()) fail(prefix, ": a trace prefix names files PREFIX.RANK.et, not a directory");
  std::map<std::uint64_t, std::string> found;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) fail(prefix, ": cannot list ", dir.string(), ": ", ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) fail(prefix, ": cannot list ", dir.string(), ": ", ec.message());
    const std::string name = it->path().filename().string();
    const std::string head = base + ".";
    const std::string tail = ".et";
    if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    const std::string file = prefix + "." + digits + ".et";
    if (digits.size() > 1 && digits[0] == '0') fail(file, ": rank number with a leading zero");
    if (digits.size() > 9) fail(file, ": rank number too large");
    found.emplace(std::stoull(digits), file);
  }
  if (found.empty()) fail(prefix, ": no trace files ", prefix, ".RANK.et");
  std::vector<std::string> files;
  for (const auto& [rank, file] : found) {
    if (rank != files.size()) {
      std::string ranks;
      for (const auto& [r, f] : found) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      fail(prefix, ".", files.size(), ".et is missing (ranks found: ", ranks, "); ranks run from 0 without a gap");
    }
    files.push_back(file);
  }
  return files;
}

namespace {

void check_collectives(const Trace& trace) {
  // Per process group, each member rank's collectives in execution order.
  std::map<std::string, std::map<int, std::vector<const Node*>>> groups;
  for (const RankTrace& r : trace.ranks)
    for (std::size_t i : r.order)
      if (r.nodes[i].kind == NodeKind::collective) groups[r.nodes[i].pg_name][r.rank].push_back(&r.nodes[i]);
  auto describe = [](const Node& n) {
    return std::string(to_string(*n.comm_type)) + " of " + std::to_string(n.comm_size) + " bytes";
  };
  for (const auto& [pg, members] : groups) {
    const std::string group = pg.empty() ? std::string("the default process group") : "process group '" + pg + "'";
    const auto& [ref_rank, ref] = *members.begin();
    const std::string& ref_file = trace.ranks[ref_rank].file;
    for (const auto& [rank, seq] : members) {
      const std::string& file = trace.ranks[rank].file;
      const std::size_t common = std::min(ref.size(), seq.size());
      for (std::size_t k = 0; k < common; ++k) {
        const Node& a = *ref[k];
        const Node& b = *seq[k];
        // All-to-all may split unevenly: only its place in the order is compared.
        const bool same_size = a.comm_size == b.comm_size || *a.comm_type == CollectiveType::all_to_all;
        if (a.comm_type != b.comm_type || !same_size)
          fail("collective ", k + 1, " of ", group, " differs: ", node_ref(ref_file, a.id), " is ", describe(a),
               ", ", node_ref(file, b.id), " is ", describe(b));
      }
      if (ref.size() != seq.size()) {
        const bool ref_longer = ref.size() > seq.size();
        const Node& extra = *(ref_longer ? ref : seq)[common];
        fail(group, ": ", ref_file, " has ", ref.size(), " collectives, ", file, " has ", seq.size(), "; ",
             node_ref(ref_longer ? ref_file : file, extra.id), " (", describe(extra), ") has no counterpart in ",
             ref_longer ? file : ref_file);
      }
    }
  }
}

void check_point_to_point(const Trace& trace) {
  const auto n = static_cast<std::int64_t>(trace.ranks.size());
  for (const RankTrace& r : trace.ranks)
    for (const Node& node : r.nodes) {
      if (node.kind != NodeKind::send && node.kind != NodeKind::recv) continue;
      const std::int64_t peer = node.kind == NodeKind::send ? *node.comm_dst : *node.comm_src;
      const char* attr = node.kind == NodeKind::send ? "comm_dst" : "comm_src";
      if (peer < 0 || peer >= n)
        fail(node_ref(r.file, node.id), ": ", attr, " ", peer, " is not a rank of the trace (ranks 0..", n - 1, ")");
      if (peer == r.rank) fail(node_ref(r.file, node.id), ": ", attr, " ", peer, " is the node's own rank");
    }

  // (src, dst, tag, size): a send on src and a receive on dst match when all four agree.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>;
  std::map<Key, std::int64_t> sends;
  std::map<Key, std::int64_t> recvs;
  auto key = [](const RankTrace& r, const Node& node) {
    return node.kind == NodeKind::send ? Key{r.rank, *node.comm_dst, node.comm_tag, node.comm_size}
                                       : Key{*node.comm_src, r.rank, node.comm_tag, node.comm_size};
  };
  for (const RankTrace& r : trace.ranks)
    for (const Node& node : r.nodes) {
      if (node.kind == NodeKind::send) ++sends[key(r, node)];
      if (node.kind == NodeKind::recv) ++recvs[key(r, node)];
    }
  // The k-th send of a key needs at least k receives of it, and the other way round;
  // nodes are visited in rank and file order, so the first one short is the error. A
  // partner that differs in size only is named, as that is the usual mistake.
  using Pair = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
  std::map<Pair, std::pair<const RankTrace*, const Node*>> first_send;
  std::map<Pair, std::pair<const RankTrace*, const Node*>> first_recv;
  for (const RankTrace& r : trace.ranks)
    for (const Node& node : r.nodes) {
      if (node.kind != NodeKind::send && node.kind != NodeKind::recv) continue;
      const auto& [src, dst, tag, size] = key(r, node);
      (node.kind == NodeKind::send ? first_send : first_recv).emplace(Pair{src, dst, tag}, std::pair{&r, &node});
    }
  std::map<Key, std::int64_t> seen_sends;
  std::map<Key, std::int64_t> seen_recvs;
  for (const RankTrace& r : trace.ranks)
    for (const Node& node : r.nodes) {
      const bool is_send = node.kind == NodeKind::send;
      if (!is_send && node.kind != NodeKind::recv) continue;
      const Key k = key(r, node);
      const std::int64_t have = is_send ? recvs[k] : sends[k];
      if (++(is_send ? seen_sends : seen_recvs)[k] <= have) continue;
      const auto& [src, dst, tag, size] = k;
      const std::int64_t peer = is_send ? dst : src;
      std::string hint;
      const auto& others = is_send ? first_recv : first_send;
      if (auto it = others.find(Pair{src, dst, tag}); it != others.end() && it->second.second->comm_size != size)
        hint = "; " + node_ref(it->second.first->file, it->second.second->id) + " has that peer and tag with " +
               std::to_string(it->second.second->comm_size) + " bytes";
      fail(node_ref(r.file, node.id), is_send ? ": send to rank " : ": receive from rank ", peer, " (tag ", tag, ", ",
           size, " bytes) has no matching ", is_send ? "receive" : "send", " in ", trace.ranks[peer].file, hint);
    }
}

}  // namespace

void check_ranks(const Trace& trace) {
  check_collectives(trace);
  check_point_to_point(trace);
}

Trace read_trace(const std::string& prefix) {
  Trace trace;
  trace.prefix = prefix;
  const std::vector<std::string> files = rank_files(prefix);
  trace.ranks.reserve(files.size());
  for (std::size_t r = 0; r < files.size(); ++r) trace.ranks.push_back(read_rank_file(files[r], static_cast<int>(r)));
  check_ranks(trace);
  return trace;
}

}  // namespace fabricsim::chakra
