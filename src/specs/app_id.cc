#include "torchx/specs/app_id.h"

#include <random>

namespace torchx::specs {

std::string EncodeRandomId(std::uint64_t v) {
  std::string out;
  while (v > 0) {
    std::string_view alphabet = out.empty() ? kIdStartChars : kIdChars;
    out += alphabet[v % alphabet.size()];
    v /= alphabet.size();
  }
  return out;
}

namespace {
std::uint64_t RandomU64() {
  // random_device reads the kernel's entropy source on Linux (like os.urandom).
  static thread_local std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}
}  // namespace

std::string RandomId() {
  // An all-zero draw would give an empty suffix; draw again (probability 2^-64, but cheap).
  std::string id;
  while (id.empty()) id = EncodeRandomId(RandomU64());
  return id;
}

std::string RandomIdOfLength(size_t n) {
  if (n == 0) return RandomId();
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    std::string_view alphabet = out.empty() ? kIdStartChars : kIdChars;
    out += alphabet[RandomU64() % alphabet.size()];
  }
  return out;
}

std::string MakeUnique(std::string_view name, size_t n) {
  std::string out(name);
  out += '-';
  out += RandomIdOfLength(n);
  return out;
}

std::string NormalizeName(std::string_view name, size_t max_len) {
  std::string out;
  for (char c : name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  size_t first_letter = out.find_first_of("abcdefghijklmnopqrstuvwxyz");
  out = first_letter == std::string::npos ? "" : out.substr(first_letter);
  if (out.size() > max_len) out.resize(max_len);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "app" : out;
}

}  // namespace torchx::specs
