#include "config/parser.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/lexer.h"
#include "config/nginx_directives.h"

namespace torii::config {

namespace {

// Deeper than any sane tree of includes; stops "a includes a" loops.
constexpr int kMaxIncludeDepth = 32;
// Config files are small; this bounds what a mistaken include can pull in.
constexpr off_t kMaxFileSize = 64 << 20;

std::string errno_text(int err) { return std::to_string(err) + ": " + std::strerror(err); }

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// Reads the token stream of one file into nodes. A small explicit state
// machine: a directive collects words until ';' or '{'.
class TreeBuilder {
 public:
  TreeBuilder(std::shared_ptr<const std::string> file, std::string_view text)
      : file_(std::move(file)), lexer_(*file_, text) {}

  Result<std::vector<Node>> run() {
    std::vector<Node> top;
    auto st = block(top, /*nested=*/false);
    if (!st) return Error{st.error()};
    return top;
  }

 private:
  Error error(int line, const std::string& msg) {
    return make_error(*file_ + ":" + std::to_string(line) + ": " + msg);
  }

  Status block(std::vector<Node>& out, bool nested) {
    if (++depth_ > 200) return error(lexer_.line(), "too deeply nested blocks");
    for (;;) {
      auto tok = lexer_.next();
      if (!tok) return Error{tok.error()};
      Token& t = *tok;
      switch (t.kind) {
        case Token::Kind::eof:
          if (nested) return error(t.line, "unexpected end of file, expecting \";\" or \"}\"");
          --depth_;
          return Ok{};
        case Token::Kind::close_brace:
          if (!nested) return error(t.line, "unexpected \"}\"");
          --depth_;
          return Ok{};
        case Token::Kind::semicolon:
          return error(t.line, "unexpected \";\"");
        case Token::Kind::open_brace:
          return error(t.line, "unexpected \"{\"");
        case Token::Kind::word: {
          Node n;
          n.name = std::move(t.text);
          n.file = file_;
          n.line = t.line;
          auto st = directive(n);
          if (!st) return st;
          out.push_back(std::move(n));
          break;
        }
      }
    }
  }

  Status directive(Node& n) {
    for (;;) {
      auto tok = lexer_.next();
      if (!tok) return Error{tok.error()};
      Token& t = *tok;
      switch (t.kind) {
        case Token::Kind::word:
          n.args.push_back(std::move(t.text));
          break;
        case Token::Kind::semicolon:
          return Ok{};
        case Token::Kind::open_brace:
          n.block = true;
          // Lua code is not nginx syntax: skip it whole, so the error
          // names the directive (no torii module takes such a block).
          if (has_foreign_code_block(n.name)) return lexer_.skip_lua_block();
          return block(n.children, /*nested=*/true);
        case Token::Kind::close_brace:
          return error(t.line, "unexpected \"}\"");
        case Token::Kind::eof:
          return error(t.line, "unexpected end of file, expecting \";\" or \"}\"");
      }
    }
  }

  std::shared_ptr<const std::string> file_;
  Lexer lexer_;
  int depth_ = 0;
};

}  // namespace

Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("open() \"" + path + "\" failed (" + errno_text(errno) + ")");
  struct stat st {};
  // A character device too: `include /dev/null;` is how some configs
  // switch an include off (the read below stops at the size limit).
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) || st.st_size > kMaxFileSize) {
    int err = S_ISDIR(st.st_mode) ? EISDIR : (errno ? errno : EINVAL);
    ::close(fd);
    return make_error("open() \"" + path + "\" failed (" + errno_text(err) + ")");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return make_error("read() \"" + path + "\" failed (" + errno_text(err) + ")");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > size_t(kMaxFileSize)) {
      ::close(fd);
      return make_error("read() \"" + path + "\" failed (" + errno_text(EFBIG) + ")");
    }
  }
  ::close(fd);
  return text;
}

// For -T: each file once, however often it is included (nginx's dump).
void Parser::keep_source(const std::string& path, const std::string& text) {
  if (!sources_) return;
  for (const auto& [name, _] : *sources_)
    if (name == path) return;
  sources_->emplace_back(path, text);
}

Result<std::vector<Node>> Parser::parse_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return Error{text.error()};
  keep_source(path, *text);
  return parse_text_at_depth(path, *text);
}

Result<std::vector<Node>> Parser::parse_text(const std::string& file, std::string_view text) {
  return parse_text_at_depth(file, text);
}

Result<std::vector<Node>> Parser::parse_text_at_depth(const std::string& file, std::string_view text) {
  auto tree = TreeBuilder(std::make_shared<const std::string>(file), text).run();
  if (!tree) return tree;
  // Splice includes at every level, in place, keeping file order.
  auto expand = [this](auto& self, std::vector<Node>& nodes) -> Status {
    std::vector<Node> result;
    result.reserve(nodes.size());
    for (auto& n : nodes) {
      if (n.name == "include" && !n.block) {
        auto inc = include(n);
        if (!inc) return Error{inc.error()};
        for (auto& c : *inc) result.push_back(std::move(c));
        continue;
      }
      if (n.block) {
        auto st = self(self, n.children);
        if (!st) return st;
      }
      result.push_back(std::move(n));
    }
    nodes = std::move(result);
    return Ok{};
  };
  auto st = expand(expand, *tree);
  if (!st) return Error{st.error()};
  return tree;
}

Result<std::vector<Node>> Parser::include(const Node& n) {
  if (n.args.size() != 1)
    return make_error(n.where() + "invalid number of arguments in \"include\" directive");
  if (!allow_include_) return make_error(n.where() + "\"include\" is not allowed here");
  if (depth_ >= kMaxIncludeDepth) return make_error(n.where() + "too deep include nesting");

  std::string pattern = n.args[0];
  if (pattern.empty()) return make_error(n.where() + "invalid value \"\" in \"include\" directive");
  if (pattern[0] != '/') pattern = conf_dir_ + pattern;

  std::vector<std::string> files;
  if (has_glob_chars(pattern)) {
    glob_t g{};
    int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        std::string f = g.gl_pathv[i];
        struct stat st {};
        // Like nginx, a glob skips what is not a regular file (e.g. a folder).
        if (::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files.push_back(std::move(f));
      }
    } else if (rc != GLOB_NOMATCH) {
      globfree(&g);
      return make_error(n.where() + "glob() \"" + pattern + "\" failed");
    }
    globfree(&g);
  } else {
    files.push_back(pattern);
  }

  std::vector<Node> out;
  ++depth_;
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text) {
      --depth_;
      return make_error(n.where() + text.error());
    }
    keep_source(f, *text);
    auto nodes = parse_text_at_depth(f, *text);
    if (!nodes) {
      --depth_;
      return nodes;
    }
    for (auto& c : *nodes) out.push_back(std::move(c));
  }
  --depth_;
  return out;
}

}  // namespace torii::config
