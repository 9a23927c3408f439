// Ray's job details and the driver's framed log (what a dashboard of any version, or something
// else on its port, may answer): never crashes; a decoded job has its id and status, times are
// positive, and a replica line's text lies within the line.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "schedulers/ray/ray_frames.h"
#include "schedulers/ray/ray_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  namespace r = torchx::schedulers::ray;
  if (auto job = r::ParseRayJob(text, "fuzz"); job.ok()) {
    if (job->submission_id.empty() || job->status.empty()) std::abort();
    if ((job->start_time && *job->start_time <= 0) || (job->end_time && *job->end_time <= 0)) std::abort();
  }
  if (auto jobs = r::ParseRayJobList(text, "fuzz"); jobs.ok()) {
    for (const r::RayJob& j : *jobs) {
      if (j.submission_id.empty() || j.status.empty()) std::abort();
    }
  }
  r::GangStatus g = r::ReadGangStatus(text);
  (void)r::ClassifyRayFailure("FAILED", "", text.substr(0, 64), g);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        std::string_view(text).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos + 1);
    if (auto l = r::ParseReplicaLine(line)) {
      if (l->text.data() < line.data() || l->text.data() + l->text.size() > line.data() + line.size()) std::abort();
      if (l->replica < 0 || l->role.empty()) std::abort();
    }
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return 0;
}
