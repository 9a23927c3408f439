// Components and schedulers from native plugins: the core's interfaces over the C descriptors,
// speaking the JSON forms of plugin_abi.h. Strings the plugin returns are freed with its own
// free_string.
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/native_loader.h"
#include "torchx/components/component_json.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::plugins {
namespace {

using Json = nlohmann::json;

// Calls fn(&error) and takes ownership of both strings.
template <typename Fn>
Result<std::string> CallPlugin(void (*free_string)(char*), std::string_view what, Fn fn) {
  char* error = nullptr;
  char* out = fn(&error);
  std::string err = error ? error : "";
  if (error) free_string(error);
  if (!out) return UnavailableError(fmt::format("{}: {}", what, err.empty() ? "the plugin failed" : err));
  std::string result(out);
  free_string(out);
  return result;
}

class NativeComponent : public components::Component {
 public:
  NativeComponent(const TorchxComponent& c, components::ComponentSpec spec, std::string origin)
      : c_(c), spec_(std::move(spec)), origin_(std::move(origin)) {}
  const components::ComponentSpec& spec() const override { return spec_; }
  std::string origin() const override { return origin_; }
  Result<specs::AppDef> Build(const components::ComponentArgs& args) const override {
    std::string in = components::ComponentArgsToJson(args);
    auto out = CallPlugin(c_.free_string, spec_.name,
                          [&](char** error) { return c_.build(c_.user, in.c_str(), error); });
    if (!out) return InvalidArgumentError(out.error().message());
    return specs::AppDefFromJson(*out);
  }

 private:
  TorchxComponent c_;
  components::ComponentSpec spec_;
  std::string origin_;
};

class LinesIterator : public schedulers::LogIterator {
 public:
  LinesIterator(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  Result<std::optional<std::string>> Next() override {
    if (i_ >= lines_.size()) return std::optional<std::string>();
    return std::optional<std::string>(lines_[i_++]);
  }

 private:
  std::vector<std::string> lines_;
  size_t i_ = 0;
};

class NativeScheduler : public schedulers::Scheduler {
 public:
  NativeScheduler(const TorchxScheduler& s, const std::string& session, void* self, specs::RunOpts opts)
      : Scheduler(s.name, session), s_(s), self_(self), opts_(std::move(opts)) {}
  ~NativeScheduler() override {
    if (s_.destroy) s_.destroy(self_);
  }

