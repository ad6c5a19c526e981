#include "sim/python_script.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace fabricsim::sim {

namespace fs = std::filesystem;

std::string find_python_script(const std::string& name, std::string& why_not) {
  const fs::path rel = fs::path("scripts") / name;
  std::vector<fs::path> candidates{rel};
#ifdef FABRICSIM_SOURCE_DIR
  candidates.push_back(fs::path(FABRICSIM_SOURCE_DIR) / rel);
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / rel);
  for (const auto& c : candidates)
    if (fs::exists(c, ec)) {
      if (!fs::exists("/usr/bin/python3", ec)) {
        why_not = "/usr/bin/python3 not found (install python3-matplotlib, or run scripts/setup.sh)";
        return "";
      }
      if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
        why_not = "matplotlib is not installed for /usr/bin/python3 (apt-get install python3-matplotlib, or run scripts/setup.sh)";
        return "";
      }
      return c.string();
    }
  why_not = rel.string() + " not found (run from the source tree)";
  return "";
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace fabricsim::sim
