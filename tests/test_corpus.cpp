// Configuration corpora run through the `fabricsim` binary, the way a user meets them
// (tests/README.md, tests/corpus/README.md). corpus/bad/NAME.yaml (with --set lines from
// NAME.set) must stop by itself with exit code 2 and one "fabricsim: error: ..." line
// naming the file and containing NAME.expect, without starting a simulation, and
// load_config() must throw the same ConfigError; corpus/pending/ cases are skipped while
// they fail; every examples/*.yaml must pass `fabricsim validate`.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/sanitizer.h"

namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = FABRICSIM_SOURCE_DIR;
const fs::path kBadDir = kSourceDir / "tests/corpus/bad";
const fs::path kPendingDir = kSourceDir / "tests/corpus/pending";
const fs::path kExamplesDir = kSourceDir / "examples";
// A validation error comes back in milliseconds; this only catches hangs (and leaves
// room for a sanitizer build on a busy 2-core machine).
constexpr auto kTimeLimit = std::chrono::seconds(60);
constexpr std::size_t kMinBadCases = 25;
// Memory a run may take: an input that makes the reader expand without bound (alias
// bombs) must fail inside this, not take the machine's memory with it.
constexpr unsigned long kMemoryLimitMiB = 4096;

using fabricsim::test::kAddressSanitizer;

// How one run of the binary ended.
struct Outcome {
  bool timed_out = false;
  int exit_code = -1;  ///< -1 unless it exited
  int signal = 0;      ///< the signal that ended it, 0 if it exited
  std::string output;  ///< stdout and stderr, interleaved
};

