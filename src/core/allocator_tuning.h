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
// Settings given in GLIBC_TUNABLES win.
void tune_allocator();

}  // namespace torii::core
