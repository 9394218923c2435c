// Plausibility checks that flag, never drop: a suspect record keeps its number and says why.
#include "harness/plausibility.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gtb {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void add_reason(Record& r, const std::string& why) { r.suspect += (r.suspect.empty() ? "" : "; ") + why; }

double number_at(const json& j, std::initializer_list<const char*> keys) {
  const json* cur = &j;
  for (const char* k : keys) {
    if (!cur->is_object() || !cur->contains(k)) return 0;
    cur = &(*cur)[k];
  }
  return cur->is_number() ? cur->get<double>() : 0;
}

// The largest cache the record's data could sit in, 0 when the context does not say.
double cache_bytes(const Record& r, const json& ctx) {
  if (r.backend == Backend::cpu)
    return std::max({number_at(ctx, {"host", "caches", "l1d_bytes"}), number_at(ctx, {"host", "caches", "l2_bytes"}),
                     number_at(ctx, {"host", "caches", "l3_bytes"})});
  const json* devs = nullptr;
  if (ctx.contains("gpu") && ctx["gpu"].is_object() && ctx["gpu"].contains("devices")) devs = &ctx["gpu"]["devices"];
  if (!devs || !devs->is_array() || devs->empty()) return 0;
  return number_at((*devs)[0], {"l2_bytes"});
}

void over_ceiling(Record& r, const json& ctx, const PlausibilityLimits& lim) {
  if (r.ceiling.empty() || r.metric.unit != "GB/s") return;
  const double ceil = number_at(ctx, {"ceilings", r.ceiling.c_str()});
  if (!(ceil > 0) || !(*r.value > lim.over_ceiling * ceil)) return;
  double touched = r.info.contains("working_set_bytes") && r.info["working_set_bytes"].is_number()
                       ? r.info["working_set_bytes"].get<double>()
                       : r.work_per_rep / 2;
  const double cache = cache_bytes(r, ctx);
  if (!(cache > 0) || !(touched > lim.cache_multiple * cache)) return;
  add_reason(r, num(100 * *r.value / ceil) + "% of the measured ceiling " + r.ceiling + " (" + num(ceil) +
                    " GB/s) at a size that is not cache-resident (" + num(touched / 1e6) + " MB touched, largest cache " +
                    num(cache / 1e6) + " MB): the ceiling or this rate is wrong");
}

int threads_of(const Record& r) {
  const auto it = r.info.find("threads");
  return it != r.info.end() && it->is_number_integer() ? it->get<int>() : 0;
}

void parallel_slower(std::vector<Record>& records, const PlausibilityLimits& lim) {
  auto key = [](const Record& r) {
    return r.family + '\n' + r.workload + '\n' + r.params.dump() + '\n' + r.options.dump() + '\n' + r.metric.unit;
  };
  std::map<std::string, const Record*> best_serial;
  auto faster = [](const Record& a, const Record& b) {
    return a.metric.better() == Better::higher ? *a.value > *b.value : *a.value < *b.value;
  };
  for (const Record& r : records) {
    if (r.backend != Backend::cpu || r.status != Status::ok || !r.value || threads_of(r) != 1) continue;
    const Record*& slot = best_serial[key(r)];
    if (!slot || faster(r, *slot)) slot = &r;
  }
  std::vector<std::pair<Record*, std::string>> flags;
  for (Record& r : records) {
    if (r.backend != Backend::cpu || r.status != Status::ok || !r.value || threads_of(r) <= 1) continue;
    const auto it = best_serial.find(key(r));
    if (it == best_serial.end() || !(*r.value > 0) || !(*it->second->value > 0)) continue;
    const Record& s = *it->second;
    const double speed = r.metric.better() == Better::higher ? *r.value / *s.value : *s.value / *r.value;
    if (speed < lim.parallel_vs_serial)
      flags.push_back({&r, "the " + std::to_string(threads_of(r)) + "-thread variant ran at " + num(speed) +
                               "x its one-thread twin '" + s.variant + "' (" + num(*r.value) + " vs " + num(*s.value) +
                               " " + r.metric.unit + "): other load on the cores, or too little work per thread"});
  }
  for (auto& [r, why] : flags) add_reason(*r, why);
}

void gpu_slower_than_host(Record& r, const PlausibilityLimits& lim) {
  if (r.backend != Backend::cuda || r.clock != Clock::cuda_event || !r.stats) return;
  const auto it = r.info.find("host_wall_seconds_per_rep");
  if (it == r.info.end() || !it->is_number()) return;
  const double host = it->get<double>(), event = r.stats->median;
  const double slack = lim.event_resolution_s / double(std::max<std::int64_t>(1, r.reps_per_sample));
  if (host > 0 && event > lim.event_vs_host * host + slack)
    add_reason(r, "the CUDA events measured " + num(event * 1e6) + " us per repetition, longer than the " +
                      num(host * 1e6) + " us the host clock saw around the same work: the events do not time it");
}

}  // namespace

void flag_suspects(std::vector<Record>& records, const json& context, const PlausibilityLimits& lim) {
  for (Record& r : records) r.suspect.clear();
  for (Record& r : records) {
    if (r.status != Status::ok || !r.value) continue;
    over_ceiling(r, context, lim);
    gpu_slower_than_host(r, lim);
  }
  parallel_slower(records, lim);
}

}  // namespace gtb
