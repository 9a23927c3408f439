// What slurm offers TorchX's Python SlurmScheduler through Scheduler::Helper: pure functions, JSON
// text in and out, no engine contact (the binding reaches back-ends only this way).
//   materialize  a request (SlurmBatchRequest JSON)  -> its batch script (a JSON string)
//   app_state    a Slurm state name (a JSON string)  -> the AppState (an integer)
//   states       (ignored)                           -> {Slurm state name: AppState}
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::schedulers::slurm {

/// kInvalidArgument naming what is wrong with `args_json`; kNotFound listing the functions.
Result<std::string> SlurmHelper(std::string_view function, std::string_view args_json);

}  // namespace torchx::schedulers::slurm
