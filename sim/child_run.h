// Runs one simulation in a forked child and returns its results.json content.
// SystemC elaborates once per process, so every run of a sweep (and every
// end-to-end test) gets its own process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config.h"
#include "sim/fabric.h"

namespace fabricsim::sim {

/// Runs `body` in a forked child (a fresh SystemC kernel) and returns the JSON it
/// produced; an exception becomes {"error": what}, a crash {"error": "... crashed"}.
inline nlohmann::json in_child(const std::function<nlohmann::json()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {{"error", "pipe failed"}};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out = body().dump();
    } catch (const std::exception& e) {
      out = nlohmann::json{{"error", e.what()}}.dump();
    }
    std::size_t off = 0;
    while (off < out.size()) {
      const ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) in.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.empty())
    return {{"error", "child process crashed (status " + std::to_string(status) + ")"}};
  return nlohmann::json::parse(in);
}

/// One fabric simulation in a child process: its results.json content.
inline nlohmann::json run_in_child(const FabricConfig& config) {
  return in_child([&] { return run_simulation(config); });
}

}  // namespace fabricsim::sim
