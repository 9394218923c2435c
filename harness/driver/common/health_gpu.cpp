// GPU readings for measurement health through NVML, loaded with dlopen: clocks, throttle reasons,
// utilization and the processes holding the device, for the devices this process's CUDA can see
// (asked of the CUDA driver, also loaded with dlopen). Host code only; no CUDA header or library.
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "harness/driver/common/health.h"

namespace gtb::health {

namespace {

// nvml.h's nvmlPciInfo_t (nvml.h is not needed to build); room to spare in case a driver writes more.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
  char spare[64];
};

// The NVML entry points used, with their C signatures.
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
  using Pci = int (*)(void*, NvmlPciInfo*);
  Init init = nullptr;
  Count count = nullptr;
  Handle handle = nullptr;
  Name name = nullptr;
  Clock clock = nullptr;
  Temp temp = nullptr;
  Reasons reasons = nullptr;
  Util util = nullptr;
  Procs procs = nullptr;
  Pci pci = nullptr;
  std::string error;  // empty when usable
};

constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE: the count is still filled in
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// A driver library, opened for the process's lifetime; null, with `why` set to `absent`, without it.
void* open_library(const char* soname, std::string& why, const char* absent) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) why = absent;
  return lib;
}

const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml r;
    void* lib = open_library("libnvidia-ml.so.1", r.error, "NVML not loaded (libnvidia-ml.so.1: no NVIDIA driver on this machine)");
    if (!lib) return r;
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
    r.pci = sym<Nvml::Pci>(lib, "nvmlDeviceGetPciInfo_v3");
    if (!r.pci) r.pci = sym<Nvml::Pci>(lib, "nvmlDeviceGetPciInfo_v2");
    if (!r.init || !r.count || !r.handle || !r.pci) {
      r.error = "NVML lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 / nvmlDeviceGetHandleByIndex_v2 / nvmlDeviceGetPciInfo";
    } else if (const int rc = r.init(); rc != kSuccess) {
      r.error = "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")";
    }
    return r;
  }();
  return n;
}

// The devices CUDA shows this process, by PCI bus id, from the CUDA driver API: cuInit creates no
// context, so the driver process does not appear among the GPU's compute processes. `known` false:
// the driver could not be asked (`why`).
struct Visible {
  bool known = false;
  std::vector<std::string> bus_ids;
  std::string why;
};

const Visible& visible() {
  static const Visible v = [] {
    Visible r;
    void* lib = open_library("libcuda.so.1", r.why, "libcuda.so.1 not loaded");
    if (!lib) return r;
    using Init = int (*)(unsigned);
    using Count = int (*)(int*);
    using Get = int (*)(int*, int);
    using Bus = int (*)(char*, int, int);
    const auto init = sym<Init>(lib, "cuInit");
    const auto count = sym<Count>(lib, "cuDeviceGetCount");
    const auto get = sym<Get>(lib, "cuDeviceGet");
    const auto bus = sym<Bus>(lib, "cuDeviceGetPCIBusId");
    if (!init || !count || !get || !bus) {
      r.why = "libcuda.so.1 lacks cuInit / cuDeviceGetCount / cuDeviceGet / cuDeviceGetPCIBusId";
      return r;
    }
    constexpr int kNoDevice = 100;  // CUDA_ERROR_NO_DEVICE: e.g. CUDA_VISIBLE_DEVICES hides every GPU
    const int rc = init(0);
    if (rc == kNoDevice) {
      r.known = true;
      return r;
    }
    int n = 0;
    if (rc != 0 || count(&n) != 0) {
      r.why = "cuInit failed (CUDA error " + std::to_string(rc) + ")";
      return r;
    }
    for (int i = 0; i < n; ++i) {
      int dev = 0;
      char id[64] = {0};
      if (get(&dev, i) == 0 && bus(id, int(sizeof id), dev) == 0) r.bus_ids.push_back(id);
    }
    r.known = true;
    return r;
  }();
  return v;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool hex_field(const std::string& s, std::size_t max_digits, unsigned long& out) {
  if (s.empty() || s.size() > max_digits) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  out = std::stoul(s, nullptr, 16);
  return true;
}

}  // namespace

