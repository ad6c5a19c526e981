// The switch's configuration keys (hw/param_spec.h): one table per YAML section
// under `switch:`, and the names of the switch's enums.
#pragma once

#include "hw/param_spec.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

/// `switch:` and its sections: pipeline, vl_arbitration (and its entries), tc_scheduler,
/// pfc, ecn, wred, in documentation order.
const std::vector<hw::ParamBlock>& switch_param_blocks();
/// One of them by section ("switch", "switch.pfc", ...).
const hw::ParamBlock& switch_params(std::string_view section = "switch");

const hw::EnumNames<ForwardingMode>& forwarding_mode_names();
const hw::EnumNames<BufferOrganisation>& buffer_organisation_names();
const hw::EnumNames<EgressSchedulerKind>& egress_scheduler_names();

}  // namespace fabricsim::tlm_fabric
