// ssl_password_file: the passphrases of encrypted certificate keys, one a
// line, tried in order for every key (nginx's ssl module). Read when the
// directive is, as nginx does, so a reload rereads it.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "config/directives.h"
#include "config/ssl_config.h"
#include "config/ssl_directive_args.h"

namespace torii::config {

namespace {

constexpr uint16_t kHS = kHttp | kServer;

// Lines end with LF or CRLF; empty lines are skipped. A file with no line
// at all gives one empty password, as nginx's.
std::vector<std::string> split_passwords(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.push_back(std::move(line));
    start = end + 1;
  }
  if (out.empty()) out.emplace_back();
  return out;
}

}  // namespace

Result<std::shared_ptr<const std::vector<std::string>>> read_password_file(Compiler& c, const Node& n) {
  const std::string& p = n.args[0];
  if (p.find('$') != std::string::npos) return node_error(n, "variables in \"" + n.name + "\" are not supported");
  // Like nginx, relative to the main config file's directory.
  const std::string& conf = c.cfg().conf_file;
  size_t slash = conf.rfind('/');
  const std::string path = p.empty() || p[0] == '/' || slash == std::string::npos ? c.full_path(p)
                                                                                   : conf.substr(0, slash + 1) + p;
  std::ifstream in(path, std::ios::binary);
  if (!in) return node_error(n, "open() \"" + path + "\" failed (" + std::to_string(errno) + ": " + strerror(errno) + ")");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::make_shared<const std::vector<std::string>>(split_passwords(text));
}

namespace {

Status set_password_file(Compiler& c, Scope& s, const Node& n) {
  auto passwords = read_password_file(c, n);
  if (!passwords) return Error{passwords.error()};
  writable_ssl(s, n).passwords = std::move(*passwords);
  return Ok{};
}

constexpr DirectiveSpec kPasswordDirectives[] = {
    {"ssl_password_file", kHS, kArgs1, true, false, kMain, &set_password_file},
};

}  // namespace

std::span<const DirectiveSpec> ssl_password_directives() { return kPasswordDirectives; }

}  // namespace torii::config
