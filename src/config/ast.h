// The syntax tree of a configuration: directives with their arguments and,
// for blocks, their children. Every node knows where it was written so later
// errors can say "FILE:LINE". Includes are already spliced in.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace torii::config {

struct Node {
  std::string name;
  std::vector<std::string> args;
  std::shared_ptr<const std::string> file;  // shared: thousands of nodes, few files
  int line = 0;
  bool block = false;
  std::vector<Node> children;

  // "FILE:LINE: " for error messages.
  std::string where() const { return (file ? *file : std::string("?")) + ":" + std::to_string(line) + ": "; }
};

}  // namespace torii::config
