// Measurement health: host readings (/proc, /sys), the busy/idle decision and its warnings.
#include "harness/driver/common/health.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/runtime/stopping.h"

namespace gtb::health {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

double own_cpu_seconds() {
  double s = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    if (::getrusage(who, &u) == 0)
      s += double(u.ru_utime.tv_sec) + double(u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return s;
}

// The cpuN folders under <sys>/devices/system/cpu, in number order.
std::vector<fs::path> cpu_dirs(const std::string& sys) {
  std::vector<std::pair<int, fs::path>> v;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sys + "/devices/system/cpu", ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 3 && n.rfind("cpu", 0) == 0 && std::all_of(n.begin() + 3, n.end(), ::isdigit))
      v.push_back({std::stoi(n.substr(3)), e.path()});
  }
  std::sort(v.begin(), v.end());
  std::vector<fs::path> out;
  for (auto& p : v) out.push_back(p.second);
  return out;
}

// Where a clock figure came from: cpufreq reports the running clock; /proc/cpuinfo's "cpu MHz" is the
// kernel's estimate, which in a virtual machine is usually the nominal (TSC) clock whatever the
// cores run at, so a report must not present it as the running clock.
constexpr const char* kMhzSourceCpufreq = "cpufreq scaling_cur_freq: the running clock";
constexpr const char* kMhzSourceCpuinfo =
    "/proc/cpuinfo cpu MHz: the kernel's figure, often the nominal or TSC clock, not the running clock";

void read_cpufreq(const Sources& src, Snapshot& s) {
  const auto cpus = cpu_dirs(src.sys);
  std::set<std::string> governors;
  for (const auto& d : cpus) {
    if (auto g = slurp((d / "cpufreq/scaling_governor").string())) governors.insert(trim(*g));
    if (auto f = slurp((d / "cpufreq/scaling_cur_freq").string())) {
      try {
        const double mhz = std::stod(*f) / 1000.0;  // kHz in sysfs
        s.cur_mhz_min = std::min(s.cur_mhz_min.value_or(mhz), mhz);
        s.cur_mhz_max = std::max(s.cur_mhz_max.value_or(mhz), mhz);
        s.mhz_source = kMhzSourceCpufreq;
      } catch (const std::exception&) {
      }
    }
  }
  if (!governors.empty()) {
    std::string g;
    for (const auto& x : governors) g += (g.empty() ? "" : ", ") + x;
    s.governor = governors.size() == 1 ? g : "mixed: " + g;
  } else {
    s.unavailable.push_back("cpu governor: no " + src.sys +
                            "/devices/system/cpu/cpu*/cpufreq (no frequency driver; usual in a virtual machine)");
  }
  if (!s.cur_mhz_min) {
    // The kernel's own estimate per CPU; in a virtual machine often the nominal clock.
    if (auto info = slurp(src.proc + "/cpuinfo")) {
      std::istringstream is(*info);
      std::string line;
      while (std::getline(is, line)) {
        if (line.rfind("cpu MHz", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        try {
          const double mhz = std::stod(line.substr(colon + 1));
          s.cur_mhz_min = std::min(s.cur_mhz_min.value_or(mhz), mhz);
          s.cur_mhz_max = std::max(s.cur_mhz_max.value_or(mhz), mhz);
          s.mhz_source = kMhzSourceCpuinfo;
        } catch (const std::exception&) {
        }
      }
    }
    if (!s.cur_mhz_min) s.unavailable.push_back("cpu clocks: neither cpufreq nor \"cpu MHz\" in " + src.proc + "/cpuinfo");
  }
  std::int64_t events = 0;
  bool any = false;
  for (const auto& d : cpus)
    for (const char* f : {"thermal_throttle/core_throttle_count", "thermal_throttle/package_throttle_count"})
      if (auto t = slurp((d / f).string())) {
        try {
          events += std::stoll(*t);
          any = true;
        } catch (const std::exception&) {
        }
      }
  if (any)
    s.thermal_throttle_events = events;
  else
    s.unavailable.push_back("cpu thermal throttling: no " + src.sys +
                            "/devices/system/cpu/cpu*/thermal_throttle counters (not exposed here; usual in a virtual machine)");
}

json opt_num(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
template <class T>
json opt_u(const std::optional<T>& v) { return v ? json(*v) : json(nullptr); }

std::string pct(double f) { return format::printf_number("%.0f%%", 100 * f); }

}  // namespace

CpuTimes parse_proc_stat(const std::string& text, double ticks_per_second) {
  if (!(ticks_per_second > 0)) throw std::runtime_error("clock ticks per second must be positive");
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream ls(line.substr(4));
    std::vector<double> f;
    double x = 0;
    while (ls >> x) {
      if (x < 0 || !std::isfinite(x)) throw std::runtime_error("/proc/stat: a negative or non-finite CPU time");
      f.push_back(x);
    }
    if (!ls.eof()) throw std::runtime_error("/proc/stat: the \"cpu\" line holds something that is not a number");
    if (f.size() < 4) throw std::runtime_error("/proc/stat: the \"cpu\" line has fewer than 4 fields");
    f.resize(std::max<std::size_t>(f.size(), 8), 0.0);
    CpuTimes c;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user and nice]
    c.busy = (f[0] + f[1] + f[2] + f[5] + f[6]) / ticks_per_second;
    c.idle = (f[3] + f[4]) / ticks_per_second;
    c.steal = f[7] / ticks_per_second;
    return c;
  }
  throw std::runtime_error("/proc/stat: no aggregate \"cpu\" line");
}

