// An example torchx plugin: a named resource with fractional variants, a component, a scheduler
// (example_scheduler.cc), a device kind and a tracker.
#include <cstdlib>
#include <string>

#include <torchx/plugins/plugin_helper.h>
#include <nlohmann/json.hpp>

#include "example_scheduler.h"

using nlohmann::json;

TORCHX_PLUGIN("example", "1.0") {
  // An 8-GPU host; registers example_gpu, its alias egpu, and example_gpu_{8,4,2,1}.
  plugin
      .NamedResource("example_gpu",
                     [](double f) {
                       return torchx::plugin::Resource{static_cast<int>(64 * f), static_cast<int>(8 * f),
                                                       static_cast<int>(512 * 1024 * f),
                                                       R"({"node.kubernetes.io/instance-type": "example.8x"})", "{}"};
                     })
      .Alias("egpu")
      .PowersOfTwoGpus();
  // A 128 GiB CPU host; registers example_cpu and example_cpu_{128,64,32,16}.
  plugin
      .NamedResource("example_cpu",
                     [](double f) {
                       return torchx::plugin::Resource{static_cast<int>(32 * f), 0, static_cast<int>(128 * 1024 * f)};
                     })
      .HalveMemDownTo(16);

  plugin.Component(json{{"name", "example.hello"},
                        {"summary", "Says hello from each replica (an example plugin component)."},
                        {"description", ""},
                        {"params",
                         {{{"name", "who"},
                           {"type", "str"},
                           {"optional", false},
                           {"required", false},
                           {"default", "world"},
                           {"help", "whom to greet"}},
                          {{"name", "num_replicas"},
                           {"type", "int"},
                           {"optional", false},
                           {"required", false},
                           {"default", 1},
                           {"help", "number of replicas"}}}},
                        {"varargs", nullptr}}
                       .dump(),
                   [](const std::string& args_json) {
                     json args = json::parse(args_json);
                     std::string who = args["values"]["who"].get<std::string>();
                     int n = args["values"]["num_replicas"].get<int>();
                     json role = {
                         {"name", "hello"},    {"image", ""},
                         {"entrypoint", "sh"}, {"args", {"-c", "echo hello " + who + " from replica ${replica_id}"}},
                         {"num_replicas", n},  {"resource", {{"cpu", 1}, {"gpu", 0}, {"memMB", 128}}}};
                     return json{{"name", "hello"}, {"roles", {role}}}.dump();
                   });

  plugin.Scheduler<example::NohupScheduler>("example_nohup", example::NohupScheduler::RunOpts());

  // A device kind driven by a PJRT library named by $EXAMPLE_PJRT_LIBRARY (the tests build a fake
  // one); chips are counted by asking the library.
  const char* lib = std::getenv("EXAMPLE_PJRT_LIBRARY");
  plugin.Device("EXAMPLE", lib ? lib : "", -1, R"({"EXAMPLE_VISIBLE_CHIPS": "{rank}"})");

  plugin.Tracker("example_tracker", R"({"kind": "files"})");
}
