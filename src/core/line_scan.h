// Finding the lines of a block of text 64 bytes at a time. `torchx log` prefixes every line of a
// log that may be gigabytes long: a memchr call per line of ~70 bytes cost more than copying the
// line (its call and set-up dominate on short lines), while one pass of 16-byte compares makes a
// bit mask per 64 bytes whose set bits are the newlines, each found with one count-trailing-zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace torchx::internal {

/// Bit i is set where p[i] == '\n', for the 64 bytes at p (all of which must be readable).
inline uint64_t NewlineMask64(const char* p) {
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  auto mask16 = [&](int at) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl))));
  };
  return mask16(0) | mask16(16) << 16 | mask16(32) << 32 | mask16(48) << 48;
#else
  uint64_t mask = 0;
  for (int i = 0; i < 64; ++i) mask |= static_cast<uint64_t>(p[i] == '\n') << i;
  return mask;
#endif
}

/// Calls on_line(start, length) for each line of [begin, end) that ends with a newline, the newline
/// included, in order. Returns where the unterminated rest begins (`end` when there is none).
template <class OnLine>
const char* ForEachLine(const char* begin, const char* end, OnLine&& on_line) {
  const char* line = begin;
  const char* p = begin;
  for (; end - p >= 64; p += 64) {
    for (uint64_t mask = NewlineMask64(p); mask != 0; mask &= mask - 1) {
      const char* next = p + __builtin_ctzll(mask) + 1;
      on_line(line, static_cast<size_t>(next - line));
      line = next;
    }
  }
  while (p < end) {
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (nl == nullptr) break;
    p = static_cast<const char*>(nl) + 1;
    on_line(line, static_cast<size_t>(p - line));
    line = p;
  }
  return line;
}

}  // namespace torchx::internal
