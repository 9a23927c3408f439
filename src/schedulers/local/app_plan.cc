#include "schedulers/local/app_plan.h"

#include <filesystem>
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/pystr.h"
#include "torchx/specs/macros.h"

namespace torchx::schedulers::local {
namespace {

using Json = nlohmann::json;

// TorchX's layout: <app_dir>/<role>/<replica_id>, the error file in it.
std::string StandardLogDir(const std::string& app_dir, const std::string& role, int replica_id) {
  return (std::filesystem::path(app_dir) / role / std::to_string(replica_id)).string();
}

std::string ErrorFileIn(const std::string& log_dir) { return (std::filesystem::path(log_dir) / "error.json").string(); }

std::string JoinPath(std::vector<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (p.empty()) continue;
    out += (out.empty() ? "" : ":") + p;
  }
  return out;
}

}  // namespace

Result<AppPlan> BuildAppPlan(const specs::AppDef& app, const PlanInputs& in) {
  AppPlan plan;
  plan.app_id = in.app_id;
  plan.app_dir = (std::filesystem::path(in.log_dir) / in.session / in.app_id).string();
  plan.kill_grace_seconds = in.kill_grace_seconds;
  plan.resource_interval = in.resource_interval;

  long long replicas = 0;
  for (const specs::Role& role : app.roles) replicas += role.num_replicas;
  if (in.max_replicas > 0 && replicas > in.max_replicas) {
    return InvalidArgumentError(
        fmt::format("num_replicas: the app has {} replicas in all; the local scheduler can run at most {} at once on "
                    "this host (five open files each, within the open-file limit `ulimit -Hn`)",
                    replicas, in.max_replicas));
  }
  int gpus_needed = 0;
  for (const specs::Role& role : app.roles) gpus_needed += std::max(0, role.resource.gpu) * role.num_replicas;
  bool assign_gpus = in.auto_set_cuda_visible_devices && gpus_needed > 0;
  if (assign_gpus && gpus_needed > in.visible_gpus) {
    assign_gpus = false;
    plan.warnings.push_back(fmt::format(
        "auto_set_cuda_visible_devices: the app asks for {} GPUs in all but this host has {}; CUDA_VISIBLE_DEVICES "
        "is not set, so every replica sees all of the host's GPUs",
        gpus_needed, in.visible_gpus));
  }
  if (in.device) {
    for (const specs::Role& role : app.roles) {
      if (role.num_replicas > in.device_chips) {
        return InvalidArgumentError(
            fmt::format("device {}: role {} has {} replicas but this host has {} {} chips (one process per chip)",
                        in.device->name, role.name, role.num_replicas, in.device_chips, in.device->name));
      }
    }
  }
  int next_gpu = 0;
  for (const specs::Role& role : app.roles) {
    plan.roles[role.name] = RolePolicy{role.max_retries, role.retry_policy};
    auto dir = in.role_dirs.find(role.name);
    const std::string& img_root = dir == in.role_dirs.end() ? in.cwd : dir->second.img_root;
    const std::string& cwd = dir == in.role_dirs.end() ? in.cwd : dir->second.cwd;
    for (int i = 0; i < role.num_replicas; ++i) {
      specs::macros::Values values{img_root, in.app_id, std::to_string(i), "TORCHX_RANK0_HOST"};
      specs::Role r = values.Apply(role);
      ReplicaPlan rp;
      rp.role = role.name;
      rp.replica_id = i;
      rp.cwd = cwd;
      rp.log_dir = StandardLogDir(plan.app_dir, role.name, i);
      rp.error_file = ErrorFileIn(rp.log_dir);
      rp.argv.push_back(r.entrypoint);
      rp.argv.insert(rp.argv.end(), r.args.begin(), r.args.end());
      rp.env = r.env;
      rp.env["TORCHX_RANK0_HOST"] = "localhost";
      rp.env.emplace("TORCHELASTIC_ERROR_FILE", rp.error_file);
      rp.env.emplace("PET_LOG_DIR", (std::filesystem::path(plan.app_dir) / "torchelastic" / role.name).string());
      // The request holds only the app's PATH (TorchX HEAD's rule: the working directory after the
      // role's PATH, or before it with prepend_cwd); the launcher appends the environment's PATH
      // at exec time, as it sets PYTHONUNBUFFERED.
      std::string role_path = r.env.count("PATH") ? r.env.at("PATH") : "";
      std::string path = in.prepend_cwd ? JoinPath({cwd, role_path}) : JoinPath({role_path, cwd});
      if (path.empty()) {
        rp.env.erase("PATH");
      } else {
        rp.env["PATH"] = path;
      }
      if (assign_gpus && role.resource.gpu > 0) {
        std::string devices;
        for (int g = 0; g < role.resource.gpu; ++g) devices += (g ? "," : "") + std::to_string(next_gpu++);
        rp.env["CUDA_VISIBLE_DEVICES"] = devices;
      }
      if (in.device) {
        for (auto& [k, v] : devices::DeviceEnv(*in.device, i, role.num_replicas, in.device_chips)) rp.env[k] = v;
      }
      plan.replicas.push_back(std::move(rp));
    }
  }
  return plan;
}

