// Device plugins: accelerator kinds in the style of PyTorch/XLA's PJRT plugins.
//
// A device plugin names an accelerator kind (PJRT_DEVICE value), optionally the PJRT library that
// drives it (a shared library exporting GetPjrtApi), its chip count on this host (or "ask the
// library"), the environment each local process r of n gets, and client create options.
// Selection follows PyTorch/XLA: PJRT_DEVICE=<NAME> picks a registered device; PJRT_DEVICE=LIBRARY
// with PJRT_LIBRARY_PATH=<.so> uses any PJRT library without a registration.
//
// A PJRT library is only ever loaded in a short-lived child process (torchx-device-probe), so a
// plugin that crashes or hangs cannot take the launcher down.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "torchx/status.h"

namespace torchx::devices {

struct DevicePlugin {
  std::string name;          ///< upper case, as PJRT_DEVICE spells it: "TPU", "EXAMPLE"
  std::string library_path;  ///< PJRT library, or empty
  int chip_count = -1;       ///< chips on this host; < 0: ask the PJRT library
  /// Per-process env for local rank r of n; values may hold {rank}, {count}, {chips}.
  std::map<std::string, std::string> env_template;
  std::map<std::string, std::string> create_options;  ///< PJRT client create options (strings)
  std::string source;
  /// Counts chips without PJRT (e.g. from /proc or sysfs); used when set and chip_count < 0.
  std::function<Result<int>()> count_chips;
};

/// What a PJRT library reported.
struct PjrtProbe {
  int api_major = 0;
  int api_minor = 0;
  std::string platform;            ///< PJRT_Client_PlatformName
  int device_count = 0;            ///< addressable devices
  std::vector<std::string> kinds;  ///< PJRT_DeviceDescription_Kind of each, where the API has it
};

/// Loads `library` in a child process: dlopen, GetPjrtApi, API version (major must be 0) and
/// struct-size checks, PJRT_Plugin_Initialize, PJRT_Client_Create with `create_options`,
/// addressable devices, destroy. Errors are kFailedPrecondition with the step that failed
/// ("dlopen", "missing symbol GetPjrtApi", "unsupported PJRT API major version", "PJRT_Api
/// struct too small", "client creation failed: <plugin message>", "crashed (signal N)",
/// "timed out").
Result<PjrtProbe> ProbePjrtLibrary(const std::string& library,
                                   const std::map<std::string, std::string>& create_options = {},
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// chip_count when >= 0, else count_chips, else the PJRT library's device count.
Result<int> DeviceChipCount(const DevicePlugin& device);

/// The environment local process `rank` of `count` gets: PJRT_DEVICE, PJRT_LOCAL_PROCESS_RANK,
/// PJRT_LOCAL_PROCESS_COUNT (and PJRT_LIBRARY_PATH for a library device), then the template.
std::map<std::string, std::string> DeviceEnv(const DevicePlugin& device, int rank, int count, int chips);

/// The registered devices, as the layers below the plugin registry see them: back-ends (the
/// local scheduler's `device` option) and components (`dist.ddp -j ...xauto`) are handed one
/// instead of reaching for the registry.
class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  /// `name` as PJRT_DEVICE spells it (upper case); nullopt when none is registered.
  virtual std::optional<DevicePlugin> Find(const std::string& name) const = 0;
  /// Sorted, for messages.
  virtual std::vector<std::string> Names() const = 0;
};

/// PyTorch/XLA's selection from `pjrt_device` / `pjrt_library_path` (normally $PJRT_DEVICE and
/// $PJRT_LIBRARY_PATH): nullopt when pjrt_device is empty; "LIBRARY" builds a device from the
/// path; other names are looked up in `devices` (kNotFound listing its names).
Result<std::optional<DevicePlugin>> SelectDevice(const std::string& pjrt_device, const std::string& pjrt_library_path,
                                                 const DeviceSource& devices);

/// The chip count of the device $PJRT_DEVICE (with $PJRT_LIBRARY_PATH) selects: what
/// `dist.ddp -j ...xauto` runs per node. kFailedPrecondition when PJRT_DEVICE is unset.
Result<int> SelectedDeviceChipCount(const DeviceSource& devices);

}  // namespace torchx::devices
