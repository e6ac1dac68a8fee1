// Main-context directives about the worker threads and the process:
//   worker_cpu_affinity   pins each worker thread (core/worker_placement)
//   worker_priority       the worker threads' nice value
//   worker_rlimit_core    RLIMIT_CORE, set by main at start and on reload
//   working_directory     the process's directory (main, at start)
//   pcre_jit              torii always compiles regexes with PCRE2's JIT
//                         where the library has one: both values accepted
//   timer_resolution      nginx's way to read the clock less often; torii
//                         reads it once per loop turn already
//   lock_file, debug_points, thread_pool: checked, with a warning where a
//                         value asks for what torii does not do
// and, in events {}, epoll_events and worker_aio_requests (sizes of nginx's
// own arrays: checked), debug_connection (checked, warned about).
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

#include "config/directives.h"
#include "core/quote.h"
#include "net/ip_address.h"

namespace torii::config {

namespace {

// worker_cpu_affinity auto [MASK] | MASK...: a mask is binary digits, the
// rightmost for CPU 0; spaces inside are skipped, as nginx does.
Status set_cpu_affinity(Compiler& c, Scope&, const Node& n) {
  ProcessSettings& p = c.cfg().process;
  size_t first = 0;
  if (n.args[0] == "auto") {
    if (n.args.size() > 2) return node_error(n, "invalid number of arguments in \"worker_cpu_affinity\" directive");
    p.cpu_auto = true;
    first = 1;
    if (n.args.size() == 1) {
      cpu_set_t all;
      CPU_ZERO(&all);
      if (sched_getaffinity(0, sizeof all, &all) != 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
      }
      p.cpu_masks.push_back(all);
    }
  }
  for (size_t i = first; i < n.args.size(); ++i) {
    const std::string& digits = n.args[i];
    if (digits.size() > CPU_SETSIZE) {
      return node_error(n, "\"worker_cpu_affinity\" supports up to " + std::to_string(CPU_SETSIZE) + " CPUs only");
    }
    cpu_set_t mask;
    CPU_ZERO(&mask);
    int cpu = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      if (*it == ' ') continue;
      if (*it == '1') {
        CPU_SET(cpu, &mask);
      } else if (*it != '0') {
        return node_error(n, "invalid character \"" + std::string(1, *it) + "\" in \"worker_cpu_affinity\"");
      }
      ++cpu;
    }
    p.cpu_masks.push_back(mask);
  }
  return Ok{};
}

// worker_priority [-|+]N: nginx takes any number and lets setpriority()
// clamp it to -20..19.
Status set_priority(Compiler& c, Scope&, const Node& n) {
  std::string_view v = n.args[0];
  bool minus = false;
  if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
    minus = v[0] == '-';
    v.remove_prefix(1);
  }
  uint64_t number = 0;
  if (!parse_number(v, number)) return node_error(n, "\"worker_priority\" directive invalid number");
  const int clamped = static_cast<int>(std::min<uint64_t>(number, 20));
  c.cfg().process.priority = minus ? -clamped : std::min(clamped, 19);
  return Ok{};
}

Status set_rlimit_core(Compiler& c, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  c.cfg().process.rlimit_core = v;
  return Ok{};
}

Status set_working_directory(Compiler& c, Scope&, const Node& n) {
  c.cfg().process.working_directory = n.args[0];
  return Ok{};
}

Status accept_time(Compiler&, Scope&, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return invalid_value(n, n.args[0]);
  return Ok{};
}

// pcre_jit (its flag is checked by the table), lock_file: nothing to apply.
// pcre_jit (the table checks its flag) and lock_file: nothing to apply.
Status accept_as_written(Compiler&, Scope&, const Node&) { return Ok{}; }

Status accept_debug_points(Compiler& c, Scope&, const Node& n) {
  if (n.args[0] != "stop" && n.args[0] != "abort") return invalid_value(n, n.args[0]);
  c.warn(n, "\"debug_points\" has no effect: torii has no debug points");
  return Ok{};
}

// thread_pool NAME threads=N [max_queue=N]: nginx's pool for `aio threads`.
// torii's workers never block on a file read (see aio), so no pool is made.
Status accept_thread_pool(Compiler& c, Scope&, const Node& n) {
  bool threads = false;
  for (size_t i = 1; i < n.args.size(); ++i) {
    std::string_view a = n.args[i];
    uint64_t v = 0;
    if (a.starts_with("threads=")) {
      if (!parse_number(a.substr(8), v) || v == 0) return node_error(n, "invalid threads value \"" + n.args[i] + "\"");
      threads = true;
    } else if (a.starts_with("max_queue=")) {
      if (!parse_number(a.substr(10), v)) return node_error(n, "invalid max_queue value \"" + n.args[i] + "\"");
    } else {
      return node_error(n, "invalid parameter \"" + n.args[i] + "\"");
    }
  }
  if (!threads) return node_error(n, "\"" + n.name + "\" must have \"threads\" parameter");
  c.warn(n, "\"thread_pool " + n.args[0] + "\" has no effect: torii's workers do not block on file reads");
  return Ok{};
}

Status accept_positive_number(Compiler&, Scope&, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v) || v == 0) return invalid_value(n, n.args[0]);
  return Ok{};
}

// debug_connection ADDRESS | CIDR | unix: — nginx logs such clients at the
// debug level when built with debugging; torii has no per-connection level.
Status accept_debug_connection(Compiler& c, Scope&, const Node& n) {
  const std::string& a = n.args[0];
  net::Cidr cidr;
  // A host name is resolved by nginx; a malformed address is an error there too.
  if (net::parse_cidr(a, cidr) == net::CidrParse::invalid && a.find_first_of("/:") != std::string::npos)
    return invalid_value(n, a);
  c.warn(n, "\"debug_connection\" has no effect: torii's error_log level is the same for every connection");
  return Ok{};
}

constexpr DirectiveSpec kProcessDirectives[] = {
    {"worker_cpu_affinity", kMain, kArgs1More, true, false, kMain, &set_cpu_affinity},
    {"worker_priority", kMain, kArgs1, true, false, kMain, &set_priority},
    {"worker_rlimit_core", kMain, kArgs1, true, false, kMain, &set_rlimit_core},
    {"working_directory", kMain, kArgs1, true, false, kMain, &set_working_directory},
    {"pcre_jit", kMain, kFlag, true, false, kMain, &accept_as_written},
    {"timer_resolution", kMain, kArgs1, true, false, kMain, &accept_time},
    {"lock_file", kMain, kArgs1, true, false, kMain, &accept_as_written},
    {"debug_points", kMain, kArgs1, true, false, kMain, &accept_debug_points},
    {"thread_pool", kMain, kArgs2 | kArgs3, false, false, kMain, &accept_thread_pool},
    {"epoll_events", kEvents, kArgs1, true, false, kMain, &accept_positive_number},
    {"worker_aio_requests", kEvents, kArgs1, true, false, kMain, &accept_positive_number},
    {"debug_connection", kEvents, kArgs1, false, false, kMain, &accept_debug_connection},
};

}  // namespace

std::span<const DirectiveSpec> process_directives() { return kProcessDirectives; }

}  // namespace torii::config
