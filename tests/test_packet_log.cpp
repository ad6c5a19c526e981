// tlm/packet_log.h: packets.csv rows in the order of delivery time, then destination,
// then the destination's own order, whatever order the NICs delivered them in.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "tlm/csv_row.h"
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

// tlm/csv_row.h: every field as printf writes it (%d, %u, %llu, %.Ng), the row's last
// comma a newline; the files written with it are the same bit for bit as with printf.
namespace {

using fabricsim::tlm_fabric::CsvRow;

TEST(CsvRow, FieldsAsPrintfWritesThem) {
  std::mt19937_64 rng(7);
  std::vector<double> values{0.0, -0.0, 1.0, -1.0, 0.1, 1e-300, 4.9e-324, 1.7976931348623157e308, 123456789.0,
                             1234567890123.0, 918.154, 1e21, 1e-5, 0.5, 2.5e-7,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 20000; ++i) {
    values.push_back(std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 150));
    values.push_back(static_cast<double>(rng() % 100000000) / 1000.0);  // times in ns to the ps
  }
  char expected[512];
  for (double v : values)
    for (int precision : {6, 9, 12}) {
      CsvRow row;
      const int i = static_cast<int>(rng());
      const unsigned u = static_cast<unsigned>(rng());
      const auto big = static_cast<unsigned long long>(rng());
      std::snprintf(expected, sizeof expected, "%d,%.*g,%u,%s,%llu\n", i, precision, v, u, "fabric.sw0", big);
      EXPECT_EQ(row.add(i).add(v, precision).add(u).add("fabric.sw0").add(big).line(), std::string(expected))
          << "value " << v << " precision " << precision;
    }
}

TEST(CsvRow, ClearStartsTheNextRowAndTooLongARowThrows) {
  CsvRow row;
  row.add(1).add(2);
  row.clear();
  EXPECT_EQ(row.add(3).line(), "3\n");
  const std::string long_field(300, 'x');
  CsvRow full;
  full.add(long_field);
  EXPECT_THROW(full.add(long_field), std::logic_error);
}

}  // namespace
