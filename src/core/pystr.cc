#include "core/pystr.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace torchx::internal {

std::string PyFloatStr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Python uses repr's shortest round-trip digits, with scientific notation when the exponent is
  // < -4 or >= 16.
  std::string digits = fmt::format("{:e}", d);  // fixed 6 digits; recomputed below
  for (int precision = 1; precision <= 17; ++precision) {
    digits = fmt::format("{:.{}e}", d, precision - 1);
    if (std::strtod(digits.c_str(), nullptr) == d) break;
  }
  // digits = [-]D.DDDDe[+-]XX
  size_t e = digits.find('e');
  int exp = std::atoi(digits.c_str() + e + 1);
  std::string mantissa = digits.substr(0, e);
  bool neg = mantissa[0] == '-';
  if (neg) mantissa.erase(0, 1);
  std::string ds;
  for (char c : mantissa) {
    if (c != '.') ds += c;
  }
  while (ds.size() > 1 && ds.back() == '0') ds.pop_back();
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = ds.substr(0, 1);
    if (ds.size() > 1) out += "." + ds.substr(1);
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + ds;
  } else {
    size_t int_len = static_cast<size_t>(exp) + 1;
    if (ds.size() <= int_len) {
      out = ds + std::string(int_len - ds.size(), '0') + ".0";
    } else {
      out = ds.substr(0, int_len) + "." + ds.substr(int_len);
    }
  }
  return neg ? "-" + out : out;
}

std::string PyRepr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == q) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += q;
  return out;
}

std::string ShlexQuote(std::string_view s) {
  if (s.empty()) return "''";
  bool safe = true;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
    if (!ok) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace torchx::internal
