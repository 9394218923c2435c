// Plausibility checks that flag, never drop: a suspect record keeps its number and says why.
#include "harness/document/plausibility.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/document/published.h"
#include "harness/document/stats.h"

namespace gtb {

namespace {

using format::sig3;

void add_reason(Record& r, const std::string& why) { r.suspect += (r.suspect.empty() ? "" : "; ") + why; }

// A number of the context, 0 when it does not say.
double number_at(const json& j, json_read::Path path) { return json_read::number_at(j, path, 0); }

// The largest cache the record's data could sit in, 0 when the context does not say.
double cache_bytes(const Record& r, const json& ctx) {
  if (r.backend == Backend::cpu) {
    // The size the run's own cache-resident rule used (it may be injected), else the largest level.
    if (const double llc = number_at(ctx, {"host", "caches", "last_level_bytes"}); llc > 0) return llc;
    return std::max({number_at(ctx, {"host", "caches", "l1d_bytes"}), number_at(ctx, {"host", "caches", "l2_bytes"}),
                     number_at(ctx, {"host", "caches", "l3_bytes"})});
  }
  const json& devs = json_read::array_at(ctx, {"gpu", "devices"});
  return devs.empty() ? 0 : number_at(devs[0], {"l2_bytes"});
}

void over_ceiling(Record& r, const json& ctx, const PlausibilityLimits& lim) {
  if (r.ceiling.empty() || r.metric.unit != "GB/s") return;
  const double ceil = number_at(ctx, {published::kCeilings, r.ceiling.c_str()});
  if (!(ceil > 0) || !(*r.value > lim.over_ceiling * ceil)) return;
  // The record's own mark wins: the family judged its working set against the cache it ran on
  // (the CPU's last-level cache, the device's L2). Without one, the context's cache sizes decide.
  const auto mark = r.info.find("cache_resident");
  if (mark != r.info.end() && mark->is_boolean() && mark->get<bool>()) return;
  double touched = r.work_per_rep / 2;
  if (auto w = r.info.find("working_set_bytes"); w != r.info.end() && w->is_number())
    touched = w->get<double>();
  else if (auto c = r.counters.find("working_set_bytes"); c != r.counters.end())
    touched = c->second.value;
  const double cache = cache_bytes(r, ctx);
  const bool marked_out_of_cache = mark != r.info.end() && mark->is_boolean();
  if (!marked_out_of_cache && (!(cache > 0) || !(touched > lim.cache_multiple * cache))) return;
  add_reason(r, sig3(100 * *r.value / ceil) + "% of the measured ceiling " + r.ceiling + " (" + sig3(ceil) +
                    " GB/s) at a size that is not cache-resident (" + sig3(touched / 1e6) + " MB touched, largest cache " +
                    sig3(cache / 1e6) + " MB): the ceiling or this rate is wrong");
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
      flags.push_back({&r, "the " + std::to_string(threads_of(r)) + "-thread variant ran at " + sig3(speed) +
                               "x its one-thread twin '" + s.variant + "' (" + sig3(*r.value) + " vs " + sig3(*s.value) +
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
    add_reason(r, "the CUDA events measured " + sig3(event * 1e6) + " us per repetition, longer than the " +
                      sig3(host * 1e6) + " us the host clock saw around the same work: the events do not time it");
}

// Samples that climb or fall through the record (a clock ramping, a cache or page pool filling,
// other load arriving), or that spread so widely that their median says little. Drift is judged
// within one run only: across runs the samples of several processes are joined.
void unsteady(Record& r, const PlausibilityLimits& lim) {
  if (!r.stats || !(r.stats->median > 0)) return;
  const double spread = r.stats->iqr / r.stats->median;
  const std::size_t n = r.samples.size();
  if (r.runs.empty() && n >= lim.drift_min_samples) {
    // Spearman's rank correlation of the samples with their order (no ties matter here: any tie
    // only lowers it).
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r.samples[a] < r.samples[b]; });
    std::vector<double> rank(n);
    for (std::size_t k = 0; k < n; ++k) rank[order[k]] = double(k);
    const double mid = double(n - 1) / 2;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) num += (double(i) - mid) * (rank[i] - mid), den += (double(i) - mid) * (double(i) - mid);
    const double rho = den > 0 ? num / den : 0;
    const std::size_t third = n / 3;
    const double first = median({r.samples.begin(), r.samples.begin() + std::ptrdiff_t(third)});
    const double last = median({r.samples.end() - std::ptrdiff_t(third), r.samples.end()});
    const double ratio = first > 0 ? last / first : 1;
    if (std::fabs(rho) >= lim.drift_rank_correlation && (ratio >= lim.drift_ratio || ratio <= 1 / lim.drift_ratio) &&
        spread >= lim.drift_min_spread) {
      add_reason(r, "the samples " + std::string(ratio > 1 ? "grew slower" : "grew faster") + " through the record (" +
                        sig3(first * 1e3) + " ms per repetition in the first third, " + sig3(last * 1e3) +
                        " ms in the last, rank correlation " + sig3(rho) +
                        "): the machine changed while it was measured; the median is not a steady figure");
      return;
    }
  }
  if (spread > lim.max_spread)
    add_reason(r, "the samples spread over " + sig3(100 * spread) + "% of their median (interquartile range): "
                      "the median is not a steady figure");
}

// The value of NVIDIA_TF32_OVERRIDE the context found, nullptr where it was not set (or the file is
// older than context.environment).
const json* tf32_override(const json& ctx) {
  const json* v = json_read::find(ctx, {"environment", kEnvNvidiaTf32Override});
  return v && v->is_string() ? v : nullptr;
}

bool precision_is(const Record& r, const char* precision) {
  const auto p = r.options.find("precision");
  return p != r.options.end() && p->is_string() && p->get<std::string>() == precision;
}
bool precision_tf32(const Record& r) { return precision_is(r, "tf32"); }

void tf32_turned_off(Record& r, const json& ctx) {
  const json* v = tf32_override(ctx);
  if (r.backend != Backend::cuda || !precision_tf32(r) || !v || v->get<std::string>() != "0") return;
  add_reason(r, std::string(kEnvNvidiaTf32Override) +
                    "=0 was set (context.environment): NVIDIA's libraries ran this TF32 work in FP32, so the figure is "
                    "FP32's");
}

}  // namespace

bool tf32_override_concerns(const Record& r) {
  if (r.backend != Backend::cuda) return false;
  if (precision_tf32(r)) return true;
  const auto ct = r.info.find("compute_type");
  return precision_is(r, "fp32") && ct != r.info.end() && ct->is_string() &&
         ct->get<std::string>().rfind("CUBLAS_COMPUTE_32F", 0) == 0;
}

void note_tf32_override(std::vector<Record>& records, const json& context) {
  const json* v = tf32_override(context);
  if (!v) return;
  for (Record& r : records)
    if ((r.status == Status::ok || r.status == Status::invalid) && tf32_override_concerns(r))
      r.info["nvidia_tf32_override"] = *v;
}

void flag_suspects(std::vector<Record>& records, const json& context, const PlausibilityLimits& lim) {
  for (Record& r : records) r.suspect.clear();
  for (Record& r : records) {
    if (r.status != Status::ok || !r.value) continue;
    over_ceiling(r, context, lim);
    gpu_slower_than_host(r, lim);
    unsteady(r, lim);
    tf32_turned_off(r, context);
  }
  parallel_slower(records, lim);
}

}  // namespace gtb
