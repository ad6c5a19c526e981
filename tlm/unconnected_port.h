// Terminates a switch port that has no cable, or stands for the far end of a
// cable whose switch another process makes (every call over that cable crosses
// processes as bytes): binds both sockets so the module elaborates; any packet
// reaching it is an error.
#pragma once

#include <stdexcept>
#include <string>

#include <systemc>
#include <tlm>

#include "tlm/fabric_protocol.h"
#include "tlm/fabric_socket.h"

namespace fabricsim::tlm_fabric {

class UnconnectedPort : public sc_core::sc_module {
 public:
  FabricTargetSocket<UnconnectedPort> from_egress;
  FabricInitiatorSocket<UnconnectedPort> to_ingress;

  explicit UnconnectedPort(sc_core::sc_module_name name)
      : sc_module(name), from_egress("from_egress"), to_ingress("to_ingress") {
    from_egress.register_fw(this, &UnconnectedPort::reject);
    to_ingress.register_bw(this, &UnconnectedPort::reject);
  }

 private:
  tlm::tlm_sync_enum reject(int, Packet& p, tlm::tlm_phase&, sc_core::sc_time&) {
    throw std::logic_error(std::string(name()) + ": packet " + std::to_string(p.id) +
                           " sent to a port with no cable");
  }
};

}  // namespace fabricsim::tlm_fabric
