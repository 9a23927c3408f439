#include "sweeps/metrics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

namespace torchx::sweeps {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream buf;
  buf << f.rdbuf();
  return buf.str();
}

// Time-named files sort by length first: "999" is before "1000".
bool NumericOrder(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

}  // namespace

std::string Base32(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  std::uint64_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out += kAlphabet[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (5 - bits)) & 31];
  while (out.size() % 8 != 0) out += '=';
  return out;
}

namespace {

// Python's json writes NaN, Infinity and -Infinity, which JSON has not: read as null (outside
// strings), so the report still parses and the value reads as not finite.
std::string NonFiniteAsNull(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"}) {
      if (text.compare(i, token.size(), token) == 0) {
        out += "null";
        i += token.size() - 1;
        c = 0;
        break;
      }
    }
    if (c) out += c;
  }
  return out;
}

}  // namespace

std::optional<Report> ParseReport(std::string_view text) {
  Json j = Json::parse(NonFiniteAsNull(text), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const Json* body = &j;
  if (j.size() == 1 && j.contains("metadata") && j["metadata"].is_object()) body = &j["metadata"];
  Report r;
  for (const auto& [k, v] : body->items()) {
    if (v.is_number()) r.emplace_back(k, v.get<double>());
    if (v.is_null()) r.emplace_back(k, std::numeric_limits<double>::quiet_NaN());  // NaN, +-Infinity
  }
  return r;
}

std::vector<Report> ReadReports(const std::string& results_dir, const std::string& run_id, const std::string& key) {
  return ReadReports(results_dir, std::vector<std::string>{run_id}, key);
}

std::vector<Report> ReadReports(const std::string& results_dir, const std::vector<std::string>& run_ids,
                                const std::string& key) {
  std::vector<Report> out;
  std::error_code ec;
  for (const std::string& run_id : run_ids) {
    fs::path dir = fs::path(results_dir) / Base32(run_id) / "metadata";
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end(), NumericOrder);
    for (const std::string& n : names) {
      if (auto r = ParseReport(ReadFile(dir / n))) out.push_back(std::move(*r));
    }
  }
  fs::path put = fs::path(results_dir) / key;
  if (fs::is_regular_file(put, ec)) {
    if (auto r = ParseReport(ReadFile(put))) out.push_back(std::move(*r));
  }
  return out;
}

bool Better(double a, double b, const Objective& objective) { return objective.minimize ? a < b : a > b; }

Summary Summarize(const std::vector<Report>& reports, const std::optional<Objective>& objective) {
  Summary s;
  for (const Report& r : reports) {
    for (const auto& [key, v] : r) {
      const std::string& k = key;
      auto it = std::find_if(s.metrics.begin(), s.metrics.end(), [&k](const auto& m) { return m.first == k; });
      bool is_objective = objective && k == objective->metric;
      if (!std::isfinite(v)) {
        // A diverged value (NaN, infinite): the metric has no value now, and with `last` neither
        // has the objective, so the trial is not ranked; `best` keeps the best finite report.
        if (it != s.metrics.end() && !(is_objective && objective->best)) s.metrics.erase(it);
        if (is_objective && !objective->best) s.objective.reset();
        continue;
      }
      double* slot = nullptr;
      if (it == s.metrics.end()) {
        slot = &s.metrics.emplace_back(k, v).second;
      } else {
        slot = &it->second;
        if (!(is_objective && objective->best) || Better(v, *slot, *objective)) *slot = v;
      }
      if (is_objective) s.objective = *slot;
    }
  }
  return s;
}

}  // namespace torchx::sweeps
