// NVML through dlopen. Only the handful of NVML functions the resource view needs are declared
// here, with NVML's C ABI (stable across drivers; the versioned names are the ones the headers map
// to), so building needs no CUDA headers.
#include "torchx/devices/gpu_metrics.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

namespace torchx::devices {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned long long kNvmlValueNotAvailable = ULLONG_MAX;

struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlProcessInfoV1 {  // nvmlDeviceGetComputeRunningProcesses (unversioned)
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
struct NvmlProcessInfo {  // the _v2 and _v3 functions
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct NvmlProcessUtilizationSample {
  unsigned int pid;
  unsigned long long timestamp;
  unsigned int sm_util;
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};

class Nvml final : public GpuMetrics {
 public:
  static Result<std::unique_ptr<GpuMetrics>> Open(const std::string& library) {
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      return UnavailableError(fmt::format("no NVIDIA driver on this host ({} not found)", library));
    }
    std::unique_ptr<Nvml> nvml(new Nvml(handle));
    if (Status s = nvml->Bind(library); !s.ok()) return s;
    if (nvmlReturn_t rc = nvml->init_(); rc != kNvmlSuccess) {
      nvml->initialized_ = false;
      return UnavailableError(fmt::format("NVML did not initialise: {}", nvml->ErrorString(rc)));
    }
    nvml->initialized_ = true;
    return std::unique_ptr<GpuMetrics>(std::move(nvml));
  }

  ~Nvml() override {
    if (initialized_ && shutdown_) shutdown_();
    dlclose(handle_);
  }

  Result<std::vector<GpuDeviceSample>> Sample() override {
    unsigned int count = 0;
    if (nvmlReturn_t rc = count_(&count); rc != kNvmlSuccess) {
      return UnavailableError(fmt::format("NVML: cannot count GPUs: {}", ErrorString(rc)));
    }
    std::vector<GpuDeviceSample> out;
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (by_index_(i, &dev) != kNvmlSuccess) continue;  // e.g. a GPU fallen off the bus
      GpuDeviceSample s;
      s.index = static_cast<int>(i);
      char name[96] = {0};
      if (name_ && name_(dev, name, sizeof(name)) == kNvmlSuccess) s.name = name;
      NvmlUtilization util{};
      if (utilization_(dev, &util) == kNvmlSuccess) s.utilization_percent = util.gpu;
      NvmlMemory mem{};
      if (memory_(dev, &mem) == kNvmlSuccess) {
        s.memory_total_bytes = static_cast<int64_t>(mem.total);
        s.memory_used_bytes = static_cast<int64_t>(mem.used);
      }
      s.processes = Processes(dev);
      AddProcessUtilization(dev, i, s.processes);
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  explicit Nvml(void* handle) : handle_(handle) {}

  template <typename F>
  bool Sym(F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(handle_, name));
    return fn != nullptr;
  }

  Status Bind(const std::string& library) {
    bool ok = (Sym(init_, "nvmlInit_v2") || Sym(init_, "nvmlInit")) &&
              (Sym(count_, "nvmlDeviceGetCount_v2") || Sym(count_, "nvmlDeviceGetCount")) &&
              (Sym(by_index_, "nvmlDeviceGetHandleByIndex_v2") || Sym(by_index_, "nvmlDeviceGetHandleByIndex")) &&
              Sym(utilization_, "nvmlDeviceGetUtilizationRates") && Sym(memory_, "nvmlDeviceGetMemoryInfo");
    if (!ok) return UnavailableError(fmt::format("{} lacks NVML's device functions", library));
    Sym(shutdown_, "nvmlShutdown");
    Sym(name_, "nvmlDeviceGetName");
    Sym(error_string_, "nvmlErrorString");
    Sym(process_util_, "nvmlDeviceGetProcessUtilization");
    if (!Sym(processes_, "nvmlDeviceGetComputeRunningProcesses_v3") &&
        !Sym(processes_, "nvmlDeviceGetComputeRunningProcesses_v2")) {
      Sym(processes_v1_, "nvmlDeviceGetComputeRunningProcesses");
    }
    return OkStatus();
  }

  std::string ErrorString(nvmlReturn_t rc) const {
    const char* s = error_string_ ? error_string_(rc) : nullptr;
    return s ? fmt::format("{} ({})", s, rc) : fmt::format("error {}", rc);
  }

  static std::optional<int64_t> Bytes(unsigned long long v) {
    if (v == kNvmlValueNotAvailable) return std::nullopt;  // e.g. no permission in a container
    return static_cast<int64_t>(v);
  }

  std::vector<GpuProcess> Processes(nvmlDevice_t dev) {
    std::vector<GpuProcess> out;
    unsigned int n = 256;
    if (processes_) {
      std::vector<NvmlProcessInfo> infos(n);
      if (processes_(dev, &n, infos.data()) != kNvmlSuccess) return out;
      for (unsigned int i = 0; i < n && i < infos.size(); ++i) {
        out.push_back({static_cast<int>(infos[i].pid), Bytes(infos[i].used_gpu_memory), std::nullopt});
      }
    } else if (processes_v1_) {
      std::vector<NvmlProcessInfoV1> infos(n);
      if (processes_v1_(dev, &n, infos.data()) != kNvmlSuccess) return out;
      for (unsigned int i = 0; i < n && i < infos.size(); ++i) {
        out.push_back({static_cast<int>(infos[i].pid), Bytes(infos[i].used_gpu_memory), std::nullopt});
      }
    }
    return out;
  }

  // The driver keeps a ring of per-process SM samples: each process's newest one since the last
  // call is its share of the device now (what `nvidia-smi pmon` shows). Only samples newer than
  // the last call's count: the ring also holds unused and stale entries. None new (not supported,
  // the process idle since): left unset, and the device's figure stands in.
  void AddProcessUtilization(nvmlDevice_t dev, unsigned int index, std::vector<GpuProcess>& procs) {
    if (!process_util_ || procs.empty()) return;
    unsigned long long& last_seen = last_seen_[index];
    unsigned int n = 0;
    // Asking with no buffer answers how many entries to pass (NVML_ERROR_INSUFFICIENT_SIZE).
    (void)process_util_(dev, nullptr, &n, last_seen);
    if (n == 0) return;
    std::vector<NvmlProcessUtilizationSample> samples(n + 8);
    n = static_cast<unsigned int>(samples.size());
    if (process_util_(dev, samples.data(), &n, last_seen) != kNvmlSuccess) return;
    std::map<unsigned int, const NvmlProcessUtilizationSample*> newest;
    unsigned long long seen = last_seen;
    for (unsigned int i = 0; i < n && i < samples.size(); ++i) {
      const NvmlProcessUtilizationSample& s = samples[i];
      if (s.pid == 0 || s.timestamp <= last_seen) continue;
      auto [it, fresh] = newest.try_emplace(s.pid, &s);
      if (!fresh && s.timestamp > it->second->timestamp) it->second = &s;
      seen = std::max(seen, s.timestamp);
    }
    last_seen = seen;
    for (GpuProcess& p : procs) {
      auto it = newest.find(static_cast<unsigned int>(p.pid));
      if (it != newest.end()) p.utilization_percent = it->second->sm_util;
    }
  }

  void* handle_;
  bool initialized_ = false;
  std::map<unsigned int, unsigned long long> last_seen_;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned int*) = nullptr;
  nvmlReturn_t (*by_index_)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name_)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*utilization_)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  nvmlReturn_t (*memory_)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*processes_)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
  nvmlReturn_t (*processes_v1_)(nvmlDevice_t, unsigned int*, NvmlProcessInfoV1*) = nullptr;
  nvmlReturn_t (*process_util_)(nvmlDevice_t, NvmlProcessUtilizationSample*, unsigned int*,
                                unsigned long long) = nullptr;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
};

}  // namespace

Result<std::unique_ptr<GpuMetrics>> OpenNvml(const std::string& library) {
  std::string lib = library;
  if (lib.empty()) {
    const char* env = std::getenv("TORCHX_NVML_LIBRARY");
    lib = env && *env ? env : "libnvidia-ml.so.1";
  }
  return Nvml::Open(lib);
}

}  // namespace torchx::devices
