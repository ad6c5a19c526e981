// tlm/packet_log.h: packets.csv rows in the order of delivery time, then destination,
// then the destination's own order, whatever order the NICs delivered them in.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "tlm/packet_log.h"

namespace {

using fabricsim::tlm_fabric::Packet;
using fabricsim::tlm_fabric::PacketLog;
using sc_core::sc_time;
using sc_core::SC_NS;

Packet packet(int src, int dst, std::uint32_t psn) {
  Packet p;
  p.id = (static_cast<std::uint64_t>(src) << 40) | psn;
  p.src = src;
  p.dst = dst;
  p.psn = psn;
  p.payload_bytes = 1024;
  return p;
}

// (dst, psn) of each row after the header.
std::vector<std::pair<int, int>> rows(const std::string& csv) {
  std::vector<std::pair<int, int>> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line + "\n", PacketLog::header());
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    EXPECT_EQ(f.size(), 16u) << line;
    out.emplace_back(std::stoi(f.at(2)), std::stoi(f.at(7)));
  }
  return out;
}

TEST(PacketLog, RowsInTheOrderOfTimeThenDestinationThenDelivery) {
  std::ostringstream out;
  PacketLog log(out);
  // One instant, destinations 7, 3, 7 in the order the NICs ran; then a later instant.
  log.add(packet(1, 7, 0), sc_time(10, SC_NS));
  log.add(packet(2, 3, 0), sc_time(10, SC_NS));
  log.add(packet(1, 7, 1), sc_time(10, SC_NS));
  log.add(packet(4, 0, 0), sc_time(12, SC_NS));
  log.finish();
  const std::vector<std::pair<int, int>> expected{{3, 0}, {7, 0}, {7, 1}, {0, 0}};
  EXPECT_EQ(rows(out.str()), expected);
  EXPECT_NE(out.str().find("\n1099511627776,1,7,raw,0,0,0,0,1024,0,0,0,10,10,0,0\n"), std::string::npos) << out.str();
}

TEST(PacketLog, WritesTheRowsBeforeNowOnceEnoughGathered) {
  std::ostringstream out;
  PacketLog log(out);
  const std::size_t header = out.str().size();
  // Rows at 1 ns, then at 2 ns: nothing goes out until 4,096 are kept; then only those
  // before the time of the row that filled it (a later row of that instant could still
  // come first).
  for (int k = 0; k < 4000; ++k) log.add(packet(1, 5, k), sc_time(1, SC_NS));
  for (int k = 0; k < 95; ++k) log.add(packet(1, 9, k), sc_time(2, SC_NS));
  EXPECT_EQ(out.str().size(), header);
  log.add(packet(1, 8, 0), sc_time(2, SC_NS));  // the 4,096th
  EXPECT_EQ(rows(out.str()).size(), 4000u);
  log.add(packet(1, 6, 0), sc_time(2, SC_NS));
  log.finish();
  const auto all = rows(out.str());
  ASSERT_EQ(all.size(), 4097u);
  EXPECT_EQ(all[4000], (std::pair<int, int>{6, 0}));  // destination order within 2 ns
  EXPECT_EQ(all[4001], (std::pair<int, int>{8, 0}));
  EXPECT_EQ(all[4002], (std::pair<int, int>{9, 0}));
  EXPECT_EQ(all[4096], (std::pair<int, int>{9, 94}));
}

}  // namespace
