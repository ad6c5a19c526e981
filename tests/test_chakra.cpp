// Chakra execution traces (testbench/chakra): reading, the checks of one file and
// across ranks, the execution order, and the example trace in examples/chakra/.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testbench/chakra/trace.h"
#include "testbench/chakra/writer.h"
#include "tests/chakra_nodes.h"

namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;
using fabricsim::testing::attr;
using fabricsim::testing::coll;
using fabricsim::testing::comp;
using fabricsim::testing::p2p;
using fabricsim::chakra::CollectiveType;
using fabricsim::chakra::NodeKind;
using fabricsim::chakra::read_trace;
using fabricsim::chakra::RankTrace;
using fabricsim::chakra::Trace;
using fabricsim::chakra::TraceError;
using ::testing::AllOf;
using ::testing::HasSubstr;

// `n` without its attribute `name`.
pb::Node without(pb::Node n, const std::string& name) {
  auto* attrs = n.mutable_attr();
  attrs->erase(std::remove_if(attrs->begin(), attrs->end(), [&](const auto& a) { return a.name() == name; }),
               attrs->end());
  return n;
}

std::string varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}

std::string delimited(const google::protobuf::MessageLite& m) {
  std::string body = m.SerializeAsString();
  return varint(body.size()) + body;
}

class Chakra : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("fabricsim_chakra_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string prefix() const { return (dir_ / "t").string(); }
  std::string file(int rank) const { return prefix() + "." + std::to_string(rank) + ".et"; }

  void write(int rank, const std::vector<pb::Node>& nodes) {
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    fabricsim::chakra::write_rank_file(file(rank), meta, nodes);
  }
  void write_bytes(int rank, const std::string& bytes) {
    std::ofstream(file(rank), std::ios::binary) << bytes;
  }
  // The bytes of a valid file: metadata and a node with id 1.
  static std::string good_start() {
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    return delimited(meta) + delimited(comp(1));
  }

  // The message of the TraceError read_trace throws; a test failure if none.
  std::string error() {
    try {
      read_trace(prefix());
    } catch (const TraceError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no TraceError for " << prefix();
    return "";
  }

  fs::path dir_;
};

std::vector<std::uint64_t> order_ids(const RankTrace& r) {
  std::vector<std::uint64_t> ids;
  for (std::size_t i : r.order) ids.push_back(r.nodes[i].id);
  return ids;
}

// A ring AllReduce written as point-to-point steps on 4 ranks: a forward pass, then
// 2(n-1) steps each sending to the next rank and receiving from the previous one
// (the send of step s+1 waits for the data received at step s), a backward pass
// after the last step and an AllReduce of the data-parallel group. The file lists
// the nodes backwards, so the order comes from the dependencies alone.
TEST_F(Chakra, RingAllReduceLikeTraceReadsInDependencyOrder) {
  constexpr int kRanks = 4;
  constexpr int kSteps = 2 * (kRanks - 1);
  constexpr std::int64_t kChunk = 256 << 10;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<pb::Node> nodes;
    nodes.push_back(coll(300, pb::ALL_REDUCE, 1 << 20, "dp"));
    nodes.back().add_ctrl_deps(200);
    nodes.push_back(comp(200, {2 * kSteps}));
    for (int s = kSteps - 1; s >= 0; --s) {
      pb::Node recv = p2p(2 * s + 2, false, (r + kRanks - 1) % kRanks, kChunk, s);
      recv.add_ctrl_deps(2 * s + 1);
      nodes.push_back(recv);
      pb::Node send = p2p(2 * s + 1, true, (r + 1) % kRanks, kChunk, s);
      send.add_data_deps(s == 0 ? 100 : 2 * s);
      nodes.push_back(send);
    }
    nodes.push_back(comp(100, {}, 250));
    write(r, nodes);
  }
  const Trace t = read_trace(prefix());
  ASSERT_EQ(t.ranks.size(), 4u);
  std::vector<std::uint64_t> expected = {100};
  for (std::uint64_t id = 1; id <= 2 * kSteps; ++id) expected.push_back(id);
  expected.push_back(200);
  expected.push_back(300);
  for (const RankTrace& r : t.ranks) {
    EXPECT_EQ(r.file, file(r.rank));
    EXPECT_EQ(r.version, "0.0.4");
    EXPECT_EQ(order_ids(r), expected) << r.file;
    const auto* send = r.find(1);
    ASSERT_NE(send, nullptr);
    EXPECT_EQ(send->kind, NodeKind::send);
    EXPECT_EQ(send->comm_dst, (r.rank + 1) % kRanks);
    EXPECT_EQ(send->comm_size, static_cast<std::uint64_t>(kChunk));
    EXPECT_EQ(send->comm_tag, 0);
    EXPECT_EQ(send->data_deps, std::vector<std::uint64_t>{100});
    const auto* recv = r.find(12);
    ASSERT_NE(recv, nullptr);
    EXPECT_EQ(recv->kind, NodeKind::recv);
    EXPECT_EQ(recv->comm_src, (r.rank + kRanks - 1) % kRanks);
    EXPECT_EQ(recv->comm_tag, 5);
    const auto* ar = r.find(300);
    ASSERT_NE(ar, nullptr);
    EXPECT_EQ(ar->comm_type, CollectiveType::all_reduce);
    EXPECT_EQ(ar->comm_size, 1u << 20);
    EXPECT_EQ(ar->pg_name, "dp");
    EXPECT_EQ(ar->ctrl_deps, std::vector<std::uint64_t>{200});
    EXPECT_EQ(r.find(100)->duration_micros, 250u);
    EXPECT_EQ(r.find(999), nullptr);
  }
}

