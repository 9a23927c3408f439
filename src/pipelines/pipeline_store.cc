#include "pipelines/pipeline_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/state_dir.h"

namespace torchx::pipelines {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kPhaseNames[] = {"waiting", "submitting", "submitted", "done", "skipped"};

std::string PhaseName(StepPhase p) { return kPhaseNames[static_cast<int>(p)]; }

Result<StepPhase> ParsePhase(const std::string& s) {
  for (int i = 0; i < 5; ++i) {
    if (s == kPhaseNames[i]) return static_cast<StepPhase>(i);
  }
  return InvalidArgumentError(fmt::format("pipeline record: unknown step phase `{}`", s));
}

Status StoreError(const std::string& what, int err) {
  return UnavailableError(fmt::format("pipeline store: {}: {}", what, std::strerror(err)));
}

// Holds the store's lock file (flock: released if the holder dies).
class StoreLock {
 public:
  explicit StoreLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    err_ = fd_ < 0 ? errno : 0;
  }
  ~StoreLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status status(const std::string& path) const { return fd_ >= 0 ? OkStatus() : StoreError("lock " + path, err_); }

 private:
  int fd_ = -1;
  int err_ = 0;
};

}  // namespace

StepRecord* PipelineRecord::Step(const std::string& step_name) {
  for (StepRecord& s : steps) {
    if (s.name == step_name) return &s;
  }
  return nullptr;
}

