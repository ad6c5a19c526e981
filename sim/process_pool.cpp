#include "sim/process_pool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace fabricsim::sim {

void run_process_pool(std::size_t count, int parallel, const std::function<int(std::size_t)>& child,
                      const std::function<void(std::size_t, int, double)>& done) {
  using clock = std::chrono::steady_clock;
  struct Running {
    std::size_t job;
    clock::time_point start;
  };
  std::map<pid_t, Running> running;
  std::size_t next = 0, finished = 0;
  if (parallel < 1) parallel = 1;
  while (finished < count) {
    while (next < count && static_cast<int>(running.size()) < parallel) {
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        int code = 1;
        try {
          code = child(next);
        } catch (...) {
          code = 1;
        }
        std::fflush(nullptr);
        _exit(code);
      }
      running[pid] = {next, clock::now()};
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("waitpid failed");
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const Running r = it->second;
    running.erase(it);
    ++finished;
    done(r.job, status, std::chrono::duration<double>(clock::now() - r.start).count());
  }
}

bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace fabricsim::sim
