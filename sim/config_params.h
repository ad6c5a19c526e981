// Every configuration block's key table (hw/param_spec.h) in docs/config.md's order:
// `fabricsim params` lists them and docs/config.md's key tables are generated from them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"

namespace fabricsim::sim {

/// `simulation:` (SimulationParams, sim/config.h).
const hw::ParamBlock& simulation_params();
/// `output:` (OutputParams, sim/config.h).
const hw::ParamBlock& output_params();
/// `chakra:` and `chakra.gpu:` (ChakraWorkload, sim/config.h).
const std::vector<hw::ParamBlock>& chakra_param_blocks();
/// `server:` and `server.scale_up:` (ServerParams, sim/config.h).
const std::vector<hw::ParamBlock>& server_param_blocks();

/// The workload sections, sim/workload_params.cpp: `traffic`, `traffic.message_sizes[i]`,
/// `traffic.flows[i]`, `perftest`, `collective`, `training`.
const std::vector<hw::ParamBlock>& workload_param_blocks();
/// The workload block of `section`; std::logic_error for another (a programming error).
const hw::ParamBlock& workload_params(std::string_view section);

/// The blocks in documentation order.
const std::vector<hw::ParamBlock>& config_param_blocks();

/// `fabricsim params`: every key, one a line.
std::string params_listing();
/// `fabricsim params --markdown`: each block's table between its docs/config.md markers.
std::string params_markdown();

/// `doc` (docs/config.md; docs/regress.md with the suite file's blocks) with the table
/// between each block's markers
///   <!-- params SECTION -->  ...  <!-- end params -->
/// replaced by the generated one. Throws std::runtime_error naming a block whose markers
/// are missing or unclosed.
std::string update_param_tables(const std::string& doc,
                                const std::vector<hw::ParamBlock>& blocks = config_param_blocks());

/// `fabricsim params`: prints the listing or the markdown; with `doc_file`, rewrites that
/// file's key tables instead (update_param_tables). Returns the exit code.
int params_command(bool markdown, const std::string& doc_file);

}  // namespace fabricsim::sim