std::string PipelineRecordToJson(const PipelineRecord& r) {
  Json steps = Json::array();
  for (const StepRecord& s : r.steps) {
    steps.push_back({{"name", s.name},
                     {"depends_on", s.depends_on},
                     {"scheduler", s.scheduler},
                     {"app", Json::parse(s.app_json)},
                     {"cfg", Json::parse(s.cfg_json)},
                     {"phase", PhaseName(s.phase)},
                     {"handle", s.handle},
                     {"state", std::string(specs::AppStateName(s.state))},
                     {"msg", s.msg},
                     {"submitted", s.submitted ? Json(*s.submitted) : Json(nullptr)},
                     {"ended", s.ended ? Json(*s.ended) : Json(nullptr)}});
  }
  Json j = {{"id", r.id},
            {"name", r.name},
            {"session", r.session},
            {"cwd", r.cwd},
            {"created", r.created},
            {"sequenced_by", std::string(SequencerName(r.sequenced_by))},
            {"cancel_requested", r.cancel_requested},
            {"final_state", r.final_state ? Json(std::string(specs::AppStateName(*r.final_state))) : Json(nullptr)},
            {"msg", r.msg},
            {"steps", std::move(steps)}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

Result<PipelineRecord> PipelineRecordFromJson(const std::string& text) {
  try {
    Json j = Json::parse(text);
    PipelineRecord r;
    r.id = j.at("id").get<std::string>();
    r.name = j.at("name").get<std::string>();
    r.session = j.at("session").get<std::string>();
    r.cwd = j.at("cwd").get<std::string>();
    r.created = j.at("created").get<double>();
    if (j.contains("sequenced_by")) {
      std::string by = j.at("sequenced_by").get<std::string>();
      if (by != "driver" && by != "scheduler") {
        return InvalidArgumentError(
            fmt::format("pipeline record: sequenced_by: invalid value '{}', must be one of "
                        "[driver, scheduler]",
                        by));
      }
      r.sequenced_by = by == "scheduler" ? Sequencer::kScheduler : Sequencer::kDriver;
    } else {  // written before sequenced_by: only Slurm sequenced natively then
      r.sequenced_by = j.at("slurm_native").get<bool>() ? Sequencer::kScheduler : Sequencer::kDriver;
    }
    r.cancel_requested = j.at("cancel_requested").get<bool>();
    if (!j.at("final_state").is_null()) {
      TORCHX_ASSIGN_OR_RETURN(auto st, specs::ParseAppState(j["final_state"].get<std::string>()));
      r.final_state = st;
    }
    r.msg = j.at("msg").get<std::string>();
    for (const Json& s : j.at("steps")) {
      StepRecord step;
      step.name = s.at("name").get<std::string>();
      step.depends_on = s.at("depends_on").get<std::vector<std::string>>();
      step.scheduler = s.at("scheduler").get<std::string>();
      step.app_json = s.at("app").dump();
      step.cfg_json = s.at("cfg").dump();
      TORCHX_ASSIGN_OR_RETURN(step.phase, ParsePhase(s.at("phase").get<std::string>()));
      step.handle = s.at("handle").get<std::string>();
      TORCHX_ASSIGN_OR_RETURN(step.state, specs::ParseAppState(s.at("state").get<std::string>()));
      step.msg = s.at("msg").get<std::string>();
      // Records written before steps were timed have neither.
      if (s.contains("submitted") && s["submitted"].is_number()) step.submitted = s["submitted"].get<double>();
      if (s.contains("ended") && s["ended"].is_number()) step.ended = s["ended"].get<double>();
      r.steps.push_back(std::move(step));
    }
    return r;
  } catch (const Json::exception& e) {
    return InternalError(fmt::format("pipeline record: {}", e.what()));
  }
}

// Another user able to write here could rewrite what a pipeline submits next.
Status PipelineStore::EnsureDir() const { return internal::EnsurePrivateDir(dir_, "pipeline store"); }

std::string PipelineStore::PathOf(const std::string& id) const { return (fs::path(dir_) / (id + ".json")).string(); }

Status PipelineStore::Write(const PipelineRecord& record) const {
  std::string path = PathOf(record.id);
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return StoreError("write " + tmp, errno);
  std::string text = PipelineRecordToJson(record);
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return StoreError("write " + tmp, err);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return StoreError("fsync " + tmp, err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return StoreError("rename " + tmp, err);
  }
  // The rename itself is durable only once the directory is: without this a power loss could
  // bring back an older record (a step "waiting" again that was already submitted).
  if (int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return OkStatus();
}

Status PipelineStore::Create(const PipelineRecord& record) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(lock_path));
  std::error_code ec;
  if (fs::exists(PathOf(record.id), ec)) {
    return AlreadyExistsError(fmt::format("pipeline store: pipeline {} already exists", record.id));
  }
  return Write(record);
}

Result<std::optional<PipelineRecord>> PipelineStore::Get(const std::string& id) const {
  std::ifstream f(PathOf(id), std::ios::binary);
  if (!f) return std::optional<PipelineRecord>();
  std::stringstream buf;
  buf << f.rdbuf();
  auto r = PipelineRecordFromJson(buf.str());
  if (!r) return r.error().WithContext(PathOf(id));
  return std::optional(std::move(*r));
}

Result<PipelineRecord> PipelineStore::Update(const std::string& id,
                                             const std::function<Status(PipelineRecord&)>& edit) {
  TORCHX_RETURN_IF_ERROR(EnsureDir());
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(lock_path));
  TORCHX_ASSIGN_OR_RETURN(auto record, Get(id));
  if (!record) return NotFoundError(fmt::format("pipeline {} does not exist", id));
  TORCHX_RETURN_IF_ERROR(edit(*record));
  TORCHX_RETURN_IF_ERROR(Write(*record));
  return std::move(*record);
}

Result<std::vector<PipelineRecord>> PipelineStore::List() const {
  std::vector<PipelineRecord> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".json") continue;
    auto r = Get(p.stem().string());
    if (r && *r) out.push_back(std::move(**r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created > b.created; });
  return out;
}

Status PipelineStore::Remove(const std::string& id) {
  std::string lock_path = (fs::path(dir_) / ".lock").string();
  StoreLock lock(lock_path);
  TORCHX_RETURN_IF_ERROR(lock.status(lock_path));
  if (::unlink(PathOf(id).c_str()) != 0 && errno != ENOENT) return StoreError("remove " + PathOf(id), errno);
  for (const char* suffix : {".driver.log", ".driver.lock"}) {
    std::error_code ec;
    fs::remove(fs::path(dir_) / (id + suffix), ec);
  }
  return OkStatus();
}

}  // namespace torchx::pipelines
