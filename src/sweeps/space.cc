// The search space: a grid's product, a seeded random search's draws, and how values enter a
// command line (placeholders). Pure: no I/O, table-tested in sweeps_test.cc.
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): small, fast, well distributed, and fully specified by a
// dozen lines, so the trials a seed gives can be reproduced outside this code (docs/sweeps.md).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1): the top 53 bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

Value Draw(const ParamSpec& p, SplitMix64& rng) {
  double u = rng.Unit();
  switch (p.kind) {
    case ParamSpec::Kind::kUniform:
      return p.low + u * (p.high - p.low);
    case ParamSpec::Kind::kLogUniform:
      return std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)));
    case ParamSpec::Kind::kRandInt: {
      auto lo = static_cast<std::int64_t>(p.low);
      auto span = static_cast<std::int64_t>(p.high) - lo + 1;
      auto k = static_cast<std::int64_t>(u * static_cast<double>(span));
      return lo + std::min(k, span - 1);
    }
    case ParamSpec::Kind::kValues:
      break;
  }
  auto k = static_cast<size_t>(u * static_cast<double>(p.values.size()));
  return p.values[std::min(k, p.values.size() - 1)];
}

}  // namespace

std::uint64_t TrialCount(const Space& space) {
  if (space.type != SpaceType::kGrid) return static_cast<std::uint64_t>(std::max(space.trials, 0));
  if (space.params.empty()) return 0;
  std::uint64_t n = 1;
  for (const ParamSpec& p : space.params) n *= p.values.size();
  return n;
}

std::vector<Assignment> Trials(const Space& space) {
  std::vector<Assignment> out;
  if (space.type == SpaceType::kAx) return out;  // proposed by Ax as the sweep runs
  std::uint64_t n = TrialCount(space);
  out.reserve(n);
  if (space.type == SpaceType::kRandom) {
    SplitMix64 rng(space.seed);
    for (std::uint64_t t = 0; t < n; ++t) {
      Assignment a;
      for (const ParamSpec& p : space.params) a.emplace_back(p.name, Draw(p, rng));
      out.push_back(std::move(a));
    }
    return out;
  }
  // Mixed radix, the last parameter the fastest digit.
  for (std::uint64_t t = 0; t < n; ++t) {
    std::vector<size_t> digit(space.params.size());
    std::uint64_t rest = t;
    for (size_t i = space.params.size(); i-- > 0;) {
      digit[i] = rest % space.params[i].values.size();
      rest /= space.params[i].values.size();
    }
    Assignment a;
    a.reserve(space.params.size());
    for (size_t i = 0; i < space.params.size(); ++i)
      a.emplace_back(space.params[i].name, space.params[i].values[digit[i]]);
    out.push_back(std::move(a));
  }
  return out;
}

std::string ValueText(const Value& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_double()) return fmt::format("{}", v.as_double());
  if (v.is_null()) return "None";
  return "";  // lists and maps are refused when the space is read
}

namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Result<std::vector<std::string>> Placeholders(std::string_view text, const std::string& where) {
  std::vector<std::string> names;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "@@{") == 0) {
      i += 2;
      continue;
    }
    if (text.compare(i, 2, "@{") != 0) continue;
    size_t close = text.find('}', i + 2);
    std::string_view name = close == std::string_view::npos ? text.substr(i + 2) : text.substr(i + 2, close - i - 2);
    bool valid = close != std::string_view::npos && !name.empty();
    for (char c : name) valid = valid && IsNameChar(c);
    if (!valid) {
      return InvalidArgumentError(
          fmt::format("{}: `@{{` at offset {} does not open a placeholder `@{{name}}` (a parameter name: letters, "
                      "digits, `_`); write `@@{{` for a literal `@{{`",
                      where, i));
    }
    names.emplace_back(name);
    i = close;
  }
  return names;
}

std::string Substitute(std::string_view text, const Assignment& values) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "@@{") == 0) {
      out += "@{";
      i += 2;
      continue;
    }
    if (text.compare(i, 2, "@{") == 0) {
      size_t close = text.find('}', i + 2);
      if (close != std::string_view::npos) {
        std::string_view name = text.substr(i + 2, close - i - 2);
        for (const auto& [k, v] : values) {
          if (k == name) {
            out += ValueText(v);
            i = close;
            break;
          }
        }
        if (i == close) continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace torchx::sweeps
