// Strict YAML reading with provenance. Every value is read through a
// ConfigMap that knows the file, the line and the dotted key path, so a bad
// value, a wrong unit, a missing key or an unknown key is reported as
//   quickstart.yaml:12:3: switch.ports: must be an integer in 2..256, got '1'
// Values overridden with --set are reported as coming from the command line.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hw/param_spec.h"
#include "hw/units.h"

namespace fabricsim::sim {

/// A configuration error: where it is and what is wrong.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& location, const std::string& key, const std::string& what);
  const std::string& location() const { return location_; }
  const std::string& key() const { return key_; }

 private:
  std::string location_;
  std::string key_;
};

/// Where the document came from and which paths the command line overrode.
struct ConfigSource {
  std::string file;                     ///< path as the user gave it
  /// Dotted paths set by an override -> where it was set: empty for `--set`, else a
  /// location such as a sweep file's `sweep.yaml:9:13` (errors on the key point there).
  std::map<std::string, std::string> overridden;
  /// Nodes merged in from included files, with the file each came from (see load_document).
  std::vector<std::pair<YAML::Node, std::string>> included;
  /// The file `node` was read from: an included file's path, else `file`.
  std::string file_of(const YAML::Node& node) const;
  /// Records every node of `root` (map keys too) as read from `path`. Each node is
  /// visited once: aliases are not expanded (an alias bomb or a self-referencing
  /// alias costs one visit per distinct node).
  void add_nodes(const YAML::Node& root, const std::string& path);
};

/// A configuration document with its `include:` files merged in.
struct ConfigDocument {
  YAML::Node root;
  std::shared_ptr<ConfigSource> source;
};

/// A YAML mapping being read. Each key read is remembered; finish() rejects the rest.
class ConfigMap {
 public:
  ConfigMap(YAML::Node node, std::string path, std::shared_ptr<const ConfigSource> source);