// Among nodes ready at once, the one earlier in the file runs first. A dependency
// listed in both kinds (or twice) is waited for once.
TEST_F(Chakra, ReadyNodesKeepFileOrder) {
  pb::Node joined = comp(9, {3, 5, 3});
  joined.add_ctrl_deps(5);
  write(0, {comp(5), comp(3), joined, comp(1)});
  const Trace t = read_trace(prefix());
  EXPECT_EQ(order_ids(t.ranks[0]), (std::vector<std::uint64_t>{5, 3, 9, 1}));
}

// Producers write the same attribute with different integer types; all read alike.
TEST_F(Chakra, AttributesOfAnyIntegerTypeRead) {
  pb::Node c;
  c.set_id(1);
  c.set_type(pb::COMM_COLL_NODE);
  attr(c, "comm_type")->set_uint32_val(pb::ALL_GATHER);
  attr(c, "comm_size")->set_uint64_val(3000);
  attr(c, "is_cpu_op")->set_bool_val(true);
  pb::Node k = comp(2);
  attr(k, "num_ops")->set_sint64_val(77);
  attr(k, "tensor_size")->set_fixed64_val(4096);
  attr(k, "unrelated")->set_string_val("ignored");
  pb::Node b;
  b.set_id(3);
  b.set_type(pb::COMM_COLL_NODE);
  attr(b, "comm_type")->set_int32_val(pb::BARRIER);
  pb::Node m;
  m.set_id(4);
  m.set_type(pb::METADATA_NODE);
  write(0, {c, k, b, m});
  const Trace t = read_trace(prefix());
  const RankTrace& r = t.ranks[0];
  EXPECT_EQ(r.find(1)->comm_type, CollectiveType::all_gather);
  EXPECT_EQ(r.find(1)->comm_size, 3000u);
  EXPECT_TRUE(r.find(1)->is_cpu_op);
  EXPECT_EQ(r.find(2)->num_ops, 77u);
  EXPECT_EQ(r.find(2)->tensor_size, 4096u);
  EXPECT_FALSE(r.find(2)->is_cpu_op);
  EXPECT_EQ(r.find(3)->comm_type, CollectiveType::barrier);
  EXPECT_EQ(r.find(4)->kind, NodeKind::metadata);
}

