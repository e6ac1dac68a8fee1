"""Main-context directives that shape the workers: worker_cpu_affinity,
worker_priority, worker_rlimit_core, working_directory, and the tuning
lines configs carry (pcre_jit, timer_resolution, thread_pool...).

What is checked is what /proc shows for the server's processes and
threads: nginx's workers are processes, torii's are threads of one, so
every check looks at all tasks of every process in the server's session.
The file passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import os

import pytest

import harness
from harness import wait_until

TWO_CPUS = os.cpu_count() is not None and os.cpu_count() >= 2


def conf(main=""):
    return harness.base_conf(main=main, http="""
    server {
        listen 127.0.0.1:@PORT@;
        location / { return 200 "ok\\n"; }
    }
""")


def session_pids(server):
    """The server's process and its children (the session it leads)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == server.proc.pid:  # field 6: session id
            pids.append(int(entry))
    return pids


def tasks(server):
    """(pid, tid) of every thread of every process of the server."""
    out = []
    for pid in session_pids(server):
        try:
            out += [(pid, int(t)) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            pass
    return out


def task_cpus(pid, tid):
    for line in open(f"/proc/{pid}/task/{tid}/status"):
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return None


def task_nice(pid, tid):
    fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[16])  # field 19: nice


def per_task(server, read):
    """read(pid, tid) for every thread still there."""
    result = []
    for pid, tid in tasks(server):
        try:
            result.append(read(pid, tid))
        except OSError:
            pass
    return result


def cpu_lists(server):
    return per_task(server, task_cpus)


def nice_values(server):
    return per_task(server, task_nice)


def served(server):
    return harness.http(server.port, "/").status == 200


@pytest.mark.skipif(not TWO_CPUS, reason="needs two CPUs")
@pytest.mark.parametrize("affinity", ["01 10", "auto", "auto 11"])
def test_worker_cpu_affinity_pins_each_worker_to_its_cpu(make_server, affinity):
    s = make_server(conf(main=f"worker_processes 2;\nworker_cpu_affinity {affinity};"))
    assert served(s)
    wait_until(lambda: {"0", "1"} <= set(cpu_lists(s)), 5, what=f"workers pinned to CPU 0 and CPU 1: {cpu_lists(s)}")
    assert cpu_lists(s).count("0") >= 1 and cpu_lists(s).count("1") >= 1


@pytest.mark.skipif(not TWO_CPUS, reason="needs two CPUs")
def test_one_mask_pins_every_worker(make_server):
    s = make_server(conf(main="worker_processes 2;\nworker_cpu_affinity 10;"))
    assert served(s)
    wait_until(lambda: cpu_lists(s).count("1") >= 2, 5, what=f"both workers on CPU 1: {cpu_lists(s)}")
    assert "0" not in cpu_lists(s)


def test_without_affinity_nothing_is_pinned(make_server):
    s = make_server(conf(main="worker_processes 2;"))
    assert served(s)
    allowed = cpu_lists(s)
    assert allowed and len(set(allowed)) == 1, allowed


@pytest.mark.skipif(os.geteuid() != 0, reason="a negative nice value needs root")
def test_worker_priority_sets_the_workers_nice_value_and_reload_changes_it(make_server):
    s = make_server(conf(main="worker_processes 2;\nworker_priority -5;"))
    assert served(s)
    wait_until(lambda: nice_values(s).count(-5) >= 2, 5, what=f"two workers at nice -5: {nice_values(s)}")
    # The master (nginx) or the main thread (torii) keeps its own.
    assert nice_values(s).count(0) >= 1
    s.reload(conf(main="worker_processes 2;\nworker_priority 3;"))
    wait_until(lambda: nice_values(s).count(3) >= 2 and -5 not in nice_values(s), 10,
               what=f"workers at nice 3 after reload: {nice_values(s)}")
    assert served(s)


def limit_line(pid, name):
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith(name):
            return line.split()[-3:-1]  # soft, hard
    return None


def test_worker_rlimit_core_sets_the_core_size_limit(make_server):
    s = make_server(conf(main="worker_rlimit_core 10m;"))
    assert served(s)
    wait_until(lambda: any(limit_line(p, "Max core file size") == ["10485760", "10485760"] for p in session_pids(s)),
               5, what="RLIMIT_CORE of 10 MB")


def test_working_directory_is_where_the_workers_run(make_server, tmp_path):
    d = tmp_path / "cores"
    d.mkdir()
    s = make_server(conf(main=f"working_directory {d};"))
    assert served(s)
    wait_until(lambda: any(os.readlink(f"/proc/{p}/cwd") == str(d) for p in session_pids(s)), 5,
               what="a worker whose directory is the working_directory")


def check(make_server, main="", events="", http=""):
    """`-t` on a config with these lines: (ok, output)."""
    s = make_server(harness.base_conf(main=main, events=events, http=http), start=False)
    s.ports = [65000]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("main, message", [
    ("worker_cpu_affinity 0x1;", 'invalid character "x" in "worker_cpu_affinity"'),
    ("worker_cpu_affinity auto 01 10;", 'invalid number of arguments in "worker_cpu_affinity"'),
    ("worker_priority high;", "invalid number"),
    ("worker_rlimit_core lots;", '"worker_rlimit_core"'),
    ("worker_priority 1;\nworker_priority 2;", "is duplicate"),
    ("debug_points maybe;", 'invalid value "maybe"'),
    ("thread_pool default max_queue=10;", 'must have "threads" parameter'),
])
def test_bad_values_are_refused_by_name(make_server, main, message):
    ok, out = check(make_server, main)
    assert not ok and message in out, out


@pytest.mark.parametrize("main", [
    "pcre_jit on;",
    "pcre_jit off;",
    "timer_resolution 100ms;",
    "lock_file /var/run/nginx.lock;",
    "thread_pool default threads=32 max_queue=65536;",
    "thread_pool io threads=4;",
    "debug_points abort;",
    "worker_priority -10;",
    "worker_priority +3;",
    "worker_cpu_affinity 0101 1010;",
    "working_directory /tmp;",
])
def test_tuning_lines_from_real_configs_pass_the_check(make_server, main):
    ok, out = check(make_server, main)
    assert ok, out


@pytest.mark.parametrize("events", ["epoll_events 512;", "worker_aio_requests 32;",
                                    "debug_connection 127.0.0.1;", "debug_connection 192.0.2.0/24;",
                                    "debug_connection unix:;"])
def test_events_tuning_lines_pass_the_check(make_server, events):
    ok, out = check(make_server, events=events)
    assert ok, out


@pytest.mark.parametrize("http", ["connection_pool_size 512;", "request_pool_size 4k;",
                                  "open_file_cache_events on;", "http2_pool_size 4096;",
                                  "http2_streams_index_size 64;", "http2_max_concurrent_pushes 0;"])
def test_http_tuning_lines_pass_the_check(make_server, http):
    ok, out = check(make_server, http=http)
    assert ok, out


def test_http2_streams_index_size_must_be_a_power_of_two(make_server):
    ok, out = check(make_server, http="http2_streams_index_size 30;")
    assert not ok and "power of two" in out, out
