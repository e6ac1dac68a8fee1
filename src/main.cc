// torii's command line, modelled on nginx's: -c, -p, -t, -T, -v, -V, -s, -g.
// The main thread loads the config, starts the workers, then only waits for
// signals: stop, graceful quit, reload, reopen.
#include <signal.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/allocator_tuning.h"
#include "core/fd_budget.h"
#include "core/systemd_notify.h"
#include "modules/metrics/worker_metrics.h"
#include "core/worker.h"
#include "log/access_log_files.h"
#include "log/server_error_logs.h"
#include "log/error_log.h"
#include "net/listener.h"
#include "stream/stream_config.h"
#include "net/ocsp_refresher.h"
#include "net/unix_listeners.h"
#include "cache/zone.h"
#include "upstream/health_checker.h"
#include "upstream/name_refresher.h"

namespace {

using torii::config::Config;
using ConfigPtr = std::shared_ptr<const Config>;

struct Options {
  std::string prefix;
  std::string conf;
  std::string directives;  // -g
  std::string error_log;   // -e
  std::string signal;      // -s
  bool test = false;       // -t
  bool dump = false;       // -T
  bool quiet = false;      // -q
};

void usage() {
  fprintf(stderr,
          "Usage: torii [-?hvVtTq] [-s signal] [-p prefix] [-e filename] [-c filename] [-g directives]\n\n"
          "Options:\n"
          "  -?,-h         : this help\n"
          "  -v            : show version and exit\n"
          "  -V            : show version and build options and exit\n"
          "  -t            : test configuration and exit\n"
          "  -T            : test configuration, dump it and exit\n"
          "  -q            : suppress non-error messages during configuration testing\n"
          "  -s signal     : send signal to the running instance: stop, quit, reopen, reload\n"
          "  -p prefix     : set prefix path (default: the current directory)\n"
          "  -e filename   : set error log file (default: logs/error.log; \"stderr\": the terminal)\n"
          "  -c filename   : set configuration file (default: conf/torii.conf, relative to the prefix)\n"
          "  -g directives : set global directives out of configuration file\n");
}

std::string absolute(const std::string& path, const std::string& base) {
  if (!path.empty() && path[0] == '/') return path;
  return base + path;
}

std::string current_dir() {
  char buf[PATH_MAX];
  if (!getcwd(buf, sizeof buf)) return "/";
  std::string d = buf;
  if (d.back() != '/') d += '/';
  return d;
}

// Returns -1 to go on running, else the exit code.
int parse_args(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto need = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "torii: option \"%s\" requires %s\n", a.c_str(), what);
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "-h" || a == "-?") {
      usage();
      return 0;
    } else if (a == "-v") {
      fprintf(stderr, "torii version: torii/%s\n", TORII_VERSION);
      return 0;
    } else if (a == "-V") {
      fprintf(stderr, "torii version: torii/%s\nbuilt by g++ %s\nC++ standard: %ld\n", TORII_VERSION, __VERSION__,
              static_cast<long>(__cplusplus));
      return 0;
    } else if (a == "-t") {
      o.test = true;
    } else if (a == "-T") {
      o.test = o.dump = true;
    } else if (a == "-q") {
      o.quiet = true;
    } else if (a == "-c") {
      const char* v = need("file name");
      if (!v) return 1;
      o.conf = v;
    } else if (a == "-e") {
      const char* v = need("file name");
      if (!v) return 1;
      o.error_log = v;
    } else if (a == "-p") {
      const char* v = need("directory name");
      if (!v) return 1;
      o.prefix = v;
    } else if (a == "-g") {
      const char* v = need("directives");
      if (!v) return 1;
      o.directives = v;
    } else if (a == "-s") {
      const char* v = need("parameter");
      if (!v) return 1;
      o.signal = v;
      if (o.signal != "stop" && o.signal != "quit" && o.signal != "reopen" && o.signal != "reload") {
        fprintf(stderr, "torii: invalid option: \"-s %s\"\n", v);
        return 1;
      }
    } else {
      fprintf(stderr, "torii: invalid option: \"%s\"\n", a.c_str());
      usage();
      return 1;
    }
  }
  std::string cwd = current_dir();
  o.prefix = o.prefix.empty() ? cwd : absolute(o.prefix, cwd);
  if (o.prefix.back() != '/') o.prefix += '/';
  // As nginx: a relative -c names a file under the prefix.
  o.conf = absolute(o.conf.empty() ? "conf/torii.conf" : o.conf, o.prefix);
  return -1;
}

