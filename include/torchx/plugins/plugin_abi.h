/* The C ABI between torchx and native plugins (shared libraries).
 *
 * A plugin exports one symbol, TORCHX_PLUGIN_ENTRY ("torchx_plugin_v1"), returning a pointer to
 * a static TorchxPluginInfo. The host checks `struct_size` and `abi_version` before reading
 * anything else, then calls `init` with a host table through which the plugin registers what it
 * provides (named resources, components, schedulers, devices, trackers). The host owns the
 * registries; the plugin's descriptors and the strings in them must outlive the process (static
 * storage), since plugins are never unloaded.
 *
 * Every struct starts with `struct_size`, set by whoever fills it to sizeof the struct it knows.
 * Fields are only ever appended: a reader uses a field only when struct_size covers it, and
 * refuses a struct smaller than the first version's (TORCHX_*_V1_SIZE below).
 *
 * Strings are UTF-8, NUL-terminated. JSON payloads use the forms of the core: the canonical
 * AppDef JSON, the ComponentSpec JSON (components/component_json.h), AppStatus JSON.
 * Strings a plugin returns from a call are allocated by the plugin and released by the host
 * through the descriptor's `free_string`.
 *
 * Plugin authors should prefer the C++ helper, torchx/plugins/plugin_helper.h.
 */
#ifndef TORCHX_PLUGINS_PLUGIN_ABI_H_
#define TORCHX_PLUGINS_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TORCHX_PLUGIN_ABI_VERSION 1u
#define TORCHX_PLUGIN_ENTRY "torchx_plugin_v1"

/* ---- what a plugin registers ---- */

typedef struct TorchxResource {
  size_t struct_size;
  int32_t cpu;
  int32_t gpu;
  int32_t mem_mb;
  const char* capabilities_json; /* JSON object or NULL */
  const char* devices_json;      /* JSON object name -> count, or NULL */
} TorchxResource;

typedef struct TorchxFractional {
  double fraction;    /* e.g. 0.5 */
  const char* suffix; /* registered as <name>_<suffix> */
} TorchxFractional;

typedef struct TorchxNamedResource {
  size_t struct_size;
  const char* name;
  /* Fills `out` for `fraction` (1.0 = the whole resource). Returns 0 on success. */
  int (*make)(void* user, double fraction, TorchxResource* out);
  void* user;
  const char* const* aliases; /* NULL-terminated, or NULL */
  /* Fractional variants: an explicit list, or a policy the host computes from the whole
   * resource (TorchX's register.powers_of_two_gpus / register.halve_mem_down_to). */
  const TorchxFractional* fractionals;
  size_t num_fractionals;
  int32_t fractional_policy; /* TORCHX_FRACTIONALS_* */
  int32_t min_gib;           /* for TORCHX_FRACTIONALS_HALVE_MEM */
} TorchxNamedResource;

#define TORCHX_FRACTIONALS_LIST 0
#define TORCHX_FRACTIONALS_POWERS_OF_TWO_GPUS 1
#define TORCHX_FRACTIONALS_HALVE_MEM 2

typedef struct TorchxComponent {
  size_t struct_size;
  const char* spec_json; /* ComponentSpec JSON: name, summary, params, varargs */
  /* Builds the AppDef from typed arguments ({"values": {...}, "varargs": [...]}). Returns the
   * AppDef JSON, or NULL with *error set (both released with free_string). */
  char* (*build)(void* user, const char* args_json, char** error);
  void* user;
  void (*free_string)(char* s);
} TorchxComponent;

/* A scheduler speaks JSON through plain functions. Each returns a string (released with
 * free_string) or NULL with *error set. */
typedef struct TorchxScheduler {
  size_t struct_size;
  const char* name;
  const char* runopts_json;                              /* [{"name","type","help","default","required"}] */
  void* (*create)(void* user, const char* session_name); /* per-session state; NULL = error */
  void (*destroy)(void* self);
  /* {"app": AppDef, "cfg": {...}, "app_id": "..."} -> {"request": printable, "payload": string} */
  char* (*dryrun)(void* self, const char* request_json, char** error);
  /* payload -> app_id */
  char* (*schedule)(void* self, const char* payload, char** error);
  /* app_id -> AppStatus JSON (TorchX's to_json form), or the string "null" when unknown */
  char* (*describe)(void* self, const char* app_id, char** error);
  /* returns "ok" */
  char* (*cancel)(void* self, const char* app_id, char** error);
  /* -> [{"app_id", "state", "name"}] */
  char* (*list)(void* self, char** error);
  /* {"app_id","role","k"} -> the replica's log text */
  char* (*logs)(void* self, const char* request_json, char** error);
  void* user;
  void (*free_string)(char* s);
} TorchxScheduler;

typedef struct TorchxDevice {
  size_t struct_size;
  const char* name;         /* PJRT_DEVICE value, upper case: "TPU", "EXAMPLE" */
  const char* library_path; /* a PJRT plugin (.so exporting GetPjrtApi), or NULL */
  int32_t chip_count;       /* chips on this host; < 0: ask the PJRT library */
  /* Per-process environment for local rank r of n: a JSON object whose values may hold
   * {rank}, {count} and {chips}; NULL for none beyond PJRT_DEVICE / PJRT_LOCAL_PROCESS_*. */
  const char* env_template_json;
  const char* create_options_json; /* PJRT client create options, JSON object, or NULL */
} TorchxDevice;

typedef struct TorchxTracker {
  size_t struct_size;
  const char* name;
  const char* config_json; /* free-form description for the report, or NULL */
} TorchxTracker;

/* ---- the host table and the entry point ---- */

typedef struct TorchxPluginHost {
  size_t struct_size;
  uint32_t abi_version;
  void* ctx;
  int (*add_named_resource)(void* ctx, const TorchxNamedResource* r);
  int (*add_component)(void* ctx, const TorchxComponent* c);
  int (*add_scheduler)(void* ctx, const TorchxScheduler* s);
  int (*add_device)(void* ctx, const TorchxDevice* d);
  int (*add_tracker)(void* ctx, const TorchxTracker* t);
  /* Why init failed, shown in the report. */
  void (*set_error)(void* ctx, const char* message);
} TorchxPluginHost;

typedef struct TorchxPluginInfo {
  size_t struct_size;
  uint32_t abi_version; /* TORCHX_PLUGIN_ABI_VERSION the plugin was built against */
  const char* name;
  const char* version;
  /* Registers the plugin's contents. 0 = success. */
  int (*init)(const TorchxPluginHost* host);
} TorchxPluginInfo;

typedef const TorchxPluginInfo* (*TorchxPluginEntryFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#define TORCHX_ABI_V1_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)nullptr)->last))
#else
#define TORCHX_ABI_V1_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)0)->last))
#endif

/* The smallest struct each version-1 reader accepts. */
#define TORCHX_PLUGIN_INFO_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxPluginInfo, init)
#define TORCHX_NAMED_RESOURCE_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxNamedResource, min_gib)
#define TORCHX_RESOURCE_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxResource, devices_json)
#define TORCHX_COMPONENT_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxComponent, free_string)
#define TORCHX_SCHEDULER_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxScheduler, free_string)
#define TORCHX_DEVICE_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxDevice, create_options_json)
#define TORCHX_TRACKER_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxTracker, config_json)
#define TORCHX_PLUGIN_HOST_V1_SIZE TORCHX_ABI_V1_SIZE(TorchxPluginHost, set_error)

#endif /* TORCHX_PLUGINS_PLUGIN_ABI_H_ */
