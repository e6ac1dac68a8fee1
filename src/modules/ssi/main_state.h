// What the SSI filters of one client request and of all its includes share
// (nginx keeps it in the main request's context): the variables `set` and
// regex captures made, the blocks `block` defined, and how many
// subrequests the page has made so far.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace torii::ssi {

struct MainState {
  std::vector<std::pair<std::string, std::string>> variables;  // lower-case names
  struct Block {
    std::string name;
    std::string content;
  };
  std::vector<Block> blocks;
  std::vector<std::string> captures;  // $0..$9 of the last regex that matched
  int subrequests = 0;

  std::string* variable(std::string_view name) {
    for (auto& [n, v] : variables)
      if (n == name) return &v;
    return nullptr;
  }
  void set(std::string_view name, std::string value) {
    if (std::string* v = variable(name)) {
      *v = std::move(value);
      return;
    }
    variables.emplace_back(std::string(name), std::move(value));
  }
};

}  // namespace torii::ssi