namespace {

// The stored plan (version 2, AppPlanToStoredJson) writes each replica as the differences from what the previous
// replica of its role predicts (ExpectedAfter): a role of identical replicas costs a few bytes per replica instead of
// its whole command and environment, which both the submitter and the supervisor would otherwise write, store and parse
// on every start. Version 1 plans (every field of every replica) still read.
constexpr int kPlanVersion = 2;

// Replica `replica_id` of `prev`'s role as `prev` predicts it: the same command, working directory and
// environment; its own log directory and error file where `prev` had the standard ones, and any
// variable that named `prev`'s error file or log directory naming its own.
ReplicaPlan ExpectedAfter(const ReplicaPlan& prev, int replica_id, const std::string& app_dir) {
  ReplicaPlan next = prev;
  next.replica_id = replica_id;
  std::string prev_standard = StandardLogDir(app_dir, prev.role, prev.replica_id);
  if (prev.log_dir == prev_standard) next.log_dir = StandardLogDir(app_dir, prev.role, replica_id);
  if (prev.error_file == ErrorFileIn(prev_standard)) next.error_file = ErrorFileIn(next.log_dir);
  for (auto& [k, v] : next.env) {
    if (v == prev.error_file) {
      v = next.error_file;
    } else if (v == prev.log_dir) {
      v = next.log_dir;
    }
  }
  return next;
}

// The plan's JSON is written as text (a fan-out's is thousands of strings), each string as nlohmann
// dumps it, so the text is what dumping the equivalent object would give, keys in its sorted order.
class PlanWriter {
 public:
  std::string& out() { return out_; }
  void Str(const std::string& s) { ::torchx::internal::AppendJsonString(out_, s); }
  void Key(std::string_view key) {  // a key that needs no escaping
    out_ += first_ ? "\"" : ",\"";
    out_ += key;
    out_ += "\":";
    first_ = false;
  }
  void StrKey(const std::string& key) {
    if (!first_) out_ += ',';
    Str(key);
    out_ += ':';
    first_ = false;
  }
  void Open() {
    out_ += '{';
    first_ = true;
  }
  void Close() {
    out_ += '}';
    first_ = false;
  }
  void Strings(const std::vector<std::string>& v) {
    out_ += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += ',';
      Str(v[i]);
    }
    out_ += ']';
  }
  void Env(const std::map<std::string, std::string>& env) {
    Open();
    for (const auto& [k, v] : env) {
      StrKey(k);
      Str(v);
    }
    Close();
  }

 private:
  std::string out_;
  bool first_ = true;
};

// Every field without `expected`; with it, only what differs from it (the stored form).
void WriteReplica(PlanWriter& w, const ReplicaPlan& r, const ReplicaPlan* expected) {
  auto differs = [&](auto member) { return !expected || r.*member != expected->*member; };
  auto str = [&](std::string_view key, std::string ReplicaPlan::*member) {
    if (!differs(member)) return;
    w.Key(key);
    w.Str(r.*member);
  };
  w.Open();
  if (differs(&ReplicaPlan::argv)) {
    w.Key("argv");
    w.Strings(r.argv);
  }
  str("cwd", &ReplicaPlan::cwd);
  if (!expected) {
    w.Key("env");
    w.Env(r.env);
  } else {
    std::map<std::string, std::string> set;
    std::vector<std::string> unset;
    for (const auto& [k, v] : r.env) {
      auto it = expected->env.find(k);
      if (it == expected->env.end() || it->second != v) set.emplace(k, v);
    }
    for (const auto& [k, _] : expected->env) {
      if (!r.env.count(k)) unset.push_back(k);
    }
    if (!set.empty()) {
      w.Key("env");
      w.Env(set);
    }
    if (!unset.empty()) {
      w.Key("env_unset");
      w.Strings(unset);
    }
  }
  str("error_file", &ReplicaPlan::error_file);
  str("log_dir", &ReplicaPlan::log_dir);
  w.Key("replica_id");
  w.out() += std::to_string(r.replica_id);
  w.Key("role");
  w.Str(r.role);
  w.Close();
}

