/* The stable prefix of the PJRT C API that torchx uses, declared here from its documented layout
 * (openxla/xla: xla/pjrt/c/pjrt_c_api.h): the PJRT_Api table starts with a size and a version,
 * followed by function pointers in a fixed order that only ever grows at the end; every function
 * takes one args struct beginning with `size_t struct_size; void* extension_start`. Only what
 * the device probe calls is declared; later entries are never touched, and the table's
 * struct_size is checked to cover every entry that is.
 *
 * C, so that the in-tree test plugins (C shared libraries) share the declarations.
 */
#ifndef TORCHX_PLUGINS_PJRT_PREFIX_H_
#define TORCHX_PLUGINS_PJRT_PREFIX_H_

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct PJRT_Error PJRT_Error;
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_DeviceDescription PJRT_DeviceDescription;

#define PJRT_ARGS_HEADER \
  size_t struct_size;    \
  void* extension_start

typedef struct {
  PJRT_ARGS_HEADER;
  int major_version;
  int minor_version;
} PJRT_Api_Version;

typedef struct {
  PJRT_ARGS_HEADER;
  PJRT_Error* error;
} PJRT_Error_Destroy_Args;

typedef struct {
  PJRT_ARGS_HEADER;
  const PJRT_Error* error;
  const char* message; /* out */
  size_t message_size; /* out */
} PJRT_Error_Message_Args;

typedef struct {
  PJRT_ARGS_HEADER;
  const PJRT_Error* error;
  int code; /* out */
} PJRT_Error_GetCode_Args;

typedef struct {
  PJRT_ARGS_HEADER;
} PJRT_Plugin_Initialize_Args;

/* PJRT_NamedValue: a typed key/value pair (create options). */
typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64,
  PJRT_NamedValue_kInt64List,
  PJRT_NamedValue_kFloat,
  PJRT_NamedValue_kBool
} PJRT_NamedValue_Type;
typedef struct {
  PJRT_ARGS_HEADER;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size;
} PJRT_NamedValue;

typedef struct {
  PJRT_ARGS_HEADER;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  void* kv_get_callback;
  void* kv_get_user_arg;
  void* kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client; /* out */
  /* Appended in later API versions; plugins built against them refuse a smaller struct. */
  void* kv_try_get_callback;
  void* kv_try_get_user_arg;
} PJRT_Client_Create_Args;

typedef struct {
  PJRT_ARGS_HEADER;
  PJRT_Client* client;
} PJRT_Client_Destroy_Args;

typedef struct {
  PJRT_ARGS_HEADER;
  PJRT_Client* client;
  const char* platform_name; /* out */
  size_t platform_name_size; /* out */
} PJRT_Client_PlatformName_Args;

typedef struct {
  PJRT_ARGS_HEADER;
  PJRT_Client* client;
  PJRT_Device* const* addressable_devices; /* out */
  size_t num_addressable_devices;          /* out */
} PJRT_Client_AddressableDevices_Args;

typedef PJRT_Error* PJRT_Fn(void* args);
typedef void PJRT_Error_Destroy_Fn(PJRT_Error_Destroy_Args* args);
typedef void PJRT_Error_Message_Fn(PJRT_Error_Message_Args* args);

typedef struct PJRT_Api {
  size_t struct_size;
  void* extension_start;
  PJRT_Api_Version pjrt_api_version;
  PJRT_Error_Destroy_Fn* PJRT_Error_Destroy;
  PJRT_Error_Message_Fn* PJRT_Error_Message;
  PJRT_Fn* PJRT_Error_GetCode;
  PJRT_Fn* PJRT_Plugin_Initialize;
  PJRT_Fn* PJRT_Plugin_Attributes;
  PJRT_Fn* PJRT_Event_Destroy;
  PJRT_Fn* PJRT_Event_IsReady;
  PJRT_Fn* PJRT_Event_Error;
  PJRT_Fn* PJRT_Event_Await;
  PJRT_Fn* PJRT_Event_OnReady;
  PJRT_Fn* PJRT_Client_Create;
  PJRT_Fn* PJRT_Client_Destroy;
  PJRT_Fn* PJRT_Client_PlatformName;
  PJRT_Fn* PJRT_Client_ProcessIndex;
  PJRT_Fn* PJRT_Client_PlatformVersion;
  PJRT_Fn* PJRT_Client_Devices;
  PJRT_Fn* PJRT_Client_AddressableDevices;
  /* ... the real table continues; torchx reads nothing beyond this point. */
} PJRT_Api;

/* The struct_size a table must have for every entry above to be present. */
#define TORCHX_PJRT_API_MIN_SIZE (offsetof(PJRT_Api, PJRT_Client_AddressableDevices) + sizeof(void*))

typedef const PJRT_Api* (*GetPjrtApi_Fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TORCHX_PLUGINS_PJRT_PREFIX_H_ */
