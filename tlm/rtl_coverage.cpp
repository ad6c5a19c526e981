#include "tlm/rtl_coverage.h"

#include <cstdint>
#include <map>

namespace fabricsim::tlm_fabric {

bool rtl_coverage_built() {
#if FABRICSIM_RTL_COVERAGE
  return true;
#else
  return false;
#endif
}

namespace {

/// Adds the point lines of one instance's file to `points`, the hierarchy field's "TOP"
/// root (the Verilated model's name) replaced by `scope`.
void add_points(const std::string& text, const std::string& scope, std::map<std::string, std::uint64_t>& points) {
  static const std::string kHier = "\001h\002TOP";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // C '<key>' <count>
    const auto close = line.rfind("' ");
    if (line.rfind("C '", 0) != 0 || close == std::string::npos) continue;
    std::string key = line.substr(3, close - 3);
    for (auto at = key.find(kHier); at != std::string::npos; at = key.find(kHier, at + 3 + scope.size()))
      key.replace(at + 3, 3, scope);
    points[key] += std::stoull(line.substr(close + 2));
  }
}

}  // namespace

void write_rtl_coverage(const std::string& path) {
  std::map<std::string, std::uint64_t> points;
  for (const auto& s : rtl_coverage_sources()) add_points(s.write ? rtl_coverage_text(s.write) : s.text, s.scope, points);
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(path);
  out << "# SystemC::Coverage-3\n";
  for (const auto& [key, count] : points) out << "C '" << key << "' " << count << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write the RTL coverage file " + path);
}

}  // namespace fabricsim::tlm_fabric
