// Callback sockets for the fabric protocol. tlm_utils' simple sockets assume
// generic-payload semantics (memory manager, extensions), which Packet does not
// have, so these bind a tagged member-function callback directly: the tag lets
// one module serve a vector of ports (switch port index).
#pragma once

#include <systemc>
#include <tlm>

#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

template <class Owner>
using FabricCallback = tlm::tlm_sync_enum (Owner::*)(int tag, Packet&, tlm::tlm_phase&, sc_core::sc_time&);

/// Receives the forward path (packets); sends the backward path (credits) via ->nb_transport_bw.
template <class Owner>
class FabricTargetSocket : public tlm::tlm_target_socket<kSocketWidth, fabric_protocol_types> {
 public:
  explicit FabricTargetSocket(const char* name = sc_core::sc_gen_unique_name("fabric_target"))
      : tlm::tlm_target_socket<kSocketWidth, fabric_protocol_types>(name), impl_(this) {
    this->bind(impl_);
  }
  /// Calls `owner->*fw(tag, ...)` for every forward-path call.
  void register_fw(Owner* owner, FabricCallback<Owner> fw, int tag = 0) {
    impl_.owner = owner;
    impl_.fw = fw;
    impl_.tag = tag;
  }

 private:
  struct Impl : tlm::tlm_fw_transport_if<fabric_protocol_types> {
    explicit Impl(FabricTargetSocket* s) : socket(s) {}
    tlm::tlm_sync_enum nb_transport_fw(Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& t) override {
      if (!owner) SC_REPORT_FATAL("fabricsim", (std::string(socket->name()) + ": no callback registered").c_str());
      return (owner->*fw)(tag, p, ph, t);
    }
    void b_transport(Packet&, sc_core::sc_time&) override {
      SC_REPORT_FATAL("fabricsim", "the fabric protocol is non-blocking only");
    }
    bool get_direct_mem_ptr(Packet&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(Packet&) override { return 0; }
    FabricTargetSocket* socket;
    Owner* owner = nullptr;
    FabricCallback<Owner> fw = nullptr;
    int tag = 0;
  };
  Impl impl_;
};

/// Sends the forward path via ->nb_transport_fw; receives the backward path (credits).
template <class Owner>
class FabricInitiatorSocket : public tlm::tlm_initiator_socket<kSocketWidth, fabric_protocol_types> {
 public:
  explicit FabricInitiatorSocket(const char* name = sc_core::sc_gen_unique_name("fabric_initiator"))
      : tlm::tlm_initiator_socket<kSocketWidth, fabric_protocol_types>(name), impl_(this) {
    this->bind(impl_);
  }
  /// Calls `owner->*bw(tag, ...)` for every backward-path call.
  void register_bw(Owner* owner, FabricCallback<Owner> bw, int tag = 0) {
    impl_.owner = owner;
    impl_.bw = bw;
    impl_.tag = tag;
  }

 private:
  struct Impl : tlm::tlm_bw_transport_if<fabric_protocol_types> {
    explicit Impl(FabricInitiatorSocket* s) : socket(s) {}
    tlm::tlm_sync_enum nb_transport_bw(Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& t) override {
      if (!owner) SC_REPORT_FATAL("fabricsim", (std::string(socket->name()) + ": no callback registered").c_str());
      return (owner->*bw)(tag, p, ph, t);
    }
    void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}
    FabricInitiatorSocket* socket;
    Owner* owner = nullptr;
    FabricCallback<Owner> bw = nullptr;
    int tag = 0;
  };
  Impl impl_;
};

}  // namespace fabricsim::tlm_fabric
