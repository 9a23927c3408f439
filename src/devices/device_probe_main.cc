// torchx-device-probe <pjrt library> [create options JSON]: loads a PJRT plugin in this
// short-lived process and prints what it reports as one JSON line, so that a plugin that crashes,
// hangs or grabs the device never does so inside the launcher.
//   ok:    {"ok": true, "api_major", "api_minor", "platform", "devices"}
//   error: {"ok": false, "step": "...", "message": "..."} and exit status 1
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devices/pjrt_prefix.h"

namespace {

using Json = nlohmann::json;

int Fail(const std::string& step, const std::string& message) {
  std::printf("%s\n", Json{{"ok", false}, {"step", step}, {"message", message}}.dump().c_str());
  return 1;
}

std::string ErrorText(const PJRT_Api* api, PJRT_Error* err) {
  PJRT_Error_Message_Args m{};
  m.struct_size = sizeof m;
  m.error = err;
  api->PJRT_Error_Message(&m);
  std::string text = m.message ? std::string(m.message, m.message_size) : "(no message)";
  PJRT_Error_Destroy_Args d{};
  d.struct_size = sizeof d;
  d.error = err;
  api->PJRT_Error_Destroy(&d);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: torchx-device-probe <pjrt library> [create options JSON]\n");
    return 2;
  }
  void* handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Fail("dlopen", dlerror());
  auto get_api = reinterpret_cast<GetPjrtApi_Fn>(dlsym(handle, "GetPjrtApi"));
  if (!get_api) return Fail("missing symbol", "the library does not export GetPjrtApi: not a PJRT plugin");
  const PJRT_Api* api = get_api();
  if (!api) return Fail("GetPjrtApi", "GetPjrtApi returned NULL");
  if (api->struct_size < offsetof(PJRT_Api, pjrt_api_version) + sizeof(PJRT_Api_Version)) {
    return Fail("struct size",
                "PJRT_Api struct too small to hold its version (struct_size " + std::to_string(api->struct_size) + ")");
  }
  int major = api->pjrt_api_version.major_version, minor = api->pjrt_api_version.minor_version;
  if (major != 0) {
    return Fail("version", "unsupported PJRT API major version " + std::to_string(major) + " (this torchx reads 0.x)");
  }
  if (api->struct_size < TORCHX_PJRT_API_MIN_SIZE) {
    return Fail("struct size", "PJRT_Api struct too small: struct_size " + std::to_string(api->struct_size) + " < " +
                                   std::to_string(TORCHX_PJRT_API_MIN_SIZE) +
                                   " (needs PJRT_Client_AddressableDevices)");
  }
  if (!api->PJRT_Error_Destroy || !api->PJRT_Error_Message || !api->PJRT_Client_Create || !api->PJRT_Client_Destroy ||
      !api->PJRT_Client_AddressableDevices) {
    return Fail("struct size", "PJRT_Api is missing a function torchx needs");
  }
  if (api->PJRT_Plugin_Initialize) {
    PJRT_Plugin_Initialize_Args init{};
    init.struct_size = sizeof init;
    if (PJRT_Error* err = api->PJRT_Plugin_Initialize(&init)) return Fail("initialize", ErrorText(api, err));
  }
  // Create options: strings, integers, floats and bools from a JSON object.
  Json opts = argc == 3 ? Json::parse(argv[2], nullptr, false) : Json::object();
  std::vector<PJRT_NamedValue> values;
  std::vector<std::string> keep;  // storage for names and string values
  keep.reserve(2 * (opts.is_object() ? opts.size() : 0));
  if (opts.is_object()) {
    for (auto& [k, v] : opts.items()) {
      PJRT_NamedValue nv{};
      nv.struct_size = sizeof nv;
      keep.push_back(k);
      nv.name = keep.back().c_str();
      nv.name_size = keep.back().size();
      if (v.is_boolean()) {
        nv.type = PJRT_NamedValue_kBool;
        nv.bool_value = v.get<bool>();
        nv.value_size = 1;
      } else if (v.is_number_integer()) {
        nv.type = PJRT_NamedValue_kInt64;
        nv.int64_value = v.get<int64_t>();
        nv.value_size = 1;
      } else if (v.is_number()) {
        nv.type = PJRT_NamedValue_kFloat;
        nv.float_value = v.get<float>();
        nv.value_size = 1;
      } else {
        nv.type = PJRT_NamedValue_kString;
        keep.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        nv.string_value = keep.back().c_str();
        nv.value_size = keep.back().size();
      }
      values.push_back(nv);
    }
  }
  PJRT_Client_Create_Args create{};
  create.struct_size = sizeof create;
  create.create_options = values.data();
  create.num_options = values.size();
  if (PJRT_Error* err = api->PJRT_Client_Create(&create)) return Fail("client create", ErrorText(api, err));
  std::string platform;
  if (api->PJRT_Client_PlatformName) {
    PJRT_Client_PlatformName_Args p{};
    p.struct_size = sizeof p;
    p.client = create.client;
    if (PJRT_Error* err = api->PJRT_Client_PlatformName(&p)) {
      ErrorText(api, err);
    } else if (p.platform_name) {
      platform.assign(p.platform_name, p.platform_name_size);
    }
  }
  PJRT_Client_AddressableDevices_Args devs{};
  devs.struct_size = sizeof devs;
  devs.client = create.client;
  if (PJRT_Error* err = api->PJRT_Client_AddressableDevices(&devs)) return Fail("devices", ErrorText(api, err));
  size_t count = devs.num_addressable_devices;
  PJRT_Client_Destroy_Args destroy{};
  destroy.struct_size = sizeof destroy;
  destroy.client = create.client;
  if (PJRT_Error* err = api->PJRT_Client_Destroy(&destroy)) ErrorText(api, err);
  std::printf("%s\n",
              Json{{"ok", true}, {"api_major", major}, {"api_minor", minor}, {"platform", platform}, {"devices", count}}
                  .dump()
                  .c_str());
  return 0;
}