  specs::RunOpts run_opts() const override { return opts_; }
  unsigned capabilities() const override {
    return (s_.list ? schedulers::kCapList : 0u) | (s_.logs ? schedulers::kCapLogs : 0u);
  }

  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    return Call("schedule", [&](char** e) { return s_.schedule(self_, info.payload.c_str(), e); });
  }

  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::string out, Call("describe", [&](char** e) {
                              return s_.describe(self_, app_id.c_str(), e);
                            }));
    if (out == "null") return std::optional<schedulers::DescribeAppResponse>();
    TORCHX_ASSIGN_OR_RETURN(specs::AppStatus st, specs::AppStatusFromJson(out));
    schedulers::DescribeAppResponse d;
    d.app_id = app_id;
    d.state = st.state;
    d.num_restarts = st.num_restarts;
    d.msg = st.msg;
    d.structured_error_msg = st.structured_error_msg;
    d.ui_url = st.ui_url;
    d.roles_statuses = st.roles;
    return std::optional(std::move(d));
  }

  Result<std::vector<schedulers::ListAppResponse>> List() override {
    if (!s_.list) return Unsupported("list");
    TORCHX_ASSIGN_OR_RETURN(std::string out, Call("list", [&](char** e) { return s_.list(self_, e); }));
    Json j = Json::parse(out, nullptr, false);
    if (!j.is_array()) return InternalError(fmt::format("{}: list: not a JSON list", backend()));
    std::vector<schedulers::ListAppResponse> apps;
    for (const Json& a : j) {
      schedulers::ListAppResponse r;
      r.app_id = a.value("app_id", "");
      r.name = a.value("name", "");
      auto state = specs::ParseAppState(a.value("state", "UNKNOWN"));
      r.state = state ? *state : specs::AppState::kUnknown;
      apps.push_back(std::move(r));
    }
    return apps;
  }

  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
                                                           const schedulers::LogOptions& o) override {
    if (!s_.logs) return Unsupported("logs");
    std::string req = Json{{"app_id", app_id}, {"role", o.role}, {"k", o.replica}}.dump();
    TORCHX_ASSIGN_OR_RETURN(std::string text, Call("logs", [&](char** e) { return s_.logs(self_, req.c_str(), e); }));
    std::optional<std::regex> re;
    if (o.regex) re.emplace(*o.regex);
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      size_t end = nl == std::string::npos ? text.size() : nl + 1;
      std::string line = text.substr(start, end - start);
      if (!re || std::regex_search(line, *re)) lines.push_back(std::move(line));
      start = end;
    }
    return std::unique_ptr<schedulers::LogIterator>(std::make_unique<LinesIterator>(std::move(lines)));
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::Cfg& cfg) override {
    schedulers::DryRunInfo info;
    info.scheduler = backend();
    info.app = app;
    info.cfg = cfg;
    info.app_id = specs::MakeUnique(specs::NormalizeName(app.name));
    Json req = {{"app", Json::parse(specs::AppDefToJson(app, -1))},
                {"cfg", Json::parse(specs::CfgToJson(cfg))},
                {"app_id", info.app_id},
                {"session_name", session_name()}};
    std::string text = req.dump(-1, ' ', false, Json::error_handler_t::replace);
    TORCHX_ASSIGN_OR_RETURN(std::string out, Call("dryrun", [&](char** e) { return s_.dryrun(self_, text.c_str(), e); }));
    Json j = Json::parse(out, nullptr, false);
    if (!j.is_object() || !j.contains("payload")) {
      return InternalError(fmt::format("{}: dryrun: expected {{\"request\", \"payload\"}}", backend()));
    }
    info.request = j.value("request", "");
    info.payload = j["payload"].is_string() ? j["payload"].get<std::string>() : j["payload"].dump();
    return info;
  }

  Status DoCancel(const std::string& app_id) override {
    return Call("cancel", [&](char** e) { return s_.cancel(self_, app_id.c_str(), e); }).status();
  }

 private:
  template <typename Fn>
  Result<std::string> Call(std::string_view what, Fn fn) {
    return CallPlugin(s_.free_string, fmt::format("{}: {}", backend(), what), fn);
  }

  TorchxScheduler s_;
  void* self_;
  specs::RunOpts opts_;
};

}  // namespace

std::shared_ptr<components::Component> MakeNativeComponent(const TorchxComponent& c, std::string origin,
                                                           Status* error) {
  auto spec = components::ComponentSpecFromJson(c.spec_json);
  if (!spec) {
    *error = spec.error();
    return nullptr;
  }
  return std::make_shared<NativeComponent>(c, std::move(*spec), std::move(origin));
}

schedulers::SchedulerFactory MakeNativeSchedulerFactory(const TorchxScheduler& desc) {
  TorchxScheduler s = desc;
  return [s](const std::string& session) -> Result<std::unique_ptr<schedulers::Scheduler>> {
    specs::RunOpts opts;
    if (s.runopts_json) {
      TORCHX_ASSIGN_OR_RETURN(opts, specs::RunOptsFromJson(s.runopts_json));
    }
    void* self = s.create(s.user, session.c_str());
    if (!self) return UnavailableError(fmt::format("{}: the plugin could not create the scheduler", s.name));
    return std::unique_ptr<schedulers::Scheduler>(std::make_unique<NativeScheduler>(s, session, self, std::move(opts)));
  };
}

}  // namespace torchx::plugins
