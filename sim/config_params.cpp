#include "sim/config_params.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "sim/config_reader.h"
#include "tlm/link.h"
#include "tlm/switch_params.h"

namespace fabricsim::sim {

namespace {

std::string begin_marker(const hw::ParamBlock& b) { return "<!-- params " + b.section + " -->\n"; }
const std::string kEndMarker = "<!-- end params -->";

}  // namespace

const std::vector<hw::ParamBlock>& config_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks = [] {
    std::vector<hw::ParamBlock> all{tlm_fabric::link_params()};
    for (const auto* group : {&tlm_fabric::switch_param_blocks()}) all.insert(all.end(), group->begin(), group->end());
    return all;
  }();
  return blocks;
}

std::string params_listing() {
  std::string out;
  for (const auto& b : config_param_blocks()) out += "# " + b.section + ": " + b.title + "\n" + hw::listing(b) + "\n";
  return out;
}

std::string params_markdown() {
  std::string out;
  for (const auto& b : config_param_blocks()) out += begin_marker(b) + hw::markdown_table(b) + kEndMarker + "\n\n";
  return out;
}

std::string update_param_tables(const std::string& doc) {
  std::string out = doc;
  for (const auto& b : config_param_blocks()) {
    const std::string begin = begin_marker(b);
    const auto start = out.find(begin);
    if (start == std::string::npos)
      throw std::runtime_error("docs/config.md has no table for " + b.section + ": add the lines '" +
                               begin.substr(0, begin.size() - 1) + "' and '" + kEndMarker + "' where it belongs");
    const auto body = start + begin.size();
    const auto end = out.find(kEndMarker, body);
    if (end == std::string::npos) throw std::runtime_error("the table of " + b.section + " has no '" + kEndMarker + "' line");
    out.replace(body, end - body, hw::markdown_table(b));
  }
  return out;
}

int params_command(bool markdown, const std::string& doc_file) {
  if (doc_file.empty()) {
    std::cout << (markdown ? params_markdown() : params_listing());
    return 0;
  }
  std::ifstream in(doc_file);
  if (!in) throw ConfigError(doc_file, "", "cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  std::string updated;
  try {
    updated = update_param_tables(text.str());
  } catch (const std::runtime_error& e) {
    throw ConfigError(doc_file, "", e.what());
  }
  if (updated != text.str()) std::ofstream(doc_file) << updated;
  std::cout << doc_file << (updated == text.str() ? ": key tables up to date\n" : ": key tables updated\n");
  return 0;
}

}  // namespace fabricsim::sim
