// Output files whose failures say why: a full disk, a read-only or missing folder, a
// folder where the file goes are reported as
//   cannot write results/qps.csv: No space left on device
// with the OS reason of the call that failed (open, write or close), not as a short file.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace fabricsim::sim {

/// A file written through a buffer straight to its descriptor. The first failure is kept
/// with its errno; close() throws it. Every results file (results.json, the CSVs, the
/// compare and sweep tables) goes through this class.
class OutputFile : public std::ostream {
 public:
  /// Creates or truncates `path`; throws std::runtime_error when it cannot be opened.
  explicit OutputFile(const std::filesystem::path& path);
  /// Writes what is buffered and closes, without throwing: call close() to learn of failures.
  ~OutputFile() override;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Writes what is buffered and closes; throws "cannot write FILE: REASON" if any write
  /// or the close failed (a full disk may only show at the last write, or at close).
  void close();
  const std::string& name() const { return name_; }

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(int fd);
    int error() const { return error_; }
    /// Writes the buffered bytes; false (and error() set) on failure.
    bool drain();

   protected:
    int_type overflow(int_type c) override;
    int sync() override;

   private:
    int fd_;
    int error_ = 0;
    std::vector<char> bytes_;
  };

  std::string name_;
  int fd_ = -1;
  Buffer buffer_;
};

/// Writes `text` to `path` through an OutputFile (throws with the file and the OS reason).
void write_file(const std::filesystem::path& path, const std::string& text);

/// Writes `file` through `file.tmp` and a rename: a reader (a resumed sweep, a report)
/// finds the earlier file or the whole new one, never a part. Throws with the file and
/// the OS reason if it cannot.
void write_file_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write);

}  // namespace fabricsim::sim
