#include "sim/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fabricsim::sim {

namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

[[noreturn]] void throw_write_error(const std::string& name, int error) {
  throw std::runtime_error("cannot write " + name + ": " + std::strerror(error));
}

int open_for_writing(const std::string& name) {
  const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw_write_error(name, errno);
  return fd;
}

}  // namespace

OutputFile::Buffer::Buffer(int fd) : fd_(fd), bytes_(kBufferBytes) { setp(bytes_.data(), bytes_.data() + bytes_.size()); }

bool OutputFile::Buffer::drain() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno != EINTR) error_ = errno;
    if (n > 0) {
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  setp(bytes_.data(), bytes_.data() + bytes_.size());
  return error_ == 0;
}

OutputFile::Buffer::int_type OutputFile::Buffer::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int OutputFile::Buffer::sync() { return drain() ? 0 : -1; }

OutputFile::OutputFile(const std::filesystem::path& path)
    : std::ostream(nullptr), name_(path.string()), fd_(open_for_writing(name_)), buffer_(fd_) {
  rdbuf(&buffer_);
}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  buffer_.drain();
  ::close(fd_);
}

void OutputFile::close() {
  if (fd_ < 0) return;
  buffer_.drain();
  int error = buffer_.error();
  if (::close(fd_) != 0 && error == 0) error = errno;
  fd_ = -1;
  if (error != 0) throw_write_error(name_, error);
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  OutputFile out(path);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
}

void write_file_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = file.string() + ".tmp";
  {
    OutputFile out(tmp);
    write(out);
    out.close();
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
}

}  // namespace fabricsim::sim
