#include "schedulers/kubernetes/log_resume.h"

#include <cctype>
#include <optional>

#include "http/http.h"

namespace torchx::schedulers::kubernetes {
namespace {

// "2026-11-24T01:02:03.5Z line" -> "2026-11-24T01:02:03.500000000". The kubelet writes
// RFC 3339 with trailing zeros of the fraction trimmed, so the text alone does not sort.
std::optional<std::string> TimeKey(std::string_view line) {
  size_t space = line.find(' ');
  if (space == std::string_view::npos || space < 20) return std::nullopt;
  std::string_view ts = line.substr(0, space);
  if (ts.back() != 'Z' || ts[10] != 'T') return std::nullopt;
  std::string key(ts.substr(0, 19));
  std::string_view frac = ts.substr(19, ts.size() - 20);
  if (!frac.empty()) {
    if (frac[0] != '.' || frac.size() > 10) return std::nullopt;
    frac.remove_prefix(1);
  }
  for (char ch : frac) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
  }
  key += '.';
  key += frac;
  key.append(9 - frac.size(), '0');
  return key;
}

}  // namespace

bool LogResume::Feed(std::string_view data, const Emit& emit) {
  partial_.append(data);
  size_t begin = 0;
  for (size_t nl; (nl = partial_.find('\n', begin)) != std::string::npos; begin = nl + 1) {
    if (!Line(std::string_view(partial_).substr(begin, nl + 1 - begin), emit)) {
      partial_.erase(0, nl + 1);
      return false;
    }
  }
  partial_.erase(0, begin);
  return true;
}

bool LogResume::Line(std::string_view line, const Emit& emit) {
  std::optional<std::string> key = TimeKey(line);
  if (!key) return emit(line);  // no time to place it by: passed on
  if (replaying_) {
    if (*key < last_key_) return true;
    if (*key == last_key_ && to_skip_ > 0) {
      --to_skip_;
      return true;
    }
    replaying_ = false;
  }
  if (*key == last_key_) {
    ++same_;
  } else {
    last_key_ = *key;
    same_ = 1;
  }
  return emit(line);
}

void LogResume::Restart() {
  partial_.clear();
  replaying_ = started();
  to_skip_ = same_;
}

std::string LogResume::SinceQuery() const {
  if (!started()) return "";
  return "&sinceTime=" + internal::UrlEncode(last_key_.substr(0, 19) + "Z");
}

bool LogResume::Flush(const Emit& emit) {
  if (partial_.empty()) return true;
  std::string rest = std::move(partial_);
  partial_.clear();
  return Line(rest, emit);
}

}  // namespace torchx::schedulers::kubernetes
