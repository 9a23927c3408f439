// What launches a composite job of any kind (a pipeline, a sweep, a managed job, a kind loaded as a
// module): the kind's document and what the edge gives beside it, planned first (every child's
// dry run made; any error names the field and nothing is submitted), then launched (recorded and
// its driver started). The CLI's verbs and the Python binding build a LaunchRequest and call
// torchx::PlanComposite (composite_kinds.h); each kind turns it into its own plan.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/config/torchx_config.h"
#include "torchx/runner/runner.h"
#include "torchx/status.h"

namespace torchx::composite {

struct LaunchRequest {
  /// The kind: its scheduler's name, which its handles carry (`pipeline`, `sweep`, `managed`).
  std::string kind;
  /// The kind's document, YAML or JSON text: what a file of the kind holds (a pipeline file, a
  /// sweep file; a managed job's `app` with the keys of its `managed:` block).
  std::string document;
  /// What errors call the document: its file's path, or the kind's name for one given inline.
  std::string origin;
  /// `-s`: the children's scheduler where the document names none. Empty: the document's, else
  /// `.torchxconfig`'s `[cli:run] scheduler`, else the build's default.
  std::string scheduler;
  /// `-cfg k=v,...`: options of the children on that scheduler.
  std::string cfg;
  /// Top-level keys of the document the edge replaces (`--name`, `--max_parallel`, `--managed
  /// ...`, Python's keywords), as a JSON object; its `cfg` object is merged into the document's.
  std::string overrides_json = "{}";
};

/// A composite planned and not yet launched.
struct PlannedComposite {
  /// The plan as `--dryrun` prints it: the children and the first one's request.
  std::string text;
  /// The schedulers its children run on (those a launcher that waits cancels on an interrupt).
  std::vector<std::string> child_schedulers;
  /// Records it and starts it (its driver, or every child where their scheduler sequences them);
  /// returns its handle. Nothing is left recorded when the start fails.
  std::function<Result<std::string>(runner::Runner&)> launch;
};

/// What a kind plans from a request (its `kind` is the kind's own name).
using Planner = Result<PlannedComposite> (*)(runner::Runner& runner, const config::TorchxConfig& config,
                                             const LaunchRequest& request);

/// The request's document with its overrides applied, as JSON text (the document as it is when
/// there are none, so that a YAML file's errors keep their lines). Errors name the origin.
Result<std::string> DocumentOf(const LaunchRequest& request);

/// The request's document, overrides applied, read by the kind's `parse` (errors name the origin).
template <typename Spec>
Result<Spec> ParseDocument(const LaunchRequest& request, Result<Spec> (*parse)(std::string_view, const std::string&)) {
  TORCHX_ASSIGN_OR_RETURN(std::string document, DocumentOf(request));
  return parse(document, request.origin);
}

/// `plan`, made by a kind, as the launch entry returns it: `launch(runner, plan)` once the caller
/// launches.
template <typename Plan>
PlannedComposite PlannedFrom(Plan plan, std::string text, std::vector<std::string> child_schedulers,
                             Result<std::string> (*launch)(runner::Runner&, const Plan&)) {
  auto kept = std::make_shared<const Plan>(std::move(plan));
  return {std::move(text), std::move(child_schedulers),
          [kept, launch](runner::Runner& runner) { return launch(runner, *kept); }};
}

}  // namespace torchx::composite
