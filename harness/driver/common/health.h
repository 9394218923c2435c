// Measurement health: what else the machine was doing while a family measured, and whether to trust it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "harness/document/types.h"
#include "harness/driver/common/speed.h"

namespace gtb::health {

// Aggregate CPU time of all CPUs from /proc/stat's "cpu" line, in seconds.
struct CpuTimes {
  double busy = 0;   // user + nice + system + irq + softirq
  double idle = 0;   // idle + iowait
  double steal = 0;  // taken by the hypervisor for other guests
  double total() const { return busy + idle + steal; }
};
// Parses /proc/stat text; throws std::runtime_error naming what is wrong.
CpuTimes parse_proc_stat(const std::string& text, double ticks_per_second);
// The 1-minute load average from /proc/loadavg text; throws std::runtime_error.
double parse_loadavg(const std::string& text);

// One device's NVML reading.
struct GpuReading {
  std::string name;
  std::optional<unsigned> sm_mhz, mem_mhz, temperature_c, utilization_pct;
  std::optional<std::uint64_t> clock_event_reasons;  // NVML clocks event (throttle) reason bits
  std::optional<unsigned> compute_processes;         // processes holding a context on the device
};

// Everything read at one moment. A field that cannot be read stays empty and its reason is kept.
struct Snapshot {
  double wall_s = 0;               // steady clock
  double own_cpu_s = 0;            // this process and its waited-for children (getrusage)
  int cpus = 0;                    // online CPUs
  std::optional<CpuTimes> cpu;
  std::optional<double> loadavg_1min;
  std::optional<std::string> governor;              // the one all CPUs share, or "mixed: a, b"
  std::optional<double> cur_mhz_min, cur_mhz_max;   // current core clocks over all CPUs
  std::string mhz_source;                           // which reading they are (kMhzSource*)
  std::optional<std::int64_t> thermal_throttle_events;  // sum of the kernel's per-CPU counters
  std::vector<std::string> unavailable;             // "cpufreq: ..." and the like
  std::optional<std::vector<GpuReading>> gpus;      // empty when NVML is absent (reason in unavailable)
};

// The devices this process's CUDA can see (CUDA_VISIBLE_DEVICES and all), in CUDA's order, matched
// to NVML's by PCI bus id; or nothing with the reason (no driver library, init failed, or which
// devices are visible cannot be told). NVML, and the CUDA driver that says which devices are visible,
// are loaded with dlopen at the first call and never linked. A visible device NVML does not have is
// listed by name with no readings.
std::optional<std::vector<GpuReading>> read_nvml(std::string& why);
// How many GPUs CUDA shows this process, from the same driver query; nothing when it cannot be asked.
std::optional<int> visible_gpu_count();

// A PCI bus id as CUDA ("0000:17:00.0") or NVML ("00000000:17:00.0") spells it, in either case, made
// comparable ("00000000:17:00.0"); nothing when the text is not one.
std::optional<std::string> canonical_pci_bus_id(const std::string& id);
// Which NVML devices to read: for each bus id CUDA sees (in CUDA's order, so that GPU i of a health
// record is CUDA device i), the index of the NVML device at that address, each device once (MIG
// instances of one GPU share its address); `not_found`: visible bus ids no NVML device has.
struct NvmlSelection {
  std::vector<std::size_t> read;
  std::vector<std::string> not_found;
};
NvmlSelection select_visible_nvml(const std::vector<std::string>& visible_bus_ids,
                                  const std::vector<std::string>& nvml_bus_ids);

// NVML's utilization is the busy share of its last sample period, 1/6 s to 1 s depending on the
// product (nvmlDeviceGetUtilizationRates): read right after the previous family's processes ended
// (the before-reading follows that family's after-reading at once) it still shows their work. So a
// reading starts at least one period (the documented upper bound) after the previous one started.
constexpr double kNvmlUtilizationPeriodSeconds = 1.0;
// Seconds to wait before a reading at `now`, the previous one having started at `previous_start`.
double nvml_wait_seconds(double now, std::optional<double> previous_start);

// Where the readings come from; tests point these at synthetic files.
struct Sources {
  std::string proc = "/proc";
  std::string sys = "/sys";
  bool gpu = true;  // read NVML (loaded with dlopen; absent on machines without the NVIDIA driver)
  bool speed = true;  // the Monitor reads the machine's speed before and after (speed.h, ~15 ms each)
};
Snapshot take(const Sources& src = {});

// Limits above which a family's numbers are not to be trusted. Stated in docs/harness.md.
struct Thresholds {
  double other_cpu_fraction = 0.10;  // other processes' CPU time / (wall time x CPUs)
  double steal_fraction = 0.05;      // stolen CPU time / all CPU time
  unsigned gpu_busy_pct = 10;        // another process's GPU utilization before a family starts
  double settle_fraction = 0.05;     // --wait-idle: other processes' CPU use counted as idle
  int settle_seconds = 3;            // --wait-idle: consecutive idle one-second windows
};
GTB_JSON_WRITE(Thresholds, other_cpu_fraction, steal_fraction, gpu_busy_pct, settle_fraction, settle_seconds)

// Throttle reasons that mean the clocks were pulled down (thermal, hardware slowdown, power brake),
// as names; the software power cap and idle are not counted (they are normal under load / at rest).
std::vector<std::string> throttle_reason_names(std::uint64_t bits, bool include_benign = false);

// Watches one family: before, a reading every second while it runs (GPU clocks and throttle
// reasons, the load average), after. `judge` turns it into the per-family record, to which finish()
// adds the machine's speed read before and after (health.speed, speed.h).
class Monitor {
 public:
  explicit Monitor(Sources src = {}, Thresholds t = {});
  void start();
  void tick();  // cheap; reads at most once a second
  json finish();
 private:
  Sources src_;
  Thresholds t_;
  Snapshot before_;
  double last_tick_ = 0;
  std::uint64_t reasons_seen_ = 0;
  bool reasons_read_ = false;
  std::optional<unsigned> min_sm_mhz_, max_sm_mhz_;
  std::optional<double> max_load_;
  std::optional<Speed> speed_before_;
};

// The per-family record: what was read, how busy the machine was, and warnings when over a limit.
// `during` carries what the monitor saw while the family ran (throttle reasons OR-ed, SM clock range).
struct During {
  std::optional<std::uint64_t> gpu_reasons;
  std::optional<unsigned> sm_mhz_min, sm_mhz_max;
  std::optional<double> loadavg_max;
};
json judge(const Snapshot& before, const Snapshot& after, const During& during, const Thresholds& t = {});

// What a snapshot says about the machine at the start of a run (context.health.start).
json describe(const Snapshot& s);
json thresholds_json(const Thresholds& t);

// --wait-idle: one-second windows of other processes' CPU use; settled after `settle_seconds`
// consecutive windows under the limit.
class Settle {
 public:
  explicit Settle(Thresholds t = {}) : t_(t) {}
  // Adds one window (other processes' CPU fraction, steal fraction); returns true once settled.
  bool add(double other_fraction, double steal_fraction);
  int quiet_windows() const { return quiet_; }
 private:
  Thresholds t_;
  int quiet_ = 0;
};
// Waits up to max_seconds for the machine to settle (reading /proc once a second); returns what
// happened for context.health.wait_idle. Prints a line when it starts waiting and when it stops.
json wait_idle(double max_seconds, const Sources& src = {}, Thresholds t = {});

// Other processes' share of the machine between two snapshots, and the stolen share.
double other_cpu_fraction(const Snapshot& a, const Snapshot& b);
double steal_fraction(const Snapshot& a, const Snapshot& b);

// A family's health record in one line: its warnings when it was judged busy, and a change of the
// machine's speed its readings show (speed_change; files written before that judgement included);
// "" when neither.
std::string busy_text(const json& family_health);

// The line a family's health gets when it says busy, naming what was seen: "<label> WARNING: measured
// on a busy machine: ..." (other processes, steal, throttling, ...); where all it saw is the host's speed
// moving while nothing else ran here, that, and what it means with pairs measured as pairs: the
// family's comparisons hold, its absolute figures vary by the ratio of the readings. "" when not busy.
std::string family_warning_line(const std::string& label, const json& family_health);
// The same line on `f` (nothing when not busy).
void print_family_warning(std::FILE* f, const std::string& label, const json& family_health);

// Each family entry of a document whose health reads busy (busy_text), in file order: its name, its
// run in a file of several runs (0 otherwise), the text, and whether a change of speed is all it says.
struct BusyFamily {
  std::string name;
  int run = 0;
  std::string text;
  bool speed_only = false;
};
std::vector<BusyFamily> busy_families(const json& doc);

// Lines for the summary and the report: the start reading's own warnings, then one per family run
// whose health says busy, except that family runs whose only warning is a change of speed, when there
// are more than kOwnSpeedLines of them, share one line naming them (family and runs), before the rest.
// Empty when all is well or the file predates health readings.
constexpr long kOwnSpeedLines = 3;
std::vector<std::string> warnings(const json& doc);

}  // namespace gtb::health
