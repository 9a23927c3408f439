// Declarative components: a YAML file with typed parameters and a templated AppDef, for users who
// want a reusable job without writing Python or C++. `torchx run ./train.yaml --lr 0.1`.
//
//   description: |            # first line: the summary `--help` shows
//     Trains a model.
//   params:                   # in order; `type` is str|int|float|bool|list|dict (default str)
//     script: {help: the training script}                 # no default: required
//     lr: {type: float, default: 0.1, help: learning rate}
//     tags: {type: list, optional: true}                  # Optional[list], defaults to None
//   varargs: {name: args, help: passed to the script}     # optional *args
//   app:                      # an AppDef (see serialize.h); strings may hold {{ name }}
//     name: train
//     roles:
//       - name: trainer
//         entrypoint: python
//         args: ["{{ script }}", "--lr={{ lr }}", "{{ args }}"]
//         num_replicas: "{{ replicas }}"
//
// A string that is exactly `{{ name }}` takes the parameter's typed value (so it can fill an int
// field); inside a list, a list value or the varargs are spliced in and a None value drops the
// item. Elsewhere `{{ name }}` is replaced by the value as text (bools as true/false, lists
// comma-joined, dicts k=v comma-joined, None as ""). An unknown name is an error.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "torchx/components/component.h"

namespace torchx::components {

/// Whether `path` names a declarative component file: .yaml/.yml whose top level has `app`.
bool IsDeclarativeComponentFile(const std::string& path);

/// Loads and checks the file: parameter declarations (types, defaults), placeholders naming
/// declared parameters. Errors name the file and the field.
Result<std::unique_ptr<Component>> LoadDeclarativeComponent(const std::string& path);
/// Same, from text; `origin` names it in errors and becomes the component's name.
Result<std::unique_ptr<Component>> ParseDeclarativeComponent(std::string_view yaml, const std::string& origin);

}  // namespace torchx::components
