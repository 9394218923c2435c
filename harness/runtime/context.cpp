// Gathers the machine and build context written into every results file.
#include "gtb/context.h"

#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "gtb/gpu.h"
#include "kernels/common/denormals.h"
#include "harness/document/plausibility.h"
#include "harness/document/results.h"

extern "C" {
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);
}

namespace gtb {

const char* build_git_commit();
bool build_git_dirty();

namespace {

std::string read_first_line(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto pos = line.find_first_of(":=");
      if (pos == std::string::npos) continue;
      std::string v = line.substr(pos + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return {};
}

}  // namespace

std::vector<std::string> cpu_isa_flags() {
  // The flags that decide which kernels a BLAS or a compiler can use.
  static const std::set<std::string> wanted = {
      "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
      "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "avx_vnni", "asimd", "sve", "sve2"};
  std::string flags = read_first_line("/proc/cpuinfo", "flags");
  if (flags.empty()) flags = read_first_line("/proc/cpuinfo", "Features");
  std::istringstream is(flags);
  std::vector<std::string> out;
  std::string f;
  std::set<std::string> seen;
  while (is >> f)
    if (wanted.count(f) && seen.insert(f).second) out.push_back(f);
  return out;
}

namespace {

// "32K", "2048K", "32M" (sysfs cache size syntax) to bytes; 0 when unreadable.
long long parse_cache_size(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = used < text.size() ? text[used] : ' ';
  if (unit == 'K') v *= 1024;
  if (unit == 'M') v *= 1024 * 1024;
  if (unit == 'G') v *= 1024LL * 1024 * 1024;
  return v;
}

std::string os_name() {
  std::string pretty = read_first_line("/etc/os-release", "PRETTY_NAME");
  return pretty.empty() ? "unknown" : pretty;
}

}  // namespace

long long CpuCaches::last_level_bytes() const {
  return injected_llc_bytes > 0 ? injected_llc_bytes : std::max({l1d_bytes, l2_bytes, l3_bytes});
}

CpuCaches cpu_caches() {
  CpuCaches c;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_in(dir + "level"), type_in(dir + "type"), size_in(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(level_in >> level) || !(type_in >> type) || !(size_in >> size)) continue;
    if (type == "Instruction") continue;
    const long long bytes = parse_cache_size(size);
    if (level == 1) c.l1d_bytes = bytes;
    if (level == 2) c.l2_bytes = bytes;
    if (level == 3) c.l3_bytes = bytes;
  }
  if (const char* inj = std::getenv("GTB_CPU_LLC_BYTES"); inj && *inj) {
    char* end = nullptr;
    const long long v = std::strtoll(inj, &end, 10);
    if (end && *end == '\0' && v > 0) c.injected_llc_bytes = v;
  }
  return c;
}

bool cache_resident(double working_set_bytes, long long cache_bytes) {
  return cache_bytes > 0 && working_set_bytes < kCacheResidentMultiple * double(cache_bytes);
}

bool cache_resident(double working_set_bytes) {
  static const long long llc = cpu_caches().last_level_bytes();
  return cache_resident(working_set_bytes, llc);
}

long long host_available_bytes() {
  // Injected like the cache size, so that a test can stand for a machine with little memory.
  if (const char* inj = std::getenv("GTB_HOST_AVAILABLE_BYTES"); inj && *inj) {
    char* end = nullptr;
    const long long v = std::strtoll(inj, &end, 10);
    if (end && *end == '\0' && v > 0) return v;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long long kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(256, '\n');
  }
  return 0;
}

namespace {

std::string& core_note() {
  static std::string note = "not examined: this family does not use OpenBLAS";
  return note;
}
bool& core_examined() {
  static bool examined = false;
  return examined;
}

const char* env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

void set_openblas_core_note(const std::string& note) {
  core_note() = note;
  core_examined() = true;
}

std::string openblas_threading() {
  // OpenBLAS's own constants: 0 sequential, 1 its pthreads server, 2 OpenMP.
  switch (const int p = openblas_get_parallel()) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "openmp";
    default: return "unknown (" + std::to_string(p) + ")";
  }
}

std::string openblas_core_source() {
  if (!env_set(kEnvCoretype)) return "detected";
  return env_set(kEnvDetected) ? "gtb" : "user";
}

json openblas_core_context() {
  json j;
  j["corename"] = openblas_get_corename();
  const std::string src = openblas_core_source();
  j["source"] = src;
  if (src == "gtb") {
    j["detected"] = env_set(kEnvDetected);
    j["requested"] = env_set(kEnvCoretype);
    j["reason"] = env_set(kEnvReason) ? env_set(kEnvReason) : "";
  } else if (src == "user") {
    j["requested"] = env_set(kEnvCoretype);
    j["reason"] = std::string("OPENBLAS_CORETYPE=") + env_set(kEnvCoretype) + " set by the user: respected";
  } else {
    j["detected"] = j["corename"];
    j["reason"] = core_note();
    // A merged results file takes the core of a family that examined it (merge_family_context).
    if (!core_examined()) j["examined"] = false;
  }
  return j;
}

json host_context() {
  json h;
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  h["hostname"] = host;
  h["os"] = os_name();
  utsname u{};
  if (::uname(&u) == 0) h["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::string model = read_first_line("/proc/cpuinfo", "model name");
  h["cpu_model"] = model.empty() ? "unknown" : model;
  h["logical_cpus"] = static_cast<int>(std::thread::hardware_concurrency());
  h["omp_threads"] = omp_get_max_threads();
  h["isa"] = cpu_isa_flags();
  h["denormals"] = denormals_mode();
  const CpuCaches caches = cpu_caches();
  // Per instance as seen by CPU 0 (an L3 is usually shared by several cores).
  h["caches"] = {{"l1d_bytes", caches.l1d_bytes},
                 {"l2_bytes", caches.l2_bytes},
                 {"l3_bytes", caches.l3_bytes},
                 {"last_level_bytes", caches.last_level_bytes()}};
  if (caches.injected_llc_bytes > 0) h["caches"]["last_level_injected"] = "GTB_CPU_LLC_BYTES";
  json blas;
  blas["library"] = "OpenBLAS";
  blas["config"] = openblas_get_config();
  blas["corename"] = openblas_get_corename();
  blas["coretype"] = openblas_core_context();
  blas["threads"] = openblas_get_num_threads();
  blas["threading"] = openblas_threading();
  h["blas"] = blas;
  return h;
}

json gpu_context() { return gpu::describe(); }

json environment_context() {
  json e = json::object();
  for (const char* name : {kEnvNvidiaTf32Override})
    if (const char* v = std::getenv(name)) e[name] = v;
  return e;
}

json build_context() {
  json b;
  b["gtb_version"] = GTB_VERSION;
  b["compiler"] = GTB_CXX_COMPILER;
  b["cxx_flags"] = GTB_CXX_FLAGS;
  b["build_type"] = GTB_BUILD_TYPE;
#if GTB_HAVE_CUDA
  b["cuda"] = GTB_CUDA_VERSION;
  b["cuda_architectures"] = GTB_CUDA_ARCHS;
#else
  b["cuda"] = nullptr;
  b["cuda_architectures"] = nullptr;
#endif
  b["git_commit"] = build_git_commit();
  b["git_dirty"] = build_git_dirty();
  return b;
}

json full_context() {
  json c;
  c["host"] = host_context();
  c["build"] = build_context();
  c["gpu"] = gpu_context();
  c["environment"] = environment_context();
  c["timing"] = {{"host_wall", "std::chrono::steady_clock, after a device synchronize for GPU work"},
                 {"cuda_event", "cudaEventElapsedTime between events on the measured stream (about 0.5 us resolution)"}};
  c["units"] = {{"GB", "1e9 bytes"}, {"bandwidth_bytes", "bytes read + bytes written (STREAM rule); a host-device copy of N bytes counts N"}};
  return c;
}

}  // namespace gtb