// Runs `fabricsim ARGS` in `cwd` with stdout+stderr to a file, killing it after `limit`
// and capping its memory at kMemoryLimitMiB (an address-space limit, or under ASan,
// which reserves terabytes of shadow address space, ASan's own malloc limit).
Outcome run_fabricsim(const std::vector<std::string>& args, const fs::path& cwd, std::chrono::seconds limit) {
  const fs::path log = cwd / "fabricsim_output.txt";
  std::vector<std::string> words{FABRICSIM_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const char* asan_env = std::getenv("ASAN_OPTIONS");
  const std::string asan_options = std::string(asan_env ? asan_env : "") + (asan_env ? ":" : "") +
                                   "malloc_limit_mb=" + std::to_string(kMemoryLimitMiB);
  Outcome r;
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || chdir(cwd.c_str()) != 0) _exit(127);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    if (kAddressSanitizer) {
      setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
    } else {
      const rlimit cap{kMemoryLimitMiB << 20, kMemoryLimitMiB << 20};
      setrlimit(RLIMIT_AS, &cap);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (!r.timed_out && WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  std::ifstream in(log, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// Sorted paths of the files in `dir` ending in `extension`.
std::vector<fs::path> files_in(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == extension) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// GoogleTest names may hold only letters, digits and '_'.
std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// A scratch folder as the working directory of one run, removed afterwards.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = fs::temp_directory_path() / ("fabricsim_corpus_" + tag + "_" + std::to_string(getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Everything that must hold for one malformed configuration; empty when it all does.
std::vector<std::string> corpus_failures(const fs::path& yaml) {
  fs::path expect_file = yaml;
  expect_file.replace_extension(".expect");
  fs::path set_file = yaml;
  set_file.replace_extension(".set");
  const std::vector<std::string> expect = read_lines(expect_file);
  const std::vector<std::string> overrides = fs::exists(set_file) ? read_lines(set_file) : std::vector<std::string>{};
  std::vector<std::string> failures;
  if (expect.empty()) return {"no expected text: " + expect_file.string() + " is missing or empty"};

  std::vector<std::string> args{"run", yaml.string()};
  for (const auto& o : overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  const ScratchDir dir(yaml.stem().string());
  const Outcome r = run_fabricsim(args, dir.path(), kTimeLimit);
  if (r.timed_out) failures.push_back("hang: still running after " + std::to_string(kTimeLimit.count()) + " s");
  if (r.signal != 0) failures.push_back("crash: killed by signal " + std::to_string(r.signal));
  if (!r.timed_out && r.signal == 0 && r.exit_code != 2)
    failures.push_back("exit code " + std::to_string(r.exit_code) + ", expected 2 (configuration error)");
  if (r.output.rfind("fabricsim: error: ", 0) != 0)
    failures.push_back("output does not start with 'fabricsim: error: '");
  if (std::count(r.output.begin(), r.output.end(), '\n') != 1) failures.push_back("error is not exactly one line");
  const bool in_override = expect.front().rfind("--set ", 0) == 0;
  if (!in_override && r.output.find(yaml.filename().string()) == std::string::npos)
    failures.push_back("error does not name the file " + yaml.filename().string());
  for (const auto& e : expect)
    if (r.output.find(e) == std::string::npos) failures.push_back("error lacks the expected text: " + e);
  if (fs::exists(dir.path() / "results")) failures.push_back("a results folder was written: the run was not refused");
  if (!failures.empty()) failures.push_back("output was: " + r.output);

  // The library entry point must agree, with a ConfigError and not another exception.
  // Only asked when the binary stopped cleanly: an input that crashes or exhausts the
  // binary would take this test process down with it.
  if (r.timed_out || r.signal != 0 || r.exit_code != 2) return failures;
  try {
    fabricsim::sim::load_config(yaml.string(), overrides);
    failures.push_back("load_config() accepted the file");
  } catch (const fabricsim::sim::ConfigError& e) {
    for (const auto& x : expect)
      if (std::string(e.what()).find(x) == std::string::npos)
        failures.push_back(std::string("load_config() error lacks the expected text: ") + x + "; got: " + e.what());
  } catch (const std::exception& e) {
    failures.push_back(std::string("load_config() threw a non-ConfigError: ") + e.what());
  }
  return failures;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

class BadConfig : public ::testing::TestWithParam<fs::path> {};

TEST_P(BadConfig, IsOneClearErrorWithExitCode2) {
  const auto failures = corpus_failures(GetParam());
  EXPECT_TRUE(failures.empty()) << GetParam().filename().string() << ":\n" << joined(failures);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadConfig, ::testing::ValuesIn(files_in(kBadDir, ".yaml")), test_name);

class PendingConfig : public ::testing::TestWithParam<fs::path> {};

TEST_P(PendingConfig, StillMisbehaves) {
  const auto failures = corpus_failures(GetParam());
  if (!failures.empty()) GTEST_SKIP() << "known bug (tests/corpus/README.md):\n" << joined(failures);
  FAIL() << GetParam().filename().string() << " now gives the expected error: move it and its .expect to tests/corpus/bad/";
}

INSTANTIATE_TEST_SUITE_P(Corpus, PendingConfig, ::testing::ValuesIn(files_in(kPendingDir, ".yaml")), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PendingConfig);

// The corpus itself: big enough, and every case has its expectation.
TEST(CorpusLayout, EveryBadConfigHasAnExpectation) {
  const auto yamls = files_in(kBadDir, ".yaml");
  EXPECT_GE(yamls.size(), kMinBadCases);
  for (const auto& dir : {kBadDir, kPendingDir}) {
    if (!fs::exists(dir)) continue;  // pending/ goes away once every known bug is fixed
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_directory()) continue;  // files the cases include (include/), not cases
      const auto ext = e.path().extension();
      EXPECT_TRUE(ext == ".yaml" || ext == ".expect" || ext == ".set") << "stray file " << e.path();
      fs::path yaml = e.path();
      yaml.replace_extension(".yaml");
      EXPECT_TRUE(fs::exists(yaml)) << e.path() << " has no " << yaml.filename();
      if (ext == ".yaml") {
        fs::path expect = e.path();
        expect.replace_extension(".expect");
        EXPECT_FALSE(read_lines(expect).empty()) << e.path() << " has no (or an empty) " << expect.filename();
      }
    }
  }
}

class Example : public ::testing::TestWithParam<fs::path> {};

TEST_P(Example, Validates) {
  const ScratchDir dir("example_" + GetParam().stem().string());
  const Outcome r = run_fabricsim({"validate", GetParam().string()}, dir.path(), kTimeLimit);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, GetParam().string() + ": valid\n");
}

INSTANTIATE_TEST_SUITE_P(Corpus, Example, ::testing::ValuesIn(files_in(kExamplesDir, ".yaml")), test_name);

TEST(CorpusLayout, ThereAreExamples) { EXPECT_FALSE(files_in(kExamplesDir, ".yaml").empty()); }

}  // namespace
