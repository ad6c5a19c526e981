// libFuzzer target for the configuration reader (scripts/fuzz.sh). Any bytes must
// either load or be refused with a sim::ConfigError whose location names the file;
// any other exception, a crash, a sanitizer report, a time-out (-timeout) or runaway
// memory (-rss_limit_mb) is a finding. Findings become cases in tests/corpus/bad/.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/config.h"
#include "sim/config_reader.h"

// libsystemc.so refers to sc_main; the reader never starts the kernel.
int sc_main(int, char*[]) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string name = "fuzz.yaml";
  try {
    fabricsim::sim::load_config_text(text, name, {});
  } catch (const fabricsim::sim::ConfigError& e) {
    // Without --set every error is located in the file: "fuzz.yaml[:line:col]: ...".
    if (std::string(e.what()).rfind(name, 0) != 0) {
      std::fprintf(stderr, "fuzz_config: ConfigError not located in %s: %s\n", name.c_str(), e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_config: not a ConfigError: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz_config: a non-standard exception\n");
    std::abort();
  }
  return 0;
}