double parse_loadavg(const std::string& text) {
  std::istringstream is(text);
  double v = 0;
  if (!(is >> v) || v < 0 || !std::isfinite(v)) throw std::runtime_error("/proc/loadavg: no load average");
  return v;
}

Snapshot take(const Sources& src) {
  Snapshot s;
  s.wall_s = host_seconds();
  s.own_cpu_s = own_cpu_seconds();
  s.cpus = int(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  if (auto st = slurp(src.proc + "/stat")) {
    try {
      s.cpu = parse_proc_stat(*st, double(::sysconf(_SC_CLK_TCK)));
    } catch (const std::exception& e) {
      s.unavailable.push_back(std::string("cpu load and steal: ") + e.what());
    }
  } else {
    s.unavailable.push_back("cpu load and steal: " + src.proc + "/stat is not readable");
  }
  if (auto la = slurp(src.proc + "/loadavg")) {
    try {
      s.loadavg_1min = parse_loadavg(*la);
    } catch (const std::exception& e) {
      s.unavailable.push_back(std::string("load average: ") + e.what());
    }
  }
  read_cpufreq(src, s);
  if (src.gpu) {
    std::string why;
    s.gpus = read_nvml(why);
    if (!s.gpus) s.unavailable.push_back("gpu health: " + why);
  }
  return s;
}

double other_cpu_fraction(const Snapshot& a, const Snapshot& b) {
  if (!a.cpu || !b.cpu) return 0;
  const double wall = b.wall_s - a.wall_s;
  if (!(wall > 0)) return 0;
  // Everything busy minus what gtb itself (and the family it waited for) used.
  const double busy = (b.cpu->busy - a.cpu->busy) - (b.own_cpu_s - a.own_cpu_s);
  return std::clamp(busy / (wall * std::max(1, b.cpus)), 0.0, 1.0);
}

double steal_fraction(const Snapshot& a, const Snapshot& b) {
  if (!a.cpu || !b.cpu) return 0;
  const double total = b.cpu->total() - a.cpu->total();
  return total > 0 ? std::clamp((b.cpu->steal - a.cpu->steal) / total, 0.0, 1.0) : 0.0;
}

std::vector<std::string> throttle_reason_names(std::uint64_t bits, bool include_benign) {
  static const std::pair<std::uint64_t, const char*> names[] = {
      {0x8, "hw_slowdown"},         {0x20, "sw_thermal_slowdown"},  {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake"},     {0x4, "sw_power_cap"},          {0x1, "gpu_idle"},
      {0x2, "applications_clocks"}, {0x10, "sync_boost"},           {0x100, "display_clock"}};
  const std::uint64_t harmful = 0x8 | 0x20 | 0x40 | 0x80;
  std::vector<std::string> out;
  for (const auto& [bit, name] : names)
    if ((bits & bit) && (include_benign || (bit & harmful))) out.push_back(name);
  return out;
}

json describe(const Snapshot& s) {
  json h;
  h["cpus"] = s.cpus;
  h["loadavg_1min"] = opt_num(s.loadavg_1min);
  h["cpu_governor"] = s.governor ? json(*s.governor) : json("unavailable");
  h["cpu_mhz"] = {{"min", opt_num(s.cur_mhz_min)}, {"max", opt_num(s.cur_mhz_max)}};
  if (!s.mhz_source.empty()) h["cpu_mhz"]["source"] = s.mhz_source;
  h["thermal_throttle_events"] = s.thermal_throttle_events ? json(*s.thermal_throttle_events) : json(nullptr);
  if (s.gpus) {
    json g = json::array();
    for (const auto& d : *s.gpus) {
      json j = {{"name", d.name},
                {"sm_mhz", opt_u(d.sm_mhz)},
                {"mem_mhz", opt_u(d.mem_mhz)},
                {"temperature_c", opt_u(d.temperature_c)},
                {"utilization_pct", opt_u(d.utilization_pct)},
                {"compute_processes", opt_u(d.compute_processes)}};
      if (d.clock_event_reasons) j["clock_event_reasons"] = throttle_reason_names(*d.clock_event_reasons, true);
      g.push_back(j);
    }
    h["gpus"] = g;
  }
  h["unavailable"] = s.unavailable;
  return h;
}

json thresholds_json(const Thresholds& t) { return t; }

json judge(const Snapshot& before, const Snapshot& after, const During& during, const Thresholds& t) {
  json h;
  std::vector<std::string> warn;
  h["seconds"] = after.wall_s - before.wall_s;
  if (before.cpu && after.cpu) {
    const double other = other_cpu_fraction(before, after), steal = steal_fraction(before, after);
    h["other_cpu_fraction"] = other;
    h["steal_fraction"] = steal;
    if (other > t.other_cpu_fraction)
      warn.push_back("other processes used " + pct(other) + " of the CPUs (limit " + pct(t.other_cpu_fraction) + ")");
    if (steal > t.steal_fraction)
      warn.push_back("the hypervisor took " + pct(steal) + " of the CPU time (steal; limit " + pct(t.steal_fraction) + ")");
  }
  h["loadavg_1min"] = {{"before", opt_num(before.loadavg_1min)},
                       {"after", opt_num(after.loadavg_1min)},
                       {"max", opt_num(during.loadavg_max)}};
  h["cpu_governor"] = after.governor ? json(*after.governor) : json("unavailable");
  h["cpu_mhz"] = {{"min", opt_num(after.cur_mhz_min)}, {"max", opt_num(after.cur_mhz_max)}};
  if (!after.mhz_source.empty()) h["cpu_mhz"]["source"] = after.mhz_source;
  if (before.thermal_throttle_events && after.thermal_throttle_events) {
    const auto n = *after.thermal_throttle_events - *before.thermal_throttle_events;
    h["thermal_throttle_events"] = n;
    if (n > 0) warn.push_back("the CPU throttled for heat " + std::to_string(n) + " times");
  } else {
    h["thermal_throttle_events"] = nullptr;
  }
  if (before.gpus && after.gpus) {
    json g = json::array();
    for (std::size_t i = 0; i < after.gpus->size(); ++i) {
      const GpuReading& a = (*after.gpus)[i];
      const GpuReading* b = i < before.gpus->size() ? &(*before.gpus)[i] : nullptr;
      json j = {{"name", a.name}, {"temperature_c_after", opt_u(a.temperature_c)}};
      j["sm_mhz"] = {{"before", b ? opt_u(b->sm_mhz) : json(nullptr)},
                     {"min_during", opt_u(during.sm_mhz_min)},
                     {"max_during", opt_u(during.sm_mhz_max)},
                     {"after", opt_u(a.sm_mhz)}};
      if (b && b->compute_processes) {
        j["other_processes_before"] = *b->compute_processes;
        if (*b->compute_processes > 0)
          warn.push_back(std::to_string(*b->compute_processes) + " other process(es) held GPU " + std::to_string(i) +
                         " when the family started");
      }
      if (b && b->utilization_pct) {
        j["utilization_pct_before"] = *b->utilization_pct;
        if (*b->utilization_pct > t.gpu_busy_pct)
          warn.push_back("GPU " + std::to_string(i) + " was " + std::to_string(*b->utilization_pct) +
                         "% busy before the family started (limit " + std::to_string(t.gpu_busy_pct) + "%)");
      }
      g.push_back(j);
    }
    if (during.gpu_reasons) {
      const auto names = throttle_reason_names(*during.gpu_reasons, true);
      h["gpu_clock_event_reasons_during"] = names;
      const auto bad = throttle_reason_names(*during.gpu_reasons);
      if (!bad.empty()) {
        std::string s;
        for (const auto& n : bad) s += (s.empty() ? "" : ", ") + n;
        warn.push_back("GPU clocks were pulled down (" + s + ")");
      }
    }
    h["gpus"] = g;
  }
  std::vector<std::string> unavailable = after.unavailable;
  h["unavailable"] = unavailable;
  h["busy"] = !warn.empty();
  h["warnings"] = warn;
  return h;
}

Monitor::Monitor(Sources src, Thresholds t) : src_(std::move(src)), t_(t) {}

void Monitor::start() {
  speed_before_.reset();
  if (src_.speed) speed_before_ = measure_speed();
  before_ = take(src_);
  last_tick_ = before_.wall_s;
  reasons_seen_ = 0;
  reasons_read_ = false;
  min_sm_mhz_.reset();
  max_sm_mhz_.reset();
  max_load_ = before_.loadavg_1min;
}

void Monitor::tick() {
  const double now = host_seconds();
  if (now - last_tick_ < 1.0) return;
  last_tick_ = now;
  if (auto la = slurp(src_.proc + "/loadavg")) {
    try {
      const double v = parse_loadavg(*la);
      max_load_ = std::max(max_load_.value_or(v), v);
    } catch (const std::exception&) {
    }
  }
  if (!src_.gpu || !before_.gpus || before_.gpus->empty()) return;
  std::string why;
  if (auto gpus = read_nvml(why))
    for (const auto& g : *gpus) {
      if (g.clock_event_reasons) {
        reasons_seen_ |= *g.clock_event_reasons;
        reasons_read_ = true;
      }
      if (g.sm_mhz) {
        min_sm_mhz_ = std::min(min_sm_mhz_.value_or(*g.sm_mhz), *g.sm_mhz);
        max_sm_mhz_ = std::max(max_sm_mhz_.value_or(*g.sm_mhz), *g.sm_mhz);
      }
    }
}

json Monitor::finish() {
  const Snapshot after = take(src_);
  During d;
  if (reasons_read_) d.gpu_reasons = reasons_seen_;
  d.sm_mhz_min = min_sm_mhz_;
  d.sm_mhz_max = max_sm_mhz_;
  d.loadavg_max = max_load_;
  json h = judge(before_, after, d, t_);
  if (speed_before_) {
    h["speed"] = {{"before", to_json(*speed_before_)}, {"after", to_json(measure_speed())}};
    if (const std::string moved = speed_change(h["speed"]); !moved.empty()) {
      h["warnings"].push_back(moved);
      h["busy"] = true;
    }
  }
  return h;
}

bool Settle::add(double other_fraction, double steal_fraction) {
  const bool quiet = other_fraction <= t_.settle_fraction && steal_fraction <= t_.steal_fraction;
  quiet_ = quiet ? quiet_ + 1 : 0;
  return quiet_ >= t_.settle_seconds;
}

json wait_idle(double max_seconds, const Sources& src, Thresholds t) {
  Sources host_only = src;
  host_only.gpu = false;
  Settle settle(t);
  const double t0 = host_seconds();
  std::fprintf(stderr, "gtb run: waiting up to %.0f s for the machine to settle (other processes under %s of the CPUs for %d s)\n",
               max_seconds, pct(t.settle_fraction).c_str(), t.settle_seconds);
  Snapshot prev = take(host_only);
  if (!prev.cpu) {
    std::fprintf(stderr, "gtb run: cannot read %s/stat; not waiting\n", src.proc.c_str());
    return {{"max_seconds", max_seconds}, {"waited_s", 0.0}, {"settled", false}, {"reason", "no CPU times to read"}};
  }
  bool settled = false;
  double other = 0, steal = 0;
  while (host_seconds() - t0 < max_seconds) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const Snapshot cur = take(host_only);
    other = other_cpu_fraction(prev, cur);
    steal = steal_fraction(prev, cur);
    prev = cur;
    if (settle.add(other, steal)) {
      settled = true;
      break;
    }
  }
  const double waited = host_seconds() - t0;
  std::fprintf(stderr, settled ? "gtb run: the machine settled after %.0f s\n"
                               : "gtb run: the machine did not settle in %.0f s (other processes: %s of the CPUs); measuring anyway\n",
               waited, pct(other).c_str());
  return {{"max_seconds", max_seconds},
          {"waited_s", waited},
          {"settled", settled},
          {"last_other_cpu_fraction", other},
          {"last_steal_fraction", steal}};
}

std::string busy_text(const json& h) {
  std::string s;
  if (json_read::bool_at(h, {"busy"})) {
    for (const auto& w : json_read::array_at(h, {"warnings"}))
      if (w.is_string()) s += (s.empty() ? "" : "; ") + w.get<std::string>();
    if (s.empty()) s = "busy";
  }
  const std::string moved = speed_change(json_read::object_at(h, {"speed"}));
  if (!moved.empty() && s.find(moved) == std::string::npos) s += (s.empty() ? "" : "; ") + moved;
  return s;
}

std::string family_warning_line(const std::string& label, const json& h) {
  const std::string s = busy_text(h);
  if (s.empty()) return "";
  const json& speed = json_read::object_at(h, {"speed"});
  if (s != speed_change(speed)) return label + " WARNING: measured on a busy machine: " + s;
  // Only the host moved: the loop rates' largest ratio between the two readings.
  double ratio = 1;
  for (const char* key : {"one_core_gmadd_per_s", "all_cores_gmadd_per_s"}) {
    const double x = json_read::number_at(speed, {"before", key}, 0.0), y = json_read::number_at(speed, {"after", key}, 0.0);
    if (x > 0 && y > 0) ratio = std::max(ratio, std::max(x, y) / std::min(x, y));
  }
  return label + " WARNING: the host's speed moved while nothing else ran here (" + s.substr(s.find(": ") + 2) +
         "): its A/B pairs were measured as pairs, so its comparisons hold; its absolute figures vary by up to " +
         format::printf_number("%.2f", ratio) + "x";
}

void print_family_warning(std::FILE* f, const std::string& label, const json& h) {
  const std::string line = family_warning_line(label, h);
  if (!line.empty()) std::fprintf(f, "%s\n", line.c_str());
}

std::vector<BusyFamily> busy_families(const json& doc) {
  std::vector<BusyFamily> out;
  const bool several_runs = json_read::number_at(doc, {"runs"}, 1.0) > 1;
  for (const auto& f : json_read::array_at(doc, {"families"})) {
    const json& h = json_read::object_at(f, {"health"});
    BusyFamily b;
    b.text = busy_text(h);
    if (b.text.empty()) continue;
    b.name = json_read::string_at(f, {"name"}, "?");
    // A file of several runs (gtb run --runs K) has an entry per family and run: the run is named.
    b.run = several_runs ? int(json_read::number_at(f, {"run"}, 0.0)) : 0;
    b.speed_only = b.text == speed_change(json_read::object_at(h, {"speed"}));
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<std::string> warnings(const json& doc) {
  std::vector<std::string> out;
  const json& wait = json_read::object_at(doc, {"context", "health", "wait_idle"});
  if (!json_read::bool_at(wait, {"settled"}, true))
    out.push_back("--wait-idle: the machine did not settle in " +
                  format::printf_number("%.0f", json_read::number_at(wait, {"waited_s"}, 0.0)) +
                  " s; the run measured anyway");
  // A family run whose only warning is a change of speed gets a line of its own while there are a
  // few; more (a host that moves the guest all the time) are named together in one line.
  const auto busy = busy_families(doc);
  const auto moved = std::count_if(busy.begin(), busy.end(), [](const BusyFamily& b) { return b.speed_only; });
  std::vector<std::pair<std::string, std::vector<int>>> grouped;  // family -> its moved runs, in file order
  std::vector<std::string> own;
  for (const auto& b : busy) {
    if (b.speed_only && moved > kOwnSpeedLines) {
      auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == b.name; });
      if (it == grouped.end()) it = grouped.insert(grouped.end(), {b.name, {}});
      if (b.run > 0) it->second.push_back(b.run);
      continue;
    }
    own.push_back(b.name + (b.run > 0 ? " (run " + std::to_string(b.run) + ")" : "") + ": " + b.text);
  }
  if (!grouped.empty()) {
    const json& fams = json_read::array_at(doc, {"families"});
    const auto runs = std::count_if(fams.begin(), fams.end(), [](const json& f) { return f.is_object() && f.contains("health"); });
    std::string names;
    for (const auto& [name, rs] : grouped) {
      std::string list;
      for (std::size_t i = 0; i < rs.size(); ++i) list += (i ? ", " : "") + std::to_string(rs[i]);
      names += (names.empty() ? "" : ", ") + name + (rs.empty() ? "" : (rs.size() > 1 ? " (runs " : " (run ") + list + ")");
    }
    out.push_back("the machine's speed changed while " + std::to_string(moved) + " of " + std::to_string(runs) +
                  " family runs ran, and nothing else was over a limit: " + names +
                  " (each one's two readings: `families[].health.speed`)");
  }
  out.insert(out.end(), own.begin(), own.end());
  return out;
}

}  // namespace gtb::health
