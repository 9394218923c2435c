// GPU readings for measurement health through NVML, loaded with dlopen: clocks, throttle reasons,
// utilization and the processes holding the device. Host code only; no CUDA header or library.
#include <dlfcn.h>

#include <cstdint>
#include <string>

#include "harness/driver/health.h"

namespace gtb::health {

namespace {

// The NVML entry points used, with their C signatures (nvml.h is not needed to build).
struct Nvml {
  using Init = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Name = int (*)(void*, char*, unsigned);
  using Clock = int (*)(void*, int, unsigned*);
  using Temp = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  using Util = int (*)(void*, unsigned*);  // nvmlUtilization_t is {unsigned gpu, memory}
  using Procs = int (*)(void*, unsigned*, void*);
  Init init = nullptr;
  Count count = nullptr;
  Handle handle = nullptr;
  Name name = nullptr;
  Clock clock = nullptr;
  Temp temp = nullptr;
  Reasons reasons = nullptr;
  Util util = nullptr;
  Procs procs = nullptr;
  std::string error;  // empty when usable
};

constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE: the count is still filled in
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml r;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      r.error = "NVML not loaded (libnvidia-ml.so.1: no NVIDIA driver on this machine)";
      return r;
    }
    r.init = sym<Nvml::Init>(lib, "nvmlInit_v2");
    r.count = sym<Nvml::Count>(lib, "nvmlDeviceGetCount_v2");
    r.handle = sym<Nvml::Handle>(lib, "nvmlDeviceGetHandleByIndex_v2");
    r.name = sym<Nvml::Name>(lib, "nvmlDeviceGetName");
    r.clock = sym<Nvml::Clock>(lib, "nvmlDeviceGetClockInfo");
    r.temp = sym<Nvml::Temp>(lib, "nvmlDeviceGetTemperature");
    // Renamed in CUDA 12.2's NVML; older drivers have only the throttle name.
    r.reasons = sym<Nvml::Reasons>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!r.reasons) r.reasons = sym<Nvml::Reasons>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    r.util = sym<Nvml::Util>(lib, "nvmlDeviceGetUtilizationRates");
    r.procs = sym<Nvml::Procs>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!r.procs) r.procs = sym<Nvml::Procs>(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!r.init || !r.count || !r.handle) {
      r.error = "NVML lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 / nvmlDeviceGetHandleByIndex_v2";
    } else if (const int rc = r.init(); rc != kSuccess) {
      r.error = "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")";
    }
    return r;
  }();
  return n;
}

}  // namespace

std::optional<std::vector<GpuReading>> read_nvml(std::string& why) {
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    why = n.error;
    return std::nullopt;
  }
  unsigned count = 0;
  if (const int rc = n.count(&count); rc != kSuccess) {
    why = "nvmlDeviceGetCount_v2 failed (NVML error " + std::to_string(rc) + ")";
    return std::nullopt;
  }
  std::vector<GpuReading> out;
  for (unsigned i = 0; i < count; ++i) {
    void* dev = nullptr;
    GpuReading g;
    if (n.handle(i, &dev) != kSuccess) {
      g.name = "device " + std::to_string(i) + " (no NVML handle)";
      out.push_back(g);
      continue;
    }
    char name[96] = {0};
    if (n.name && n.name(dev, name, sizeof name) == kSuccess) g.name = name;
    unsigned v = 0;
    if (n.clock && n.clock(dev, kClockSm, &v) == kSuccess) g.sm_mhz = v;
    if (n.clock && n.clock(dev, kClockMem, &v) == kSuccess) g.mem_mhz = v;
    if (n.temp && n.temp(dev, kTemperatureGpu, &v) == kSuccess) g.temperature_c = v;
    unsigned long long bits = 0;
    if (n.reasons && n.reasons(dev, &bits) == kSuccess) g.clock_event_reasons = bits;
    unsigned util[2] = {0, 0};
    if (n.util && n.util(dev, util) == kSuccess) g.utilization_pct = util[0];
    // Asking with room for none returns the number of processes (success when there is none).
    unsigned procs = 0;
    if (n.procs) {
      const int rc = n.procs(dev, &procs, nullptr);
      if (rc == kSuccess || rc == kInsufficientSize) g.compute_processes = procs;
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace gtb::health