std::string PlanJson(const AppPlan& plan, bool stored) {
  PlanWriter w;
  w.out().reserve(stored ? 4096 + plan.replicas.size() * 48 : 1024 + plan.replicas.size() * 700);
  w.Open();
  w.Key("app_dir");
  w.Str(plan.app_dir);
  w.Key("app_id");
  w.Str(plan.app_id);
  w.Key("kill_grace_seconds");
  w.out() += Json(plan.kill_grace_seconds).dump();
  if (stored) {
    w.Key("plan_version");
    w.out() += std::to_string(kPlanVersion);
  }
  w.Key("replicas");
  w.out() += '[';
  std::map<std::string, const ReplicaPlan*> last;  // role -> its previous replica
  for (size_t i = 0; i < plan.replicas.size(); ++i) {
    const ReplicaPlan& r = plan.replicas[i];
    if (i) w.out() += ',';
    const ReplicaPlan*& prev = last[r.role];
    if (stored && prev) {
      ReplicaPlan expected = ExpectedAfter(*prev, r.replica_id, plan.app_dir);
      WriteReplica(w, r, &expected);
    } else {
      WriteReplica(w, r, nullptr);
    }
    prev = &r;
  }
  w.out() += ']';
  w.Key("resource_interval");
  w.out() += Json(plan.resource_interval).dump();
  w.Key("roles");
  w.Open();
  for (const auto& [name, p] : plan.roles) {
    w.StrKey(name);
    w.Open();
    w.Key("max_retries");
    w.out() += std::to_string(p.max_retries);
    w.Key("retry_policy");
    w.Str(std::string(specs::RetryPolicyName(p.retry_policy)));
    w.Close();
  }
  w.Close();
  w.Close();
  return std::move(w.out());
}

}  // namespace

std::string AppPlanToJson(const AppPlan& plan) { return PlanJson(plan, false); }

std::string AppPlanToStoredJson(const AppPlan& plan) { return PlanJson(plan, true); }

Result<AppPlan> AppPlanFromJson(const std::string& json) {
  try {
    Json j = Json::parse(json);
    AppPlan plan;
    int version = j.value("plan_version", 1);
    if (version > kPlanVersion) {
      return InternalError(
          fmt::format("local: app plan version {} is newer than this torchx reads ({})", version, kPlanVersion));
    }
    if (version < 1) return InternalError(fmt::format("local: corrupt app plan: plan_version {}", version));
    plan.app_id = j.at("app_id");
    plan.app_dir = j.at("app_dir");
    plan.kill_grace_seconds = j.at("kill_grace_seconds");
    plan.resource_interval = j.value("resource_interval", 0.0);  // plans written before sampling: none
    std::map<std::string, size_t> last;  // role -> index of its previous replica in plan.replicas
    for (const Json& r : j.at("replicas")) {
      std::string role = r.at("role");
      int replica_id = r.at("replica_id");
      auto prev = last.find(role);
      bool delta = version >= 2 && prev != last.end();
      ReplicaPlan rp = delta ? ExpectedAfter(plan.replicas[prev->second], replica_id, plan.app_dir) : ReplicaPlan{};
      rp.role = role;
      rp.replica_id = replica_id;
      if (!delta || r.contains("argv")) rp.argv = r.at("argv").get<std::vector<std::string>>();
      if (!delta || r.contains("cwd")) rp.cwd = r.at("cwd");
      if (!delta || r.contains("log_dir")) rp.log_dir = r.at("log_dir");
      if (!delta || r.contains("error_file")) rp.error_file = r.at("error_file");
      if (!delta) {
        rp.env = r.at("env").get<std::map<std::string, std::string>>();
      } else {
        if (r.contains("env")) {
          for (const auto& [k, v] : r.at("env").items()) rp.env[k] = v.get<std::string>();
        }
        if (r.contains("env_unset")) {
          for (const Json& k : r.at("env_unset")) rp.env.erase(k.get<std::string>());
        }
      }
      last[role] = plan.replicas.size();
      plan.replicas.push_back(std::move(rp));
    }
    for (const auto& [name, p] : j.at("roles").items()) {
      TORCHX_ASSIGN_OR_RETURN(specs::RetryPolicy policy,
                              specs::ParseRetryPolicy(p.at("retry_policy").get<std::string>()));
      plan.roles[name] = RolePolicy{p.at("max_retries").get<int>(), policy};
    }
    return plan;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("local: corrupt app plan: {}", e.what()));
  }
}

std::string RenderAppPlan(const AppPlan& plan) {
  std::string out;
  for (const std::string& w : plan.warnings) out += fmt::format("warning: {}\n", w);
  out += fmt::format("app_id: {}\nlog dir: {}\n", plan.app_id, plan.app_dir);
  for (const ReplicaPlan& r : plan.replicas) {
    std::string cmd;
    for (const std::string& a : r.argv) cmd += (cmd.empty() ? "" : " ") + ::torchx::internal::ShlexQuote(a);
    out += fmt::format("{}/{}:\n  cmd: {}\n  cwd: {}\n  env:\n", r.role, r.replica_id, cmd, r.cwd);
    for (const auto& [k, v] : r.env) out += fmt::format("    {}={}\n", k, v);
  }
  return out;
}

}  // namespace torchx::schedulers::local
