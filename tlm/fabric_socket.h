// Callback sockets for the fabric protocol. tlm_utils' simple sockets assume
// generic-payload semantics (memory manager, extensions), which Packet does not
// have, so these bind a tagged member-function callback directly: the tag lets
// one module serve a vector of ports (switch port index).
#pragma once

#include <cstring>

#include <systemc>
#include <tlm>

#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

template <class Owner>
using FabricCallback = tlm::tlm_sync_enum (Owner::*)(int tag, Packet&, tlm::tlm_phase&, sc_core::sc_time&);

/// A call into the block at the other end of a bound socket, resolved once (end of
/// elaboration): the receiving block's callback and port tag, called directly. Through
/// the socket, each call first read the socket's interface object, a cache line of its
/// own: at 2,048 NICs a miss per call and several calls per packet. Where the other end
/// is not a fabric socket (or has no callback yet) the call goes through its interface.
class FabricCall {
 public:
  /// Calls `owner->*fn(tag, ...)`.
  template <class Owner>
  static FabricCall to(Owner* owner, FabricCallback<Owner> fn, int tag) {
    static_assert(sizeof fn <= sizeof fn_, "member function pointer larger than expected");
    FabricCall c;
    c.target_ = owner;
    c.tag_ = tag;
    std::memcpy(c.fn_, &fn, sizeof fn);
    c.thunk_ = [](const FabricCall& self, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& t) {
      FabricCallback<Owner> f;
      std::memcpy(&f, self.fn_, sizeof f);
      return (static_cast<Owner*>(self.target_)->*f)(self.tag_, p, ph, t);
    };
    return c;
  }
  /// The path into `other`, a forward (receiver) or backward (transmitter) interface:
  /// its callback directly where it is a fabric socket's, else through the interface.
  template <class If>
  static FabricCall to_other_end(If* other);

  explicit operator bool() const { return thunk_ != nullptr; }
  tlm::tlm_sync_enum operator()(Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& t) const {
    return thunk_(*this, p, ph, t);
  }

 private:
  using Thunk = tlm::tlm_sync_enum (*)(const FabricCall&, Packet&, tlm::tlm_phase&, sc_core::sc_time&);
  static tlm::tlm_sync_enum transport(tlm::tlm_fw_transport_if<fabric_protocol_types>* i, Packet& p,
                                      tlm::tlm_phase& ph, sc_core::sc_time& t) {
    return i->nb_transport_fw(p, ph, t);
  }
  static tlm::tlm_sync_enum transport(tlm::tlm_bw_transport_if<fabric_protocol_types>* i, Packet& p,
                                      tlm::tlm_phase& ph, sc_core::sc_time& t) {
    return i->nb_transport_bw(p, ph, t);
  }
  Thunk thunk_ = nullptr;
  void* target_ = nullptr;  // the owner, or the interface called through
  int tag_ = 0;
  alignas(void*) unsigned char fn_[2 * sizeof(void*)] = {};  // the owner's FabricCallback
};

/// What a fabric socket's interface object gives for FabricCall: its registered
/// callback (false while none is registered).
class FabricCallSource {
 public:
  virtual FabricCall direct() const = 0;

 protected:
  ~FabricCallSource() = default;
};

template <class If>
FabricCall FabricCall::to_other_end(If* other) {
  if (const auto* source = dynamic_cast<const FabricCallSource*>(other))
    if (FabricCall c = source->direct()) return c;
  FabricCall c;
  c.target_ = other;
  c.thunk_ = [](const FabricCall& self, Packet& p, tlm::tlm_phase& ph, sc_core::sc_time& t) {
    return transport(static_cast<If*>(self.target_), p, ph, t);
  };
  return c;
}

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
  struct Impl : tlm::tlm_fw_transport_if<fabric_protocol_types>, FabricCallSource {
    explicit Impl(FabricTargetSocket* s) : socket(s) {}
    FabricCall direct() const override { return owner ? FabricCall::to(owner, fw, tag) : FabricCall{}; }
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
  struct Impl : tlm::tlm_bw_transport_if<fabric_protocol_types>, FabricCallSource {
    explicit Impl(FabricInitiatorSocket* s) : socket(s) {}
    FabricCall direct() const override { return owner ? FabricCall::to(owner, bw, tag) : FabricCall{}; }
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
