// Coverage of the RTL blocks of a fabric run (FABRICSIM_RTL_COVERAGE builds: the registered
// models Verilated with --coverage). Each block instance has its own VerilatedContext and
// so its own coverage points; the primary instance of each block (not lockstep's replay
// copy) enters this process-wide registry under its hierarchy name, and
// write_rtl_coverage() merges them into one verilator_coverage file whose hierarchy field
// (h) names the instance. No Verilator header here: tlm/rtl_verilated.h registers a
// writer of its context's points.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fabricsim::tlm_fabric {

/// One block instance: its hierarchy name, and a writer of its points (a verilator_coverage
/// file at the given path, hierarchy rooted at "TOP") while it lives, their text after.
struct RtlCoverageSource {
  std::string scope;
  std::function<void(const std::string& path)> write;
  std::string text;
};

/// The process's block instances with coverage points (inline: one list shared by
/// fabricsim_tlm and every model library).
inline std::list<RtlCoverageSource>& rtl_coverage_sources() {
  static std::list<RtlCoverageSource> sources;
  return sources;
}

/// The text of the coverage file `write` produces (through a file of the temp folder, as
/// Verilator writes coverage only to a file). Throws std::runtime_error when it cannot.
inline std::string rtl_coverage_text(const std::function<void(const std::string& path)>& write) {
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("fabricsim_rtl_coverage_" + std::to_string(::getpid()) + ".dat");
  write(tmp.string());
  std::ifstream in(tmp);
  std::ostringstream text;
  text << in.rdbuf();
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  if (!in) throw std::runtime_error("cannot read RTL coverage points back from " + tmp.string());
  return text.str();
}

/// Keeps a source's points when its block goes away (the writer's context with it).
inline void rtl_coverage_retire(std::list<RtlCoverageSource>::iterator source) {
  source->text = rtl_coverage_text(source->write);
  source->write = nullptr;
}

/// Whether this build's RTL models carry coverage points (-DFABRICSIM_RTL_COVERAGE=ON).
bool rtl_coverage_built();

/// Writes the points of every block instance of the process, live and gone, into `path`
/// (verilator_coverage format; folders created), each point's hierarchy rooted at its
/// instance's name. Throws std::runtime_error when it cannot be written.
void write_rtl_coverage(const std::string& path);

}  // namespace fabricsim::tlm_fabric
