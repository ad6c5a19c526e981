#include "tlm/rtl_block.h"

#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace fabricsim::tlm_fabric {

std::deque<RtlModel>& rtl_model_table(const std::string& kind) {
  static std::map<std::string, std::deque<RtlModel>, std::less<>> tables;
  const auto [it, added] = tables.try_emplace(kind);
#if FABRICSIM_RTL
  if (added)
    for (auto& m : builtin_rtl_models())
      if (m.info.kind == kind) it->second.push_back(std::move(m));
#endif
  return it->second;
}

const RtlModel* find_rtl_model(const std::string& kind, std::string_view name, const std::vector<int>& sizes) {
  for (const auto& e : rtl_model_table(kind))
    if (e.info.name == name && e.info.sizes == sizes) return &e;
  return nullptr;
}

void add_rtl_models_of(const std::string& kind, const std::vector<RtlModel>& models) {
  for (RtlModel m : models) {
    if (m.info.kind != kind) continue;
    if (find_rtl_model(kind, m.info.name, m.info.sizes)) {
      std::string sizes;
      for (int v : m.info.sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(v);
      throw std::logic_error("RTL " + kind + " " + m.info.name + " (sizes " + sizes + ") is registered already");
    }
    m.info.test_only = true;
    rtl_model_table(kind).push_back(std::move(m));
  }
}

}  // namespace fabricsim::tlm_fabric