// `open_files`: create the access_log files, as nginx does on every load
// but a signaller's (-s).
torii::Result<ConfigPtr> load(const Options& o, bool open_files = true) {
  torii::config::load_warnings().clear();
  auto cfg = torii::config::load(o.conf, o.prefix, o.directives, o.error_log);
  for (const auto& w : torii::config::load_warnings()) {
    // Before the error log is open (start, -t) warnings go to the terminal, as nginx's do.
    if (torii::log::enabled(torii::config::LogLevel::warn)) TORII_LOG(warn, "%s", w.c_str());
    else fprintf(stderr, "torii: [warn] %s\n", w.c_str());
  }
  if (cfg && open_files) {
    if (auto created = torii::log::create_access_log_files(**cfg); !created) return torii::Error{created.error()};
    if (auto opened = torii::log::open_request_error_logs(**cfg); !opened) return torii::Error{opened.error()};
    // The main log's file as well, so -t makes and checks it as nginx's does.
    const auto& main_log = (**cfg).error_log;
    if (!main_log.syslog && main_log.path != "stderr") {
      const int fd = ::open(main_log.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        const int err = errno;
        return torii::Error{"open() \"" + main_log.path + "\" failed (" + std::to_string(err) + ": " + strerror(err) + ")"};
      }
      ::close(fd);
    }
  }
  return cfg;
}

int send_signal(const Options& o) {
  auto cfg = load(o, false);
  if (!cfg) {
    fprintf(stderr, "torii: [emerg] %s\n", cfg.error().c_str());
    return 1;
  }
  std::ifstream in((*cfg)->pid_path);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) {
    fprintf(stderr, "torii: [error] invalid PID number in \"%s\"\n", (*cfg)->pid_path.c_str());
    return 1;
  }
  int sig = o.signal == "stop" ? SIGTERM : o.signal == "quit" ? SIGQUIT : o.signal == "reopen" ? SIGUSR1 : SIGHUP;
  if (kill(pid_t(pid), sig) != 0) {
    fprintf(stderr, "torii: [error] kill(%ld, %d) failed (%d: %s)\n", pid, sig, errno, strerror(errno));
    return 1;
  }
  return 0;
}

int test_config(const Options& o) {
  auto cfg = load(o);
  if (!cfg) {
    fprintf(stderr, "torii: [emerg] %s\ntorii: configuration file %s test failed\n", cfg.error().c_str(),
            o.conf.c_str());
    return 1;
  }
  if (!o.quiet) {
    fprintf(stderr, "torii: the configuration file %s syntax is ok\ntorii: configuration file %s test is successful\n",
            o.conf.c_str(), o.conf.c_str());
  }
  if (o.dump) {
    for (const auto& [file, text] : (*cfg)->sources) {
      printf("# configuration file %s:\n%s", file.c_str(), text.c_str());
      if (!text.empty() && text.back() != '\n') printf("\n");
      printf("\n");
    }
  }
  return 0;
}

void apply_rlimit(const Config& cfg) {
  if (cfg.worker_rlimit_nofile == 0) return;
  rlimit rl{cfg.worker_rlimit_nofile, cfg.worker_rlimit_nofile};
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    TORII_LOG(alert, "setrlimit(RLIMIT_NOFILE, %llu) failed (%d: %s)",
              static_cast<unsigned long long>(cfg.worker_rlimit_nofile), errno, strerror(errno));
  }
}

// worker_rlimit_core, at start and on reload (one process: the limit is
// the workers' as well).
void apply_rlimit_core(const Config& cfg) {
  if (cfg.process.rlimit_core < 0) return;
  const auto v = static_cast<rlim_t>(cfg.process.rlimit_core);
  rlimit rl{v, v};
  if (setrlimit(RLIMIT_CORE, &rl) != 0) {
    TORII_LOG(alert, "setrlimit(RLIMIT_CORE, %lld) failed (%d: %s)", static_cast<long long>(cfg.process.rlimit_core),
              errno, strerror(errno));
  }
}

