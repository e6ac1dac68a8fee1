// Turns configuration text into a tree of Nodes, expanding `include` in place
// (globs allowed; relative patterns resolve against the main file's folder).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/ast.h"
#include "core/result.h"

namespace torii::config {

class Parser {
 public:
  using Sources = std::vector<std::pair<std::string, std::string>>;

  // `conf_dir` ends with '/'. Every file read is appended to `sources`
  // (may be null), once. With `allow_include` false, `include` is an error: the
  // fuzzer must not wander the file system.
  Parser(std::string conf_dir, Sources* sources, bool allow_include = true)
      : conf_dir_(std::move(conf_dir)), sources_(sources), allow_include_(allow_include) {}

  Result<std::vector<Node>> parse_file(const std::string& path);
  Result<std::vector<Node>> parse_text(const std::string& file, std::string_view text);

 private:
  Result<std::vector<Node>> parse_text_at_depth(const std::string& file, std::string_view text);
  Result<std::vector<Node>> include(const Node& directive);
  void keep_source(const std::string& path, const std::string& text);

  std::string conf_dir_;
  Sources* sources_;
  bool allow_include_;
  int depth_ = 0;
};

// Reads a whole file; errors read `open() "PATH" failed (ERRNO: TEXT)`.
Result<std::string> read_file(const std::string& path);

}  // namespace torii::config
