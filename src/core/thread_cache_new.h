// A per-thread cache of small blocks in front of malloc for operator new
// and delete (the C++ heap: request heads, field strings, sessions).
//
// Why: glibc's own per-thread cache keeps 7 blocks of each size. A worker
// that answers a hundred proxied requests in one loop turn allocates and
// frees a hundred of each of its per-request objects together, so most of
// them miss that cache and take malloc's slow path (bins, coalescing):
// ~290 instructions for a new and its delete, against ~60 for OpenSSL's
// smaller, steadier allocations (nghttp2's, ~110, now come here too). Here a block of up to
// 1 KB goes back to a list of its size class (glibc's steps) and the next
// new of that class takes it: a few instructions each way.
//
// Bounds: at most kMaxCachedBytes per thread stay cached; past that a
// delete goes to free(). When a worker gives memory back after a crowd
// went quiet, it empties its cache first (release_thread_cache), so idle
// memory is what it was. A thread's cache is emptied when the thread ends.
// Blocks freed on another thread than they were made on simply join that
// thread's cache: every block is malloc's, and free() takes it anywhere.
//
// Builds with AddressSanitizer keep the library's operator new, so that
// every object's lifetime is still checked (TORII_RECYCLE_BLOCKS).
#pragma once

#include <cstddef>

namespace torii::core {

inline constexpr size_t kMaxCachedBytes = 1024 * 1024;

// Frees every block cached by the calling thread; returns the bytes freed.
size_t release_thread_cache();

// The same cache for C libraries that take an allocator (nghttp2): a block
// from take_block is malloc's and may be realloc'd or freed; give_block
// takes one back with its malloc_usable_size.
void* take_block(size_t n);
void give_block(void* p, size_t usable);

}  // namespace torii::core
