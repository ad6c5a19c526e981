// libFuzzer target for the configuration reader (scripts/fuzz.sh). Any bytes must
// either load or be refused with a sim::ConfigError located in the file (or in the
// --set that caused it); any other exception, a crash, a sanitizer report, a time-out
// (-timeout) or runaway memory (-rss_limit_mb) is a finding. Findings become cases
// in tests/corpus/bad/.
//
// Leading lines "#set path=value" (YAML comments, so the document reads the same) are
// also applied as --set overrides, which fuzzes sim::apply_override on the same input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/config_reader.h"

// libsystemc.so refers to sc_main; the reader never starts the kernel.
int sc_main(int, char*[]) { return 0; }

namespace {

// The "#set " lines at the start of `text`.
std::vector<std::string> overrides_in(const std::string& text) {
  const std::string tag = "#set ";
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (text.compare(pos, tag.size(), tag) == 0) {
    const std::size_t end = text.find('\n', pos);
    out.push_back(text.substr(pos + tag.size(), end == std::string::npos ? std::string::npos : end - pos - tag.size()));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string name = "fuzz.yaml";
  const std::vector<std::string> overrides = overrides_in(text);
  try {
    fabricsim::sim::load_config_text(text, name, overrides);
  } catch (const fabricsim::sim::ConfigError& e) {
    // Every error names where it is: the file, or the --set it came from.
    const std::string what = e.what();
    if (what.rfind(name, 0) != 0 && (overrides.empty() || what.rfind("--set", 0) != 0))
      finding("ConfigError without a location", what);
  } catch (const std::exception& e) {
    finding("not a ConfigError", e.what());
  } catch (...) {
    finding("not a ConfigError", "a non-standard exception");
  }
  return 0;
}