TEST_F(Chakra, FileWithOnlyMetadataHasNoNodes) {
  write(0, {});
  const Trace t = read_trace(prefix());
  EXPECT_TRUE(t.ranks[0].nodes.empty());
  EXPECT_TRUE(t.ranks[0].order.empty());
}

// ---- framing and parsing -------------------------------------------------------

TEST_F(Chakra, TruncatedMessageNamesFileAndNode) {
  write_bytes(0, good_start() + varint(100) + std::string(10, '\0'));
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("after node 1"), HasSubstr("truncated")));
}

TEST_F(Chakra, TruncatedLengthPrefixIsAnError) {
  write_bytes(0, good_start() + "\x80");
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("after node 1"), HasSubstr("length prefix")));
}

// A length of 4 GiB - 1 is refused before anything is allocated for it.
TEST_F(Chakra, HugeLengthPrefixIsRefused) {
  write_bytes(0, good_start() + varint(0xffffffffu) + "abc");
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("after node 1"), HasSubstr("exceeds the limit")));
}

TEST_F(Chakra, MessageThatDoesNotParseNamesFileAndNode) {
  // Field 3 (length-delimited) claims 127 bytes inside a 3-byte message.
  write_bytes(0, good_start() + varint(3) + std::string("\x1a\x7f\x00", 3));
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("after node 1"), HasSubstr("does not parse")));
}

TEST_F(Chakra, MetadataThatDoesNotParseIsNamed) {
  write_bytes(0, varint(2) + std::string("\x0a\x05", 2));
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("GlobalMetadata"), HasSubstr("does not parse")));
}

TEST_F(Chakra, EmptyFileIsAnError) {
  write_bytes(0, "");
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("empty")));
}

TEST_F(Chakra, GzipFileIsNamed) {
  write_bytes(0, std::string("\x1f\x8b\x08\x00", 4));
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0)), HasSubstr("gzip")));
}

// Random bytes after a valid start give a TraceError, never a crash or a hang.
TEST_F(Chakra, RandomBytesGiveErrorsNotCrashes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string tail(1 + rng() % 64, '\0');
    for (char& c : tail) c = static_cast<char>(rng());
    write_bytes(0, good_start() + tail);
    try {
      read_trace(prefix());
    } catch (const TraceError& e) {
      EXPECT_THAT(e.what(), HasSubstr(file(0)));
    }
  }
}

// ---- nodes of one file ------------------------------------------------------------

