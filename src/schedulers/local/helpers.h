// What local_cwd offers TorchX's Python LocalScheduler through Scheduler::Helper: the app plan
// (TorchX's PopenRequest is the core's plan), JSON in and out, nothing started.
//   plan  {"app": AppDef, "inputs": {app_id, session, cwd, log_dir, prepend_cwd,
//          auto_set_cuda_visible_devices, visible_gpus, role_dirs: {role: {img_root, cwd}}}}
//         -> {"plan": the plan, "printable": its printable form}
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::schedulers::local {

/// kInvalidArgument naming the argument that is wrong; kNotFound listing the functions.
Result<std::string> LocalHelper(std::string_view function, std::string_view args_json);

}  // namespace torchx::schedulers::local