std::optional<std::string> canonical_pci_bus_id(const std::string& text) {
  // domain:bus:device.function, the domain 4 (CUDA, NVML's legacy id) or 8 (NVML) hex digits.
  const std::size_t c1 = text.find(':'), c2 = text.find(':', c1 == std::string::npos ? c1 : c1 + 1);
  const std::size_t dot = text.find('.', c2 == std::string::npos ? c2 : c2 + 1);
  if (c1 == std::string::npos || c2 == std::string::npos || dot == std::string::npos) return std::nullopt;
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  if (!hex_field(text.substr(0, c1), 8, domain) || !hex_field(text.substr(c1 + 1, c2 - c1 - 1), 2, bus) ||
      !hex_field(text.substr(c2 + 1, dot - c2 - 1), 2, device) || !hex_field(text.substr(dot + 1), 1, function))
    return std::nullopt;
  char out[32];
  std::snprintf(out, sizeof out, "%08lx:%02lx:%02lx.%lx", domain, bus, device, function);
  return std::string(out);
}

NvmlSelection select_visible_nvml(const std::vector<std::string>& visible_bus_ids,
                                  const std::vector<std::string>& nvml_bus_ids) {
  std::vector<std::optional<std::string>> nvml;
  for (const auto& id : nvml_bus_ids) nvml.push_back(canonical_pci_bus_id(id));
  NvmlSelection s;
  for (const auto& id : visible_bus_ids) {
    const auto want = canonical_pci_bus_id(id);
    const auto it = want ? std::find(nvml.begin(), nvml.end(), want) : nvml.end();
    if (it == nvml.end()) {
      s.not_found.push_back(id);
      continue;
    }
    const auto index = static_cast<std::size_t>(it - nvml.begin());
    if (std::find(s.read.begin(), s.read.end(), index) == s.read.end()) s.read.push_back(index);
  }
  return s;
}

double nvml_wait_seconds(double now, std::optional<double> previous_start) {
  if (!previous_start) return 0;
  return std::max(0.0, *previous_start + kNvmlUtilizationPeriodSeconds - now);
}

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
  std::vector<void*> handles(count, nullptr);
  std::vector<std::string> nvml_ids(count);
  for (unsigned i = 0; i < count; ++i) {
    NvmlPciInfo pci{};
    if (n.handle(i, &handles[i]) != kSuccess) {
      handles[i] = nullptr;
      continue;
    }
    if (n.pci(handles[i], &pci) == kSuccess) {
      pci.bus_id[sizeof pci.bus_id - 1] = pci.bus_id_legacy[sizeof pci.bus_id_legacy - 1] = '\0';
      nvml_ids[i] = pci.bus_id[0] ? pci.bus_id : pci.bus_id_legacy;
    }
  }
  // Only what this process's CUDA (and so the family) sees. When CUDA cannot be asked, every device
  // is visible unless CUDA_VISIBLE_DEVICES says otherwise, and then which ones cannot be told.
  const Visible& v = visible();
  NvmlSelection sel;
  if (v.known) {
    sel = select_visible_nvml(v.bus_ids, nvml_ids);
  } else if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES"); env) {
    why = std::string("cannot tell which GPUs CUDA_VISIBLE_DEVICES=") + env + " leaves to this process: " + v.why;
    return std::nullopt;
  } else {
    for (unsigned i = 0; i < count; ++i) sel.read.push_back(i);
  }

  // The rule of kNvmlUtilizationPeriodSeconds (health.h): one sample period after the last reading
  // began, which for a family's before-reading is after the previous family's processes ended.
  static std::optional<double> previous_start;
  if (const double wait = nvml_wait_seconds(steady_seconds(), previous_start); wait > 0 && n.util)
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  previous_start = steady_seconds();

  std::vector<GpuReading> out;
  for (std::size_t i : sel.read) {
    void* dev = handles[i];
    GpuReading g;
    if (!dev) {
      g.name = "device " + std::to_string(i) + " (no NVML handle)";
      out.push_back(g);
      continue;
    }
    char name[96] = {0};
    if (n.name && n.name(dev, name, sizeof name) == kSuccess) g.name = name;
    unsigned val = 0;
    if (n.clock && n.clock(dev, kClockSm, &val) == kSuccess) g.sm_mhz = val;
    if (n.clock && n.clock(dev, kClockMem, &val) == kSuccess) g.mem_mhz = val;
    if (n.temp && n.temp(dev, kTemperatureGpu, &val) == kSuccess) g.temperature_c = val;
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
  for (const auto& id : sel.not_found) {
    GpuReading g;
    g.name = "CUDA device at " + id + " (NVML has no device at this PCI bus id)";
    out.push_back(g);
  }
  return out;
}

// The GPUs CUDA shows this process (CUDA_VISIBLE_DEVICES applied); nothing when the driver cannot say.
std::optional<int> visible_gpu_count() {
  const Visible& v = visible();
  if (!v.known) return std::nullopt;
  return int(v.bus_ids.size());
}

}  // namespace gtb::health
