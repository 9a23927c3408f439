#include "torchx/runner/app_filter.h"

#include <algorithm>
#include <cctype>

namespace torchx::runner {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view part) {
  auto it = std::search(text.begin(), text.end(), part.begin(), part.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

}  // namespace

bool Matches(const AppFilter& filter, const schedulers::ListAppResponse& app) {
  if (!filter.states.empty() && !filter.states.contains(app.state)) return false;
  if (!filter.name.empty() && !ContainsNoCase(app.name, filter.name) && !ContainsNoCase(app.app_id, filter.name)) {
    return false;
  }
  if (filter.since && app.created && *app.created < *filter.since) return false;
  return true;
}

std::set<std::string> MemberHandles(const std::vector<schedulers::ListAppResponse>& apps) {
  std::set<std::string> out;
  for (const schedulers::ListAppResponse& a : apps) {
    for (const schedulers::MemberApp& m : a.members) {
      if (!m.app_handle.empty()) out.insert(m.app_handle);
    }
  }
  return out;
}

}  // namespace torchx::runner