  bool has(const std::string& key) const;
  /// Present with a value (`key:` alone or `key: null` counts as absent).
  bool present(const std::string& key) const;
  /// Sub-map; an absent key reads as an empty map (all defaults).
  ConfigMap map(const std::string& key);
  /// Sequence of maps; absent reads as empty.
  std::vector<ConfigMap> list_of_maps(const std::string& key);

  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max);
  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max);
  double number(const std::string& key, double def, double min, double max);
  bool boolean(const std::string& key, bool def);
  /// List of integers, each in [min, max]; absent reads as `def`.
  std::vector<std::int64_t> integer_list(const std::string& key, const std::vector<std::int64_t>& def,
                                         std::int64_t min, std::int64_t max, std::size_t max_items);
  /// List of two-element lists of names, e.g. [[ep0, sw0], [sw0, sw1]]; absent reads as empty.
  std::vector<std::pair<std::string, std::string>> name_pairs(const std::string& key);
  /// List of sizes such as [2B, 4KiB]; the scalar `all_word` reads as an empty list (caller's "all").
  std::vector<hw::Size> size_list(const std::string& key, hw::Size min, hw::Size max, const std::string& all_word);
  /// List of booleans; absent reads as `def`.
  std::vector<bool> boolean_list(const std::string& key, const std::vector<bool>& def, std::size_t max_items);
  std::string string(const std::string& key, const std::string& def);
  /// One of `allowed`; the error lists them.
  std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed);

  /// The key `spec` declares, checked against its type and bounds (hw/param_spec.h);
  /// absent reads as `def`. A spec of another type is a programming error (std::logic_error).
  /// `max`, when given, is the bound the table leaves to the caller (an endpoint count).
  std::int64_t integer(const hw::ParamSpec& spec, std::int64_t def, std::optional<std::int64_t> max = std::nullopt);
  /// As integer(spec, ...), with no default: absent is an error.
  std::int64_t required_integer(const hw::ParamSpec& spec, std::optional<std::int64_t> max = std::nullopt);
  double number(const hw::ParamSpec& spec, double def);
  bool boolean(const hw::ParamSpec& spec, bool def);
  std::string string(const hw::ParamSpec& spec, const std::string& def);
  /// One of spec.choices.
  std::string choice(const hw::ParamSpec& spec, const std::string& def);
  /// An enum by its name in `names` (which spec.choices lists).
  template <class E>
  E choice(const hw::ParamSpec& spec, E def, const hw::EnumNames<E>& names) {
    return *hw::value_of(names, choice(spec, std::string(hw::name_of(names, def))));
  }
  /// A list of integers each within the spec's bounds (`max` lowered to `max`, when given).
  std::vector<std::int64_t> integer_list(const hw::ParamSpec& spec, const std::vector<std::int64_t>& def,
                                         std::size_t max_items, std::optional<std::int64_t> max = std::nullopt);
  /// A list of sizes within the spec's bounds, or the scalar `all_word` (an empty list: the caller's "all").
  std::vector<hw::Size> size_list(const hw::ParamSpec& spec, const std::string& all_word);
  hw::Size size(const hw::ParamSpec& spec, hw::Size def);
  hw::Time time(const hw::ParamSpec& spec, hw::Time def);
  hw::Bandwidth bandwidth(const hw::ParamSpec& spec, hw::Bandwidth def);
  hw::Length length(const hw::ParamSpec& spec, hw::Length def);
  hw::Frequency frequency(const hw::ParamSpec& spec, hw::Frequency def);

  hw::Bandwidth bandwidth(const std::string& key, hw::Bandwidth def, hw::Bandwidth min, hw::Bandwidth max);
  hw::Time time(const std::string& key, hw::Time def, hw::Time min, hw::Time max);
  hw::Size size(const std::string& key, hw::Size def, hw::Size min, hw::Size max);
  hw::Length length(const std::string& key, hw::Length def, hw::Length min, hw::Length max);
  hw::Frequency frequency(const std::string& key, hw::Frequency def, hw::Frequency min, hw::Frequency max);

  /// The raw node under `key` (marked as read), for values of free shape such as sweep axes.
  YAML::Node node(const std::string& key);
  /// file:line:column of `key`'s value (or of this map), as errors print it.
  std::string location(const std::string& key) const { return location_of(key); }

  /// Throws for the first key never read, listing the allowed keys (and a close match).
  void finish() const;
  /// Error at this map (or at `key` inside it).
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  /// A warning at this map (or at `key` inside it), worded and located as fail() words an error.
  std::string warning(const std::string& key, const std::string& what) const;
  const std::string& path() const { return path_; }

 private:
  std::string child_path(const std::string& key) const;
  std::string location_of(const std::string& key) const;
  /// The --set option that gave `key` (or a part of it), if one did.
  std::optional<std::string> override_origin(const std::string& key) const;
  /// Where an element of the list `key` is: its file position, or the --set option.
  std::string element_where(const std::string& key, const YAML::Node& element) const;
  /// file:line:column of a node, naming the included file it came from.
  std::string where(const YAML::Node& node) const;
  YAML::Node scalar(const std::string& key, const char* expected) const;
  template <class Q>
  Q quantity(const hw::ParamSpec& spec, Q def, hw::ParamType type, Q (ConfigMap::*read)(const std::string&, Q, Q, Q));
  template <class T>
  T unit_value(const std::string& key, T def, T min, T max, T (*parse)(std::string_view), const char* what);

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<const ConfigSource> source_;
  mutable std::set<std::string> used_;
};

/// Parses a YAML file (syntax errors become ConfigError with file and line).
YAML::Node load_yaml_file(const std::string& file);
/// Parses a configuration file and resolves its top-level `include: path` (or list of
/// paths), recursively. Paths are relative to the including file; an included document
/// is merged under the including one (the including file's keys win, maps merge key by
/// key, later list entries win over earlier ones). Errors inside an included file name
/// that file and line; an include cycle is an error.
ConfigDocument load_document(const std::string& file);
/// Same from YAML text; `name` stands in for the file (includes resolve against its folder).
ConfigDocument parse_document(const std::string& yaml, const std::string& name);
/// `s` as a single-quoted YAML scalar, for override values such as paths.
std::string yaml_quoted(const std::string& s);
/// Applies one `a.b.c=value` override to the tree, creating maps as needed; returns the path.
/// Errors name `origin` (e.g. a sweep file's line), or `--set a.b.c=value` when it is empty.
std::string apply_override(YAML::Node& root, const std::string& assignment, const std::string& origin = "");

}  // namespace fabricsim::sim