// working_directory: nginx's workers chdir() there, and a failure is fatal
// to them; torii's paths are absolute by then, so only a core dump or a
// program's relative path sees it. At start a failure stops torii; on
// reload it is logged and the old directory kept.
bool apply_working_directory(const Config& cfg) {
  const std::string& dir = cfg.process.working_directory;
  if (dir.empty()) return true;
  if (chdir(dir.c_str()) == 0) return true;
  TORII_LOG(alert, "chdir(\"%s\") failed (%d: %s)", dir.c_str(), errno, strerror(errno));
  return false;
}

// Written to a temporary name and renamed, so a reader (systemd's PIDFile=,
// `torii -s`, a script) sees either no file or the whole pid, never an empty one.
bool write_pid(const std::string& path) {
  const std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (!f) {
    TORII_LOG(emerg, "open() \"%s\" failed (%d: %s)", tmp.c_str(), errno, strerror(errno));
    return false;
  }
  const bool written = fprintf(f, "%d\n", getpid()) > 0;
  if (fclose(f) != 0 || !written || rename(tmp.c_str(), path.c_str()) != 0) {
    TORII_LOG(emerg, "writing \"%s\" failed (%d: %s)", path.c_str(), errno, strerror(errno));
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

using Workers = std::vector<std::unique_ptr<torii::core::Worker>>;

// The listens of http and stream that accept connections (TCP or a unix path):
// not QUIC's and stream's UDP ones.
std::vector<const torii::config::Listen*> tcp_and_unix_listens(const torii::config::Config& cfg) {
  std::vector<const torii::config::Listen*> out;
  for (const auto& g : cfg.listen_groups)
    if (!g.listen.quic) out.push_back(&g.listen);
  if (cfg.stream)
    for (const auto& g : cfg.stream->listen_groups)
      if (!g.listen.udp) out.push_back(&g.listen);
  return out;
}

std::vector<std::string> unix_listen_paths(const torii::config::Config& cfg) {
  std::vector<std::string> out;
  for (const auto* l : tcp_and_unix_listens(cfg))
    if (l->addr.ss_family == AF_UNIX) out.push_back(l->text);
  return out;
}

void reload(const Options& o, ConfigPtr& current, Workers& workers, torii::upstream::HealthChecker& health,
            torii::upstream::NameRefresher& names) {
  TORII_LOG(notice, "signal 1 (SIGHUP) received, reconfiguring");
  auto next = load(o);
  torii::metrics::note_reload(bool(next));
  if (!next) {
    TORII_LOG(emerg, "%s", next.error().c_str());
    TORII_LOG(alert, "reconfiguration failed: the running configuration stays in use");
    return;
  }
  ConfigPtr cfg = *next;
  if (cfg->error_log.path != current->error_log.path || cfg->error_log.level != current->error_log.level) {
    if (!torii::log::open_error_log(cfg->error_log)) {
      TORII_LOG(alert, "could not open error log \"%s\" (%d: %s)", cfg->error_log.path.c_str(), errno,
                strerror(errno));
    }
  }
  if (cfg->worker_processes != current->worker_processes) {
    TORII_LOG(warn, "worker_processes changed from %d to %d: takes effect on restart", current->worker_processes,
              cfg->worker_processes);
  }
  apply_rlimit_core(*cfg);
  apply_working_directory(*cfg);
  names.use_config(cfg);   // before the workers and the prober: resolved addresses carry over
  health.use_config(cfg);  // before the workers, so they see the carried-over verdicts
  torii::cache::Zone::start_all();  // zones the new config added
  // A unix path new to this config is opened here, once, so a failure is
  // one log line and not one per worker; those it dropped go away.
  const auto unix_paths = unix_listen_paths(*cfg);
  for (const auto* listen : tcp_and_unix_listens(*cfg)) {
    if (listen->addr.ss_family != AF_UNIX) continue;
    if (auto opened = torii::net::probe_address_free(*listen); !opened) TORII_LOG(emerg, "%s", opened.error().c_str());
  }
  for (auto& w : workers) w->reload(cfg);
  torii::net::unix_listeners::keep_only(unix_paths);
  current = cfg;
  TORII_LOG(notice, "reconfiguration done");
}

// An exception nobody catches ends the process, every worker with it: the
// error log says which before it does, so a stop is never silent.
[[noreturn]] void on_terminate() {
  std::string what = "unknown";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
  }
  TORII_LOG(alert, "exiting on an uncaught exception: %s", what.c_str());
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  torii::core::tune_allocator();
  Options o;
  int rc = parse_args(argc, argv, o);
  if (rc >= 0) return rc;
  if (!o.signal.empty()) return send_signal(o);
  if (o.test) return test_config(o);

  auto loaded = load(o);
  if (!loaded) {
    fprintf(stderr, "torii: [emerg] %s\n", loaded.error().c_str());
    return 1;
  }
  ConfigPtr cfg = *loaded;
  if (!torii::log::open_error_log(cfg->error_log)) {
    fprintf(stderr, "torii: [emerg] open() \"%s\" failed (%d: %s)\n", cfg->error_log.path.c_str(), errno,
            strerror(errno));
    return 1;
  }
  apply_rlimit(*cfg);
  apply_rlimit_core(*cfg);
  if (!apply_working_directory(*cfg)) {
    fprintf(stderr, "torii: [emerg] chdir(\"%s\") failed, see the error log\n", cfg->process.working_directory.c_str());
    return 1;
  }
  for (const auto* listen : tcp_and_unix_listens(*cfg)) {
    auto free = torii::net::probe_address_free(*listen);
    if (!free) {
      TORII_LOG(emerg, "%s", free.error().c_str());
      fprintf(stderr, "torii: [emerg] %s\n", free.error().c_str());
      return 1;
    }
  }

  // Workers inherit this mask: only the main thread takes signals.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Workers workers;
  for (int i = 0; i < cfg->worker_processes; ++i) {
    workers.push_back(std::make_unique<torii::core::Worker>(i, cfg));
    if (!workers.back()->open_listeners()) {
      fprintf(stderr, "torii: [emerg] could not open the listening sockets, see the error log\n");
      return 1;
    }
  }
  {
    std::vector<torii::core::Worker*> all;
    for (auto& w : workers) all.push_back(w.get());
    torii::core::set_workers(std::move(all));
  }
  if (!write_pid(cfg->pid_path)) return 1;
  // What is open now (listening sockets, logs, event loops) stays; the
  // rest of the limit is for connections, their files and upstreams.
  torii::core::FdBudget::process().start(torii::core::FdBudget::current_limit(),
                                         torii::core::FdBudget::count_open());
  torii::upstream::NameRefresher names;
  names.use_config(cfg);
  torii::upstream::HealthChecker health;
  health.use_config(cfg);
  torii::net::OcspRefresher::process().start();
  torii::cache::Zone::start_all();  // each proxy_cache_path's loader, then its manager
  for (auto& w : workers) w->start();
  TORII_LOG(notice, "torii/%s started, %d worker(s)", TORII_VERSION, cfg->worker_processes);
  torii::core::notify_ready();

  bool graceful = false;
  while (true) {
    int sig = sigwaitinfo(&set, nullptr);
    if (sig < 0) continue;
    if (sig == SIGTERM || sig == SIGINT) {
      TORII_LOG(notice, "signal %d received, exiting", sig);
      break;
    }
    if (sig == SIGQUIT) {
      TORII_LOG(notice, "signal %d (SIGQUIT) received, shutting down gracefully", sig);
      graceful = true;
      break;
    }
    if (sig == SIGHUP) {
      torii::core::notify_reloading();
      reload(o, cfg, workers, health, names);
      torii::core::notify_ready();
    } else if (sig == SIGUSR1) {
      TORII_LOG(notice, "signal %d (SIGUSR1) received, reopening logs", sig);
      torii::log::reopen_error_log();
      for (auto& w : workers) w->reopen_logs();
    }
  }
  torii::core::notify_stopping();
  for (auto& w : workers) w->stop(graceful);
  // The workers stop accepting now; a unix path's file goes too, so a new
  // client is refused at once rather than queued on a socket nobody will
  // accept from while a graceful stop lets requests finish.
  torii::net::unix_listeners::close_all();
  for (auto& w : workers) w->join();
  health.stop();
  names.stop();
  torii::net::OcspRefresher::process().stop();
  unlink(cfg->pid_path.c_str());
  TORII_LOG(notice, "exit");
  return 0;
}
