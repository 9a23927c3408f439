// What trials report, read where TorchX's trackers leave it:
// - the fsspec tracker (torchx.tracker, `TORCHX_TRACKERS=fsspec`): every `add_metadata(...)` is a
//   file `<root>/<base32 of the run id>/metadata/<time in ns>` holding {"metadata": {...}}, so a
//   trial's whole series is there, in order;
// - the result tracker (torchx.runtime.tracking.FsspecResultTracker): one JSON object per key at
//   `<base>/<key>`; a trial's key is its index, and it holds the last values put.
// The parsing and the reduction are pure (table-tested); ReadReports is the file reading.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/status.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {

/// One report: each numeric value a trial put at once, in its order.
using Report = std::vector<std::pair<std::string, double>>;

/// RFC 4648 base32 with padding (Python's base64.b32encode): the fsspec tracker's run directory.
std::string Base32(std::string_view bytes);

/// A report file's numbers: {"metadata": {...}} (fsspec tracker) or a flat object (result
/// tracker). Booleans, strings and nested values are not metrics and are left out; a file that
/// is not a JSON object gives nullopt (a write in progress, another tool's file).
std::optional<Report> ParseReport(std::string_view text);

/// A trial's reports in the order it made them: the fsspec tracker's (run id `run_id`) by time,
/// then the result tracker's entry for `key`. Missing directories give none.
std::vector<Report> ReadReports(const std::string& results_dir, const std::string& run_id, const std::string& key);
/// The same over several runs of one trial (a managed trial's attempts), in order.
std::vector<Report> ReadReports(const std::string& results_dir, const std::vector<std::string>& run_ids,
                                const std::string& key);

struct Summary {
  std::vector<std::pair<std::string, double>> metrics;  ///< each metric's last value (first-reported order)
  std::optional<double> objective;
};
/// Each metric's last value; the objective's value is its last, or its best when the objective
/// says `reduce: best` (then its entry in `metrics` is that best too).
Summary Summarize(const std::vector<Report>& reports, const std::optional<Objective>& objective);

/// Whether objective value `a` is better than `b` under `objective`.
bool Better(double a, double b, const Objective& objective);

}  // namespace torchx::sweeps
