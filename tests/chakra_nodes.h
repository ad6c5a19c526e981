// Chakra trace nodes for the tests (tests/test_chakra.cpp, tests/test_chakra_run.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "et_def.pb.h"

namespace fabricsim::testing {

namespace pb = ChakraProtoMsg;

inline pb::AttributeProto* attr(pb::Node& n, const char* name) {
  auto* a = n.add_attr();
  a->set_name(name);
  return a;
}

inline pb::Node comp(std::uint64_t id, std::vector<std::uint64_t> data_deps = {}, std::uint64_t micros = 10) {
  pb::Node n;
  n.set_id(id);
  n.set_name("comp" + std::to_string(id));
  n.set_type(pb::COMP_NODE);
  n.set_duration_micros(micros);
  for (auto d : data_deps) n.add_data_deps(d);
  return n;
}

inline pb::Node coll(std::uint64_t id, pb::CollectiveCommType type, std::int64_t bytes, const char* pg = "",
                     std::vector<std::uint64_t> data_deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_type(pb::COMM_COLL_NODE);
  attr(n, "comm_type")->set_int64_val(type);
  attr(n, "comm_size")->set_int64_val(bytes);
  if (*pg) attr(n, "pg_name")->set_string_val(pg);
  for (auto d : data_deps) n.add_data_deps(d);
  return n;
}

inline pb::Node p2p(std::uint64_t id, bool send, int peer, std::int64_t bytes, int tag) {
  pb::Node n;
  n.set_id(id);
  n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
  attr(n, send ? "comm_dst" : "comm_src")->set_int32_val(peer);
  attr(n, "comm_size")->set_int64_val(bytes);
  attr(n, "comm_tag")->set_int32_val(tag);
  return n;
}

/// `n` with `deps` added to its data dependencies.
inline pb::Node after(pb::Node n, const std::vector<std::uint64_t>& deps) {
  for (auto d : deps) n.add_data_deps(d);
  return n;
}

}  // namespace fabricsim::testing
