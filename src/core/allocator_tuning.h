// glibc malloc settings for a server whose worker threads each allocate and
// free response-sized buffers (compression windows, whole bodies, proxy
// buffers) many times a second.
#pragma once

namespace torii::core {

// By default glibc gives blocks over 128 KB their own mmap and hands the
// top of a thread's heap back to the kernel once 128 KB of it is free, so a
// 200 KB proxied page made such blocks fresh every request: page faults,
// munmap/madvise, and TLB shootdowns sent to every other thread. Measured on
// a gzip'd 200 KB proxied page: 2.5 ms of CPU per request, 0.95 ms with
// these settings. Memory is still given back, past 32 MB of free heap top.
//
// glibc's per-thread cache keeps 7 free blocks of each size. A worker frees
// a loop turn's finished requests together (objects are destroyed in
// deferred work), 30 to 500 of them at saturation, so most blocks
// overflowed the cache into the shared bins and every next malloc sorted
// them there: _int_malloc was 11% of the worker's CPU on a proxied 800 B
// answer (perf, 100 connections). The cache holds kTcacheCount per size
// instead, which glibc reads only from GLIBC_TUNABLES at start: this sets
// it and runs the program again (same argv, same pid) once, first thing in
// main.
//
// Settings given in GLIBC_TUNABLES (any glibc.malloc.*) win.
inline constexpr int kTcacheCount = 256;
void tune_allocator(char** argv);

}  // namespace torii::core
