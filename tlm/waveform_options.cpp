#include "tlm/waveform_options.h"

#include <fnmatch.h>

namespace fabricsim::tlm_fabric {

const hw::EnumNames<WaveformFormat>& waveform_format_names() {
  static const hw::EnumNames<WaveformFormat> names{{WaveformFormat::fst, "fst"}, {WaveformFormat::vcd, "vcd"}};
  return names;
}

bool WaveformOptions::wants(std::string_view hierarchy_name, std::string_view model_name) const {
  if (scopes.empty()) return true;
  const std::string name(hierarchy_name);
  for (const auto& s : scopes)
    if (s == model_name || fnmatch(s.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

std::vector<std::string> unmatched_scopes(const WaveformOptions& options, const std::vector<RtlBlockName>& blocks) {
  std::vector<std::string> out;
  for (const auto& s : options.scopes) {
    WaveformOptions one;
    one.scopes = {s};
    bool hit = false;
    for (const auto& b : blocks) hit = hit || one.wants(b.hierarchy, b.model);
    if (!hit) out.push_back(s);
  }
  return out;
}

}  // namespace fabricsim::tlm_fabric
