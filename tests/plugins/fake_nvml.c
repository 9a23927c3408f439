/* An NVML-shaped test library (what devices::OpenNvml loads as libnvidia-ml.so.1): two GPUs,
 * "Fake GPU 0" at 37% with 3 GiB of 16 GiB used and "Fake GPU 1" idle. The compute processes on
 * GPU 0 are the pids written, one per file, in the directory $FAKE_NVML_PID_DIR, each holding
 * 1 GiB at a 42% SM share. $FAKE_NVML_INIT_FAILS makes nvmlInit_v2 fail. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  unsigned int gpu, memory;
} Utilization;
typedef struct {
  unsigned long long total, free, used;
} Memory;
typedef struct {
  unsigned int pid;
  unsigned long long used;
  unsigned int gi, ci;
} ProcessInfo;
typedef struct {
  unsigned int pid;
  unsigned long long ts;
  unsigned int sm, mem, enc, dec;
} ProcessSample;

static const unsigned long long kGiB = 1ull << 30;

EXPORT int nvmlInit_v2(void) { return getenv("FAKE_NVML_INIT_FAILS") ? 9 : 0; }
EXPORT int nvmlShutdown(void) { return 0; }
EXPORT const char* nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
EXPORT int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = 2;
  return 0;
}
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void** dev) {
  *dev = (void*)(unsigned long)(i + 1);
  return i < 2 ? 0 : 2;
}
static int Index(void* dev) { return (int)(unsigned long)dev - 1; }
EXPORT int nvmlDeviceGetName(void* dev, char* name, unsigned int len) {
  snprintf(name, len, "Fake GPU %d", Index(dev));
  return 0;
}
EXPORT int nvmlDeviceGetUtilizationRates(void* dev, Utilization* u) {
  u->gpu = Index(dev) == 0 ? 37 : 0;
  u->memory = 0;
  return 0;
}
EXPORT int nvmlDeviceGetMemoryInfo(void* dev, Memory* m) {
  m->total = 16 * kGiB;
  m->used = Index(dev) == 0 ? 3 * kGiB : 0;
  m->free = m->total - m->used;
  return 0;
}
static unsigned int Pids(unsigned int* out, unsigned int cap) {
  const char* dir = getenv("FAKE_NVML_PID_DIR");
  if (!dir) return 0;
  DIR* d = opendir(dir);
  if (!d) return 0;
  unsigned int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) && n < cap) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    if (fscanf(f, "%u", &out[n]) == 1) ++n;
    fclose(f);
  }
  closedir(d);
  return n;
}
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned int* count, ProcessInfo* infos) {
  unsigned int pids[64];
  unsigned int n = Index(dev) == 0 ? Pids(pids, 64) : 0;
  if (n > *count) {
    *count = n;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  for (unsigned int i = 0; i < n; ++i) {
    infos[i].pid = pids[i];
    infos[i].used = kGiB;
    infos[i].gi = infos[i].ci = 0;
  }
  *count = n;
  return 0;
}
EXPORT int nvmlDeviceGetProcessUtilization(void* dev, ProcessSample* samples, unsigned int* count,
                                           unsigned long long last_seen) {
  static unsigned long long now = 1000; /* the driver's clock: each call's samples are newer */
  unsigned int pids[64];
  unsigned int n = Index(dev) == 0 ? Pids(pids, 64) : 0;
  if (!samples || n > *count) {
    *count = n;
    return n ? 7 : 0;
  }
  for (unsigned int i = 0; i < n; ++i) {
    memset(&samples[i], 0, sizeof(samples[i]));
    samples[i].pid = pids[i];
    samples[i].ts = last_seen + (now += 1000);
    samples[i].sm = 42;
  }
  *count = n;
  return 0;
}
