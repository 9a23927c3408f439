#include "torchx/schedulers/stacks.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers {
namespace {

using nlohmann::json;

const ThreadStack* MainThread(const ProcessStack& p) {
  for (const ThreadStack& t : p.threads) {
    if (t.main) return &t;
  }
  return p.threads.empty() ? nullptr : &p.threads.front();
}

// What two stacks must share to be one group: each frame's function and file, in order.
std::vector<std::pair<std::string, std::string>> Key(const ThreadStack& t) {
  std::vector<std::pair<std::string, std::string>> key;
  key.reserve(t.frames.size());
  for (const StackFrame& f : t.frames) key.emplace_back(f.function, f.file);
  return key;
}

std::string FrameText(const StackFrame& f) { return fmt::format("{} ({}:{})", f.function, f.file, f.line); }

std::string MemberText(const ProcessStack& p) {
  std::string out = fmt::format("{}/{} pid {}", p.role, p.replica_id, p.pid);
  if (p.rank) out += fmt::format(" rank {}", *p.rank);
  if (!p.host.empty()) out += " on " + p.host;
  return out;
}

json FrameJson(const StackFrame& f) { return {{"function", f.function}, {"file", f.file}, {"line", f.line}}; }

}  // namespace

std::vector<StackGroup> GroupStacks(const std::vector<ProcessStack>& processes) {
  std::vector<StackGroup> groups;
  std::map<std::vector<std::pair<std::string, std::string>>, size_t> index;
  for (size_t i = 0; i < processes.size(); ++i) {
    const ThreadStack* main = MainThread(processes[i]);
    if (!main || !processes[i].error.empty()) continue;
    auto [it, added] = index.try_emplace(Key(*main), groups.size());
    if (added) groups.push_back({main->frames, {}});
    groups[it->second].members.push_back(i);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const StackGroup& a, const StackGroup& b) { return a.members.size() > b.members.size(); });
  return groups;
}

Result<std::vector<ThreadStack>> ParsePySpyDump(std::string_view text, int pid) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) return InvalidArgumentError("py-spy dump: expected a JSON list of threads");
  std::vector<ThreadStack> threads;
  for (const json& t : j) {
    if (!t.is_object() || !t.contains("frames") || !t["frames"].is_array()) {
      return InvalidArgumentError("py-spy dump: a thread without `frames`");
    }
    ThreadStack thread;
    if (t.contains("thread_name") && t["thread_name"].is_string()) thread.name = t["thread_name"].get<std::string>();
    if (t.contains("os_thread_id") && t["os_thread_id"].is_number_integer()) {
      thread.os_thread_id = t["os_thread_id"].get<int>();
    }
    thread.main = thread.os_thread_id == pid || (thread.os_thread_id == 0 && thread.name == "MainThread");
    for (const json& f : t["frames"]) {
      if (!f.is_object()) return InvalidArgumentError("py-spy dump: a frame that is no object");
      StackFrame frame;
      auto string_at = [&](const char* key) {
        return f.contains(key) && f[key].is_string() ? f[key].get<std::string>() : std::string();
      };
      frame.function = string_at("name");
      frame.file = string_at("short_filename");
      if (frame.file.empty()) frame.file = string_at("filename");
      if (f.contains("line") && f["line"].is_number_integer()) frame.line = f["line"].get<int>();
      thread.frames.push_back(std::move(frame));
    }
    threads.push_back(std::move(thread));
  }
  // A dump names no main thread where py-spy could not read the thread ids: the first is it.
  if (!threads.empty() && std::none_of(threads.begin(), threads.end(), [](const ThreadStack& t) { return t.main; })) {
    threads.front().main = true;
  }
  return threads;
}

std::string FormatStackGroups(const std::vector<ProcessStack>& processes) {
  std::string out;
  for (const StackGroup& g : GroupStacks(processes)) {
    std::string where = g.frames.empty() ? "no Python frame" : FrameText(g.frames.front());
    out += fmt::format("{} process{} in {}\n", g.members.size(), g.members.size() == 1 ? "" : "es", where);
    for (size_t i : g.members) out += "  " + MemberText(processes[i]) + "\n";
    for (const StackFrame& f : g.frames) out += "      " + FrameText(f) + "\n";
    out += "\n";
  }
  for (const ProcessStack& p : processes) {
    if (p.error.empty() && MainThread(p)) continue;
    out += fmt::format("no stack: {} ({}): {}\n", MemberText(p), p.command, p.error.empty() ? "no thread" : p.error);
  }
  return out;
}

std::string StacksToJson(const std::vector<ProcessStack>& processes) {
  json groups = json::array();
  for (const StackGroup& g : GroupStacks(processes)) {
    json frames = json::array();
    for (const StackFrame& f : g.frames) frames.push_back(FrameJson(f));
    groups.push_back({{"count", g.members.size()},
                      {"innermost", g.frames.empty() ? json(nullptr) : FrameJson(g.frames.front())},
                      {"frames", std::move(frames)},
                      {"members", g.members}});
  }
  json procs = json::array();
  for (const ProcessStack& p : processes) {
    json threads = json::array();
    for (const ThreadStack& t : p.threads) {
      json frames = json::array();
      for (const StackFrame& f : t.frames) frames.push_back(FrameJson(f));
      threads.push_back({{"name", t.name}, {"os_thread_id", t.os_thread_id}, {"main", t.main}, {"frames", frames}});
    }
    procs.push_back({{"role", p.role},
                     {"replica_id", p.replica_id},
                     {"pid", p.pid},
                     {"host", p.host},
                     {"rank", p.rank ? json(*p.rank) : json(nullptr)},
                     {"command", p.command},
                     {"threads", std::move(threads)},
                     {"error", p.error.empty() ? json(nullptr) : json(p.error)}});
  }
  return json{{"groups", std::move(groups)}, {"processes", std::move(procs)}}.dump(-1, ' ', false,
                                                                                   json::error_handler_t::replace);
}

}  // namespace torchx::schedulers
