/* A PJRT-shaped test library: exports GetPjrtApi with the stable prefix of the PJRT C API
 * (src/devices/pjrt_prefix.h) and reports $FAKE_PJRT_DEVICES devices (default 4) on platform
 * "fake". Variants, by define: FAKE_NO_SYMBOL, FAKE_MAJOR_1, FAKE_SMALL_STRUCT,
 * FAKE_CREATE_ERROR, FAKE_CRASH. */
#include <stdlib.h>
#include <string.h>

#include "devices/pjrt_prefix.h"

struct PJRT_Error {
  const char* message;
};
struct PJRT_Client {
  int devices;
};

static struct PJRT_Error create_error = {"no fake device is attached to this host"};
static struct PJRT_Client the_client;
static PJRT_Device* device_ptrs[64];

static void ErrorDestroy(PJRT_Error_Destroy_Args* args) { (void)args; }
static void ErrorMessage(PJRT_Error_Message_Args* args) {
  args->message = args->error->message;
  args->message_size = strlen(args->error->message);
}
static PJRT_Error* Initialize(void* args) {
  (void)args;
  return NULL;
}
static PJRT_Error* ClientCreate(void* a) {
  PJRT_Client_Create_Args* args = (PJRT_Client_Create_Args*)a;
#if defined(FAKE_CREATE_ERROR)
  (void)args;
  return &create_error;
#elif defined(FAKE_CRASH)
  (void)args;
  abort();
#else
  const char* n = getenv("FAKE_PJRT_DEVICES");
  the_client.devices = n ? atoi(n) : 4;
  if (the_client.devices > 64) the_client.devices = 64;
  args->client = &the_client;
  return NULL;
#endif
}
static PJRT_Error* ClientDestroy(void* args) {
  (void)args;
  return NULL;
}
static PJRT_Error* PlatformName(void* a) {
  PJRT_Client_PlatformName_Args* args = (PJRT_Client_PlatformName_Args*)a;
  args->platform_name = "fake";
  args->platform_name_size = 4;
  return NULL;
}
static PJRT_Error* AddressableDevices(void* a) {
  PJRT_Client_AddressableDevices_Args* args = (PJRT_Client_AddressableDevices_Args*)a;
  for (int i = 0; i < args->client->devices; ++i) device_ptrs[i] = (PJRT_Device*)&device_ptrs[i];
  args->addressable_devices = device_ptrs;
  args->num_addressable_devices = (size_t)args->client->devices;
  return NULL;
}

static PJRT_Api api;

#if defined(FAKE_NO_SYMBOL)
__attribute__((visibility("default"))) const PJRT_Api* GetSomethingElse(void) { return &api; }
#else
__attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi(void) {
  (void)create_error;
  api.struct_size = sizeof(PJRT_Api);
#if defined(FAKE_SMALL_STRUCT)
  api.struct_size = offsetof(PJRT_Api, PJRT_Client_Create);
#endif
  api.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
  api.pjrt_api_version.major_version = 0;
  api.pjrt_api_version.minor_version = 54;
#if defined(FAKE_MAJOR_1)
  api.pjrt_api_version.major_version = 1;
#endif
  api.PJRT_Error_Destroy = ErrorDestroy;
  api.PJRT_Error_Message = ErrorMessage;
  api.PJRT_Plugin_Initialize = Initialize;
  api.PJRT_Client_Create = ClientCreate;
  api.PJRT_Client_Destroy = ClientDestroy;
  api.PJRT_Client_PlatformName = PlatformName;
  api.PJRT_Client_AddressableDevices = AddressableDevices;
  return &api;
}
#endif
