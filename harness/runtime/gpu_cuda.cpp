// GPU queries through the CUDA runtime, plus PCIe link and clocks from NVML loaded with dlopen
// (never linked: a machine without the driver must still run the CPU side).
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gtb/gpu.h"
#include "kernels/common/cuda/check.h"

namespace gtb::gpu {

namespace {

std::string error_text(const char* call, cudaError_t e) {
  return std::string(call) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

struct Probe {
  int count = 0;  // stays 0 when the runtime cannot reach a driver
  std::optional<std::string> reason;
};

const Probe& probe() {
  static Probe p = [] {
    Probe r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.count = 0;
      r.reason = error_text("cudaGetDeviceCount", e);
      (void)cudaGetLastError();
    } else if (n == 0) {
      r.reason = "no CUDA device found";
    } else {
      r.count = n;
    }
    return r;
  }();
  return p;
}

// The few NVML entry points used, resolved at run time.
struct Nvml {
  using Fn0 = int (*)();
  using ByPci = int (*)(const char*, void**);
  using UInt = int (*)(void*, unsigned*);
  using Clock = int (*)(void*, int, unsigned*);
  using Str = int (*)(char*, unsigned);
  void* lib = nullptr;
  Fn0 init = nullptr;
  ByPci by_pci = nullptr;
  UInt curr_gen = nullptr, curr_width = nullptr, max_gen = nullptr, max_width = nullptr;
  Clock max_clock = nullptr;
  Str driver = nullptr;
  bool ok = false;
};

const Nvml& nvml() {
  static Nvml n = [] {
    Nvml r;
    r.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!r.lib) return r;
    r.init = reinterpret_cast<Nvml::Fn0>(dlsym(r.lib, "nvmlInit_v2"));
    r.by_pci = reinterpret_cast<Nvml::ByPci>(dlsym(r.lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    r.curr_gen = reinterpret_cast<Nvml::UInt>(dlsym(r.lib, "nvmlDeviceGetCurrPcieLinkGeneration"));
    r.curr_width = reinterpret_cast<Nvml::UInt>(dlsym(r.lib, "nvmlDeviceGetCurrPcieLinkWidth"));
    r.max_gen = reinterpret_cast<Nvml::UInt>(dlsym(r.lib, "nvmlDeviceGetMaxPcieLinkGeneration"));
    r.max_width = reinterpret_cast<Nvml::UInt>(dlsym(r.lib, "nvmlDeviceGetMaxPcieLinkWidth"));
    r.max_clock = reinterpret_cast<Nvml::Clock>(dlsym(r.lib, "nvmlDeviceGetMaxClockInfo"));
    r.driver = reinterpret_cast<Nvml::Str>(dlsym(r.lib, "nvmlSystemGetDriverVersion"));
    r.ok = r.init && r.by_pci && r.init() == 0;
    return r;
  }();
  return n;
}

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return v;
}

}  // namespace

bool built_with_cuda() { return true; }
std::optional<std::string> unavailable_reason() { return probe().reason; }
int device_count() { return probe().count; }

json describe() {
  if (auto why = unavailable_reason()) return {{"available", false}, {"reason", *why}};
  json g;
  g["available"] = true;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  g["driver_cuda_version"] = ver(drv);
  g["runtime_version"] = ver(rt);
  int maj = 0, min = 0, pat = 0;
  cublasGetProperty(MAJOR_VERSION, &maj);
  cublasGetProperty(MINOR_VERSION, &min);
  cublasGetProperty(PATCH_LEVEL, &pat);
  g["cublas_version"] = std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(pat);
  const Nvml& nv = nvml();
  if (nv.ok && nv.driver) {
    char buf[96] = {0};
    if (nv.driver(buf, sizeof buf) == 0) g["driver_version"] = buf;
  }
  json devs = json::array();
  for (int d = 0; d < device_count(); ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    json j;
    j["index"] = d;
    j["name"] = p.name;
    j["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
    j["sm_count"] = p.multiProcessorCount;
    j["memory_bytes"] = static_cast<std::uint64_t>(p.totalGlobalMem);
    j["l2_bytes"] = p.l2CacheSize;
    j["memory_bus_bits"] = p.memoryBusWidth;
    j["sm_clock_mhz"] = attr(cudaDevAttrClockRate, d) / 1000;
    j["memory_clock_mhz"] = attr(cudaDevAttrMemoryClockRate, d) / 1000;
    j["async_engines"] = p.asyncEngineCount;
    j["ecc"] = p.ECCEnabled != 0;
    j["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
    j["shared_memory_per_sm"] = static_cast<std::uint64_t>(p.sharedMemPerMultiprocessor);
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) j["pci_bus_id"] = bus;
    if (nv.ok && bus[0]) {
      void* h = nullptr;
      if (nv.by_pci(bus, &h) == 0) {
        unsigned v = 0;
        json pcie;
        if (nv.curr_gen && nv.curr_gen(h, &v) == 0) pcie["gen"] = v;
        if (nv.curr_width && nv.curr_width(h, &v) == 0) pcie["width"] = v;
        if (nv.max_gen && nv.max_gen(h, &v) == 0) pcie["max_gen"] = v;
        if (nv.max_width && nv.max_width(h, &v) == 0) pcie["max_width"] = v;
        if (!pcie.empty()) j["pcie"] = pcie;
        // NVML clock types: 0 = graphics, 2 = memory.
        if (nv.max_clock && nv.max_clock(h, 0, &v) == 0) j["max_sm_clock_mhz"] = v;
        if (nv.max_clock && nv.max_clock(h, 2, &v) == 0) j["max_memory_clock_mhz"] = v;
      }
    }
    devs.push_back(j);
  }
  g["devices"] = devs;
  return g;
}

std::optional<std::string> reset_after_error() {
  if (!available()) return std::nullopt;
  (void)cudaGetLastError();  // clears non-sticky errors
  // The case may have thrown for a host-side reason while its kernels were still running: a fault in
  // them is only reported by a synchronizing call, so wait for the device before judging it clean.
  if (cudaDeviceSynchronize() == cudaSuccess) return std::nullopt;
  (void)cudaGetLastError();
  // A sticky error survives the clear: every later call fails the same way.
  const cudaError_t again = cudaDeviceSynchronize();
  if (again != cudaSuccess) return error_text("cudaDeviceSynchronize", again);
  return std::nullopt;
}

std::pair<std::size_t, std::size_t> memory_info() {
  if (!available()) return {0, 0};
  std::size_t f = 0, t = 0;
  if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
    (void)cudaGetLastError();
    return {0, 0};
  }
  return {f, t};
}

}  // namespace gtb::gpu
