#include "plugins/json_scheduler.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "torchx/specs/app_id.h"
#include "torchx/specs/app_state.h"
#include "torchx/specs/serialize.h"

namespace torchx::plugins {
namespace {

using Json = nlohmann::json;

class JsonScheduler : public schedulers::Scheduler {
 public:
  JsonScheduler(std::string backend, std::string session, specs::RunOpts opts,
                std::unique_ptr<JsonSchedulerChannel> channel, schedulers::Capabilities caps)
      : Scheduler(std::move(backend), std::move(session)),
        opts_(std::move(opts)),
        ch_(std::move(channel)),
        caps_(caps) {}

  specs::RunOpts run_opts() const override { return opts_; }
  schedulers::Capabilities capabilities() const override { return caps_; }

  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override { return ch_->Schedule(info.payload); }

  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::string out, ch_->Describe(app_id));
    return DescribeFromJson(backend(), app_id, out);
  }

  Result<std::vector<schedulers::ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(std::string out, ch_->List());
    return ListFromJson(backend(), out);
  }

  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& app_id,
                                                           const schedulers::LogOptions& o) override {
    std::string req = Json{{"app_id", app_id}, {"role", o.role}, {"k", o.replica}}.dump();
    TORCHX_ASSIGN_OR_RETURN(std::string text, ch_->Logs(req));
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      size_t end = nl == std::string::npos ? text.size() : nl + 1;
      std::string line = text.substr(start, end - start);
      lines.push_back(std::move(line));
      start = end;
    }
    return schedulers::MakeLinesIterator(std::move(lines));
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    schedulers::DryRunInfo info;
    info.app = app;
    info.app_id = specs::MakeUnique(specs::NormalizeName(app.name));
    Json req = {{"app", Json::parse(specs::AppDefToJson(app, -1))},
                {"cfg", Json::parse(specs::CfgToJson(cfg.values()))},
                {"app_id", info.app_id},
                {"session_name", session_name()}};
    TORCHX_ASSIGN_OR_RETURN(std::string out, ch_->DryRun(req.dump(-1, ' ', false, Json::error_handler_t::replace)));
    Json j = Json::parse(out, nullptr, false);
    if (!j.is_object() || !j.contains("payload")) {
      return InternalError(fmt::format("{}: dryrun: expected an object with request and payload", backend()));
    }
    info.request = j.value("request", "");
    info.payload = j["payload"].is_string() ? j["payload"].get<std::string>() : j["payload"].dump();
    return info;
  }

  Status DoCancel(const std::string& app_id) override { return ch_->Cancel(app_id); }

 private:
  specs::RunOpts opts_;
  std::unique_ptr<JsonSchedulerChannel> ch_;
  schedulers::Capabilities caps_;
};

}  // namespace

Result<std::optional<schedulers::DescribeAppResponse>> DescribeFromJson(std::string_view backend,
                                                                        const std::string& app_id,
                                                                        const std::string& text) {
  if (text == "null") return std::optional<schedulers::DescribeAppResponse>();
  TORCHX_ASSIGN_OR_RETURN(specs::AppStatus st, specs::AppStatusFromJson(text));
  schedulers::DescribeAppResponse d;
  d.app_id = app_id;
  d.state = st.state;
  d.num_restarts = st.num_restarts;
  d.msg = st.msg;
  d.structured_error_msg = st.structured_error_msg;
  d.ui_url = st.ui_url;
  d.roles_statuses = st.roles;
  Json j = Json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("app") && j["app"].is_object()) {
    auto app = specs::AppDefFromJson(j["app"].dump());
    if (!app) return app.error().WithContext(fmt::format("{}: describe: app", backend));
    d.app = std::move(*app);
  }
  return std::optional(std::move(d));
}

Result<std::vector<schedulers::ListAppResponse>> ListFromJson(std::string_view backend, const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_array()) return InternalError(fmt::format("{}: list: not a JSON list", backend));
  std::vector<schedulers::ListAppResponse> apps;
  for (const Json& a : j) {
    schedulers::ListAppResponse r;
    r.app_id = a.value("app_id", "");
    r.name = a.value("name", "");
    auto state = a.contains("state") && a["state"].is_number_integer()
                     ? Result<specs::AppState>(static_cast<specs::AppState>(a["state"].get<int>()))
                     : specs::ParseAppState(a.value("state", "UNKNOWN"));
    r.state = state ? *state : specs::AppState::kUnknown;
    apps.push_back(std::move(r));
  }
  return apps;
}

std::unique_ptr<schedulers::Scheduler> MakeJsonScheduler(std::string backend, std::string session, specs::RunOpts opts,
                                                         std::unique_ptr<JsonSchedulerChannel> channel,
                                                         schedulers::Capabilities capabilities) {
  return std::make_unique<JsonScheduler>(std::move(backend), std::move(session), std::move(opts), std::move(channel),
                                         capabilities);
}

}  // namespace torchx::plugins
