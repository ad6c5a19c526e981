// Runs the `fabricsim` binary for CLI tests.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fabricsim::testing {

/// Runs `fabricsim ARGS` and captures stdout+stderr and the exit code.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
inline CommandResult run_command(const std::string& args) {
  CommandResult r;
  const std::string cmd = std::string(FABRICSIM_BINARY) + " " + args + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) r.output.append(buf, n);
  const int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace fabricsim::testing
