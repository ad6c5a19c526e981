// One row of a CSV file the model writes (packets.csv, qps.csv, qp_rates.csv,
// occupancy.csv), built with std::to_chars: an integer as printf's %d or %u, a double as
// printf's %.Ng (to_chars with chars_format::general and a precision is specified as
// printf's %.*g in the C locale), without printf's format parsing and locale, which cost
// a large all-to-all's qps.csv (8.4 million rows) about a sixth of its start.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <type_traits>

namespace fabricsim::tlm_fabric {

class CsvRow {
 public:
  /// An integer field.
  template <class Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
  CsvRow& add(Int v) {
    return put(std::to_chars(next(), end(), v));
  }
  /// A double field to `precision` significant digits (printf's %.<precision>g).
  CsvRow& add(double v, int precision) {
    return put(std::to_chars(next(), end(), v, std::chars_format::general, precision));
  }
  /// A text field, as it is (no quoting: the model's names have no commas).
  CsvRow& add(std::string_view s) {
    if (s.size() > static_cast<std::size_t>(end() - next())) overflow();
    std::memcpy(next(), s.data(), s.size());
    return put({next() + s.size(), std::errc{}});
  }
  /// The row with its newline, from the first field on.
  std::string_view line() {
    if (size_ > 0) buf_[size_ - 1] = '\n';  // the last field's comma
    return {buf_.data(), size_};
  }
  /// Empties the row for the next one.
  void clear() { size_ = 0; }

 private:
  char* next() { return buf_.data() + size_; }
  char* end() { return buf_.data() + buf_.size() - 1; }  // room for the comma after the field
  CsvRow& put(std::to_chars_result r) {
    if (r.ec != std::errc{}) overflow();
    *r.ptr = ',';
    size_ = static_cast<std::size_t>(r.ptr - buf_.data()) + 1;
    return *this;
  }
  [[noreturn]] static void overflow() { throw std::logic_error("CSV row longer than 512 characters"); }
  std::array<char, 512> buf_;
  std::size_t size_ = 0;
};

}  // namespace fabricsim::tlm_fabric
