#include "torchx/schedulers/stacks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

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

namespace {

std::string_view TrimLine(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// "Process 634: cmd" or "Parent Process 634: cmd": the pid, or nullopt.
std::optional<int> SectionPid(std::string_view line, std::string_view prefix) {
  if (!line.starts_with(prefix)) return std::nullopt;
  line.remove_prefix(prefix.size());
  int pid = 0;
  size_t i = 0;
  for (; i < line.size() && i < 9 && line[i] >= '0' && line[i] <= '9'; ++i) pid = pid * 10 + (line[i] - '0');
  if (i == 0 || i >= line.size() || line[i] != ':') return std::nullopt;
  return pid;
}

// `Thread 634 (idle): "MainThread"` (or a hexadecimal id where py-spy has no OS id).
std::optional<ThreadStack> ThreadHeader(std::string_view line) {
  if (!line.starts_with("Thread ")) return std::nullopt;
  line.remove_prefix(7);
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  ThreadStack t;
  std::string_view id = line.substr(0, space);
  if (!id.empty() && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }) && id.size() < 10) {
    t.os_thread_id = std::stoi(std::string(id));
  }
  size_t quote = line.find('"');
  size_t end = line.rfind('"');
  if (quote != std::string_view::npos && end > quote) t.name = std::string(line.substr(quote + 1, end - quote - 1));
  return t;
}

// "    func (file.py:12)" or "    clock_nanosleep (libc.so.6)".
std::optional<StackFrame> FrameLine(std::string_view line) {
  if (!line.starts_with("    ") || line.starts_with("        ")) return std::nullopt;
  line.remove_prefix(4);
  size_t open = line.rfind(" (");
  if (open == std::string_view::npos || line.back() != ')') return std::nullopt;
  StackFrame f;
  f.function = std::string(line.substr(0, open));
  std::string_view where = line.substr(open + 2, line.size() - open - 3);
  size_t colon = where.rfind(':');
  std::string_view digits = colon == std::string_view::npos ? std::string_view() : where.substr(colon + 1);
  if (!digits.empty() && digits.size() < 10 &&
      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    f.line = std::stoi(std::string(digits));
    where = where.substr(0, colon);
  }
  f.file = std::string(where);
  return f;
}

}  // namespace

Result<std::vector<ProcessStack>> ParsePySpyText(std::string_view text) {
  std::vector<ProcessStack> out;
  enum { kOutside, kCommand, kParent, kThreads } at = kOutside;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = TrimLine(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (auto pid = SectionPid(line, "Process "); pid && at != kCommand) {
      ProcessStack p;
      p.pid = *pid;
      p.command = std::string(line.substr(line.find(':') + 1));
      while (!p.command.empty() && p.command.front() == ' ') p.command.erase(0, 1);
      out.push_back(std::move(p));
      at = kCommand;
      continue;
    }
    if (out.empty()) continue;
    ProcessStack& p = out.back();
    if (at == kCommand || at == kParent) {
      // The command runs on to the interpreter's line (an argument may hold newlines); the
      // parent's section, which follows it, to the first thread.
      if (line.starts_with("Python v")) {
        at = kParent;
      } else if (SectionPid(line, "Parent Process ")) {
        at = kParent;
      } else if (at == kCommand && !line.empty()) {
        p.command += " " + std::string(line);
      }
      if (!line.starts_with("Thread ")) continue;
    }
    if (auto t = ThreadHeader(line)) {
      t->main = t->os_thread_id == p.pid || (t->os_thread_id == 0 && t->name == "MainThread");
      p.threads.push_back(std::move(*t));
      at = kThreads;
      continue;
    }
    if (at == kThreads && !p.threads.empty()) {
      if (auto f = FrameLine(line)) p.threads.back().frames.push_back(std::move(*f));
    }
    if (line.starts_with("-----")) at = kOutside;
  }
  if (out.empty()) return InvalidArgumentError("py-spy dump: no `Process <pid>:` section in its output");
  for (ProcessStack& p : out) {
    if (p.command.size() > 160) p.command = p.command.substr(0, 157) + "...";
    if (!p.threads.empty() &&
        std::none_of(p.threads.begin(), p.threads.end(), [](const ThreadStack& t) { return t.main; })) {
      p.threads.front().main = true;
    }
  }
  return out;
}

Result<std::vector<ProcessStack>> ProcessStacksFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("processes") || !j["processes"].is_array()) {
    return InvalidArgumentError("stacks: expected a JSON object with a `processes` list");
  }
  auto str = [](const json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
  };
  auto num = [](const json& o, const char* key) {
    return o.contains(key) && o[key].is_number_integer() ? o[key].get<int>() : 0;
  };
  std::vector<ProcessStack> out;
  for (const json& o : j["processes"]) {
    if (!o.is_object()) return InvalidArgumentError("stacks: a process that is no object");
    ProcessStack p;
    p.role = str(o, "role");
    p.replica_id = num(o, "replica_id");
    p.pid = num(o, "pid");
    p.host = str(o, "host");
    if (o.contains("rank") && o["rank"].is_number_integer()) p.rank = o["rank"].get<int>();
    p.command = str(o, "command");
    p.error = str(o, "error");
    if (o.contains("threads") && o["threads"].is_array()) {
      for (const json& t : o["threads"]) {
        if (!t.is_object()) return InvalidArgumentError("stacks: a thread that is no object");
        ThreadStack thread;
        thread.name = str(t, "name");
        thread.os_thread_id = num(t, "os_thread_id");
        thread.main = t.contains("main") && t["main"].is_boolean() && t["main"].get<bool>();
        if (t.contains("frames") && t["frames"].is_array()) {
          for (const json& f : t["frames"]) {
            if (!f.is_object()) return InvalidArgumentError("stacks: a frame that is no object");
            thread.frames.push_back({str(f, "function"), str(f, "file"), num(f, "line")});
          }
        }
        p.threads.push_back(std::move(thread));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
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