TEST_F(Chakra, UnknownNodeTypeIsAnError) {
  pb::Node n = comp(5);
  n.set_type(static_cast<pb::NodeType>(42));
  write(0, {comp(1), n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 5"), HasSubstr("unknown node type 42")));
}

TEST_F(Chakra, UnsupportedNodeTypeIsRefusedByName) {
  pb::Node n = comp(6);
  n.set_type(pb::MEM_LOAD_NODE);
  write(0, {n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 6"), HasSubstr("MEM_LOAD_NODE is not supported")));
}

TEST_F(Chakra, NodeWithoutTypeIsAnError) {
  pb::Node n;
  n.set_id(8);
  write(0, {n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 8"), HasSubstr("INVALID_NODE")));
}

TEST_F(Chakra, DependencyOnMissingNodeIsAnError) {
  pb::Node n = comp(2, {1});
  n.add_ctrl_deps(99);
  write(0, {comp(1), n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 2"), HasSubstr("node 99"), HasSubstr("ctrl_deps")));
}

TEST_F(Chakra, DuplicateNodeIdIsAnError) {
  write(0, {comp(1), comp(4), comp(4, {1})});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 4"), HasSubstr("duplicate")));
}

TEST_F(Chakra, CycleNamesItsNodes) {
  pb::Node a = comp(1, {3});
  pb::Node b = comp(2, {1});
  pb::Node c = comp(3);
  c.add_ctrl_deps(2);
  // Node 4 waits behind the cycle without being on it.
  write(0, {comp(0), comp(4, {3}), a, b, c});
  const std::string e = error();
  EXPECT_THAT(e, AllOf(HasSubstr(file(0)), HasSubstr("dependency cycle")));
  EXPECT_THAT(e, AllOf(HasSubstr("1 ->"), HasSubstr("2 ->"), HasSubstr("3 ->")));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("4 ->")));
}

TEST_F(Chakra, SelfDependencyIsACycle) {
  write(0, {comp(7, {7})});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 7"), HasSubstr("cycle 7 -> 7")));
}

TEST_F(Chakra, CollectiveWithoutCommTypeIsAnError) {
  write(0, {without(coll(3, pb::ALL_REDUCE, 64), "comm_type")});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 3"), HasSubstr("without a comm_type")));
}

TEST_F(Chakra, CollectiveWithoutSizeIsAnError) {
  write(0, {without(coll(3, pb::REDUCE_SCATTER, 64), "comm_size")});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 3"), HasSubstr("without a comm_size")));
}

TEST_F(Chakra, CommTypeOutOfRangeIsAnError) {
  pb::Node n = coll(3, pb::ALL_REDUCE, 64);
  n.mutable_attr(0)->set_int64_val(17);
  write(0, {n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 3"), HasSubstr("comm_type 17")));
}

// Some producers write a comm_type on sends and receives; it is not read there.
TEST_F(Chakra, CommTypeOfASendIsIgnored) {
  pb::Node send = p2p(1, true, 1, 64, 0);
  attr(send, "comm_type")->set_int64_val(42);
  write(0, {send});
  write(1, {p2p(2, false, 0, 64, 0)});
  const Trace t = read_trace(prefix());
  EXPECT_FALSE(t.ranks[0].find(1)->comm_type.has_value());
}

TEST_F(Chakra, SizeOfWrongTypeIsAnError) {
  pb::Node n = coll(3, pb::ALL_REDUCE, 64);
  n.mutable_attr(1)->set_string_val("64");
  write(0, {n});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 3"), HasSubstr("comm_size is not an integer")));
}

TEST_F(Chakra, SendWithoutPeerIsAnError) {
  write(0, {without(p2p(11, true, 1, 64, 0), "comm_dst")});
  write(1, {p2p(12, false, 0, 64, 0)});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 11"), HasSubstr("without a peer (comm_dst")));
}

TEST_F(Chakra, RecvWithoutPeerIsAnError) {
  write(0, {p2p(11, true, 1, 64, 0)});
  write(1, {without(p2p(12, false, 0, 64, 0), "comm_src")});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(1) + ": node 12"), HasSubstr("without a peer (comm_src")));
}

// ---- across ranks ------------------------------------------------------------------

TEST_F(Chakra, RankGapIsAnError) {
  write(0, {comp(1)});
  write(1, {comp(1)});
  write(3, {comp(1)});
  EXPECT_THAT(error(), AllOf(HasSubstr(prefix() + ".2.et is missing"), HasSubstr("0, 1, 3")));
}

TEST_F(Chakra, NoTraceFilesIsAnError) {
  EXPECT_THAT(error(), AllOf(HasSubstr(prefix()), HasSubstr("no trace files")));
}

TEST_F(Chakra, CollectiveSizeDisagreementNamesBothRanks) {
  write(0, {coll(1, pb::ALL_REDUCE, 1024), coll(2, pb::ALL_REDUCE, 4096, "", {1})});
  write(1, {coll(1, pb::ALL_REDUCE, 1024), coll(9, pb::ALL_REDUCE, 2048, "", {1})});
  EXPECT_THAT(error(), AllOf(HasSubstr("collective 2 of the default process group"), HasSubstr(file(0) + ": node 2"),
                             HasSubstr(file(1) + ": node 9"), HasSubstr("4096"), HasSubstr("2048")));
}

TEST_F(Chakra, CollectiveOrderDisagreementNamesBothRanks) {
  write(0, {coll(1, pb::ALL_REDUCE, 1024, "tp"), coll(2, pb::ALL_GATHER, 1024, "tp", {1})});
  write(1, {coll(1, pb::ALL_GATHER, 1024, "tp"), coll(2, pb::ALL_REDUCE, 1024, "tp", {1})});
  EXPECT_THAT(error(), AllOf(HasSubstr("process group 'tp'"), HasSubstr(file(0) + ": node 1 is ALL_REDUCE"),
                             HasSubstr(file(1) + ": node 1 is ALL_GATHER")));
}

TEST_F(Chakra, MissingCollectiveOnOneRankIsAnError) {
  write(0, {coll(1, pb::ALL_REDUCE, 1024), coll(2, pb::BROADCAST, 64, "", {1})});
  write(1, {coll(1, pb::ALL_REDUCE, 1024)});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 2 (BROADCAST"), HasSubstr("no counterpart in " + file(1))));
}

// Process groups are checked apart: ranks outside a group have none of its collectives.
TEST_F(Chakra, ProcessGroupsAreCheckedApart) {
  write(0, {coll(1, pb::ALL_REDUCE, 1024, "a"), coll(2, pb::ALL_GATHER, 512, "b", {1})});
  write(1, {coll(1, pb::ALL_REDUCE, 1024, "a")});
  write(2, {coll(5, pb::ALL_GATHER, 512, "b")});
  EXPECT_NO_THROW(read_trace(prefix()));
}

TEST_F(Chakra, SendWithoutMatchingRecvNamesSizeMismatch) {
  write(0, {p2p(1, true, 1, 4096, 3)});
  write(1, {p2p(7, false, 0, 2048, 3)});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 1: send to rank 1 (tag 3, 4096 bytes)"),
                             HasSubstr("no matching receive in " + file(1)), HasSubstr(file(1) + ": node 7")));
}

TEST_F(Chakra, RecvWithoutSendIsAnError) {
  write(0, {comp(1)});
  write(1, {p2p(7, false, 0, 2048, 3)});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(1) + ": node 7: receive from rank 0"),
                             HasSubstr("no matching send in " + file(0))));
}

TEST_F(Chakra, SecondSendOfTheSameKeyNeedsItsOwnRecv) {
  write(0, {p2p(1, true, 1, 64, 0), p2p(2, true, 1, 64, 0)});
  write(1, {p2p(1, false, 0, 64, 0)});
  EXPECT_THAT(error(), HasSubstr(file(0) + ": node 2: send to rank 1"));
}

TEST_F(Chakra, PeerOutsideTheTraceIsAnError) {
  write(0, {p2p(1, true, 5, 64, 0)});
  write(1, {comp(1)});
  EXPECT_THAT(error(), AllOf(HasSubstr(file(0) + ": node 1"), HasSubstr("comm_dst 5 is not a rank")));
}

// ---- the example trace -------------------------------------------------------------

TEST(ChakraExample, ReadsWithItsOrder) {
  const Trace t = read_trace(std::string(FABRICSIM_SOURCE_DIR) + "/examples/chakra/tiny");
  ASSERT_EQ(t.ranks.size(), 4u);
  EXPECT_EQ(order_ids(t.ranks[0]), (std::vector<std::uint64_t>{1, 2, 4, 3}));
  EXPECT_EQ(order_ids(t.ranks[1]), (std::vector<std::uint64_t>{1, 2, 4, 3}));
  EXPECT_EQ(order_ids(t.ranks[2]), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(t.ranks[0].find(4)->kind, NodeKind::send);
  EXPECT_EQ(t.ranks[1].find(4)->kind, NodeKind::recv);
  EXPECT_EQ(t.ranks[3].find(2)->comm_size, 1u << 20);
}

// The committed example is what its generator writes.
TEST(ChakraExample, MatchesItsGenerator) {
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_chakra_gen_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_EQ(std::system((std::string(CHAKRA_EXAMPLE_GEN) + " " + dir.string()).c_str()), 0);
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (int r = 0; r < 4; ++r) {
    const std::string name = "tiny." + std::to_string(r) + ".et";
    EXPECT_EQ(bytes(dir / name), bytes(fs::path(FABRICSIM_SOURCE_DIR) / "examples/chakra" / name)) << name;
  }
  fs::remove_all(dir);
}

}  // namespace
