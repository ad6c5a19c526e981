// The Python helpers of scripts/ (plots, the HTML report) run with Debian's
// /usr/bin/python3 and its matplotlib (python3-matplotlib).
#pragma once

#include <string>

namespace fabricsim::sim {

/// Path of scripts/NAME (from the working folder, the source tree, or next to the build
/// folder) when /usr/bin/python3 can import matplotlib; else empty, with the reason in
/// `why_not` (what to install).
std::string find_python_script(const std::string& name, std::string& why_not);

/// Shell-quoted for std::system.
std::string shell_quoted(const std::string& s);

}  // namespace fabricsim::sim
