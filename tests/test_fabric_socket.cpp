// FabricCall (tlm/fabric_socket.h): a call resolved once bound reaches the receiving
// block's callback with its port tag, directly where the other end is a fabric socket and
// through its interface otherwise. TxPort (tlm/tx_port.h): a packet's credit blocks are
// its link's frame in blocks.
#include <gtest/gtest.h>
#include <systemc>
#include <tlm>

#include "sim/child_run.h"
#include "tlm/fabric_socket.h"
#include "tlm/link.h"
#include "tlm/tx_port.h"

namespace {

using fabricsim::tlm_fabric::FabricCall;
using fabricsim::tlm_fabric::FabricInitiatorSocket;
using fabricsim::tlm_fabric::FabricTargetSocket;
using fabricsim::tlm_fabric::Packet;
using fabricsim::tlm_fabric::fabric_protocol_types;
using nlohmann::json;

struct Block : sc_core::sc_module {
  FabricTargetSocket<Block> in{"in"};
  FabricInitiatorSocket<Block> out{"out"};
  json calls = json::array();
  explicit Block(sc_core::sc_module_name name) : sc_module(name) {
    in.register_fw(this, &Block::forward, 7);
    out.register_bw(this, &Block::backward, 9);
  }
  tlm::tlm_sync_enum forward(int tag, Packet& p, tlm::tlm_phase&, sc_core::sc_time& t) {
    calls.push_back({"fw", tag, p.id, t.value()});
    t += sc_core::sc_time(1, sc_core::SC_NS);
    return tlm::TLM_UPDATED;
  }
  tlm::tlm_sync_enum backward(int tag, Packet& p, tlm::tlm_phase&, sc_core::sc_time&) {
    calls.push_back({"bw", tag, p.id});
    return tlm::TLM_ACCEPTED;
  }
};

// Not a fabric socket: an interface FabricCall can only call through.
struct PlainTarget : tlm::tlm_fw_transport_if<fabric_protocol_types> {
  int calls = 0;
  tlm::tlm_sync_enum nb_transport_fw(Packet&, tlm::tlm_phase&, sc_core::sc_time&) override {
    ++calls;
    return tlm::TLM_COMPLETED;
  }
  void b_transport(Packet&, sc_core::sc_time&) override {}
  bool get_direct_mem_ptr(Packet&, tlm::tlm_dmi&) override { return false; }
  unsigned int transport_dbg(Packet&) override { return 0; }
};

TEST(FabricCall, ReachesTheCallbackDirectlyOrThroughTheInterface) {
  const json r = fabricsim::sim::in_child([] {
    Block block("block");
    Packet p;
    p.id = 42;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time t(5, sc_core::SC_NS);
    const FabricCall fw = FabricCall::to_other_end(&block.in.get_base_interface());
    const auto fw_status = fw(p, phase, t);
    const FabricCall bw = FabricCall::to_other_end(&block.out.get_base_interface());
    bw(p, phase, t);
    PlainTarget plain;
    const FabricCall through = FabricCall::to_other_end(&plain);
    const auto through_status = through(p, phase, t);
    json out = {{"calls", block.calls}, {"fw_status", static_cast<int>(fw_status)}, {"t_ps", t.value()},
                {"plain_calls", plain.calls}, {"through_status", static_cast<int>(through_status)}};
    return out;
  });
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r.at("calls"), json::parse(R"([["fw", 7, 42, 5000], ["bw", 9, 42]])"));
  EXPECT_EQ(r.at("fw_status"), static_cast<int>(tlm::TLM_UPDATED));
  EXPECT_EQ(r.at("t_ps"), 6000u);  // the callback's update of the delay reaches the caller
  EXPECT_EQ(r.at("plain_calls"), 1);
  EXPECT_EQ(r.at("through_status"), static_cast<int>(tlm::TLM_COMPLETED));
}

// A transmit port counts a packet's credit blocks from the framing it keeps (a switch asks
// for every new head, where the link's own line is cold): the link's frame of the payload
// in blocks, for every framing (the least frame included) and block size.
TEST(TxPort, CreditBlocksAreTheLinksFrameInBlocks) {
  const json r = fabricsim::sim::in_child([] {
    json mismatches = json::array();
    for (const auto framing : {fabricsim::hw::Framing::infiniband, fabricsim::hw::Framing::roce_v2,
                               fabricsim::hw::Framing::ethernet}) {
      fabricsim::tlm_fabric::LinkParams params;
      params.phy.framing = framing;
      const fabricsim::tlm_fabric::Link link(("link" + std::to_string(static_cast<int>(framing))).c_str(), params);
      for (const std::uint32_t block : {1u, 64u, 100u}) {
        fabricsim::tlm_fabric::TxPort port;
        port.attach(nullptr, &link, 1, block, std::uint64_t{1} << 20, "port");
        for (std::uint32_t payload = 0; payload <= 9000; ++payload) {
          const std::uint64_t expected = (link.frame(payload).bytes + block - 1) / block;
          if (port.credit_blocks(payload) != expected) mismatches.push_back({static_cast<int>(framing), block, payload});
        }
      }
    }
    return json{{"mismatches", mismatches}};
  });
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_TRUE(r["mismatches"].empty()) << r["mismatches"].dump();
}

}  // namespace
