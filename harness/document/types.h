// Core value types shared by the harness, the driver and the families: records and their enums.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/document/json_write.h"
#include "harness/document/stats.h"
#include "kernels/common/names.h"

namespace gtb {

using json = nlohmann::ordered_json;

GTB_NAMED_ENUM(Backend, kBackendNames, cpu, cuda);
GTB_NAMED_ENUM(Clock, kClockNames, host_wall, cuda_event);
GTB_NAMED_ENUM(Better, kBetterNames, higher, lower);
GTB_NAMED_ENUM(Status, kStatusNames, ok, skipped, failed, invalid);

// Unknown names throw std::invalid_argument.
inline Backend backend_from_string(const std::string& s) { return parse_name(kBackendNames, s, "backend"); }
inline Clock clock_from_string(const std::string& s) { return parse_name(kClockNames, s, "clock"); }
inline Better better_from_string(const std::string& s) { return parse_name(kBetterNames, s, "direction"); }
inline Status status_from_string(const std::string& s) { return parse_name(kStatusNames, s, "status"); }

GTB_NAMED_ENUM(MetricKind, kMetricKindNames, rate, time);

struct MetricSpec {
  std::string name = "time";
  std::string unit = "s";
  double scale = 1.0;  // rate: value = work / seconds / scale; time: value = seconds / scale
  MetricKind kind = MetricKind::time;
  Better better() const { return kind == MetricKind::rate ? Better::higher : Better::lower; }
};

// Statistics as a record writes them (after its "unit"): types written by declaration, json_write.h.
GTB_JSON_WRITE(Stats, median, mean, min, max, q1, q3, iqr, stddev, cv, count)

struct Counter {
  double value = 0;
  std::string unit;
};
GTB_JSON_WRITE(Counter, value, unit)

// One run's view of a record in a file made by `gtb run --runs K` (K >= 2): what that run measured.
struct RunStat {
  int run = 1;  // 1-based
  Status status = Status::ok;
  std::optional<double> value;  // set when status == ok
  std::optional<Stats> stats;   // over that run's kept samples, seconds per repetition
};

// A declared A/B pair measured alternately, in rounds, within one process (the harness's pairs,
// docs/harness.md): per round, A's seconds per repetition and B's (`with`), taken in the same round, so
// that both met the same moment of the machine. Kept on A's record; one entry per round (the rounds of
// repetitions and runs appended in order).
struct PairedRounds {
  std::string with;
  std::vector<double> a_s, b_s;  // equal length
};
GTB_JSON_WRITE(PairedRounds, with, a_s, b_s)

// One workload x parameters x backend: what was measured, how, and whether it can be trusted.
struct Record {
  std::string id;  // family/workload/variant/backend/k=v,...: also the Google Benchmark name
  std::string family;
  std::string workload;
  std::string variant;
  Backend backend = Backend::cpu;
  json params = json::object();   // the problem: matched between CPU and GPU
  json options = json::object();  // the variant's knobs
  Status status = Status::ok;
  std::string status_detail;      // skip reason, error text, or what the check found
  MetricSpec metric;
  std::optional<double> value;    // set when status == ok
  double work_per_rep = 0;        // bytes / FLOPs / samples per repetition (rate metrics)
  Clock clock = Clock::host_wall;
  std::optional<Stats> stats;     // over samples, seconds per repetition
  std::vector<double> samples;    // seconds per repetition
  // How the kept samples came in groups measured apart (a repetition of `gtb run --repetitions R`, a
  // run of `--runs K`): each group's count, in samples order (they sum to samples.size()). Empty when
  // they are one group. Samples of one group share the machine's moment; the groups show how far that
  // moment moves the median (median_noise_relative_halfwidth).
  std::vector<std::int64_t> sample_groups;
  std::int64_t reps_per_sample = 1;
  std::int64_t warmup_samples = 0;
  std::string stop_reason;
  std::string ceiling;            // name of the context ceiling this record is a fraction of
  json check = json::object();    // {"passed": bool, "detail": str, ...}
  std::map<std::string, Counter> counters;
  json info = json::object();
  json device_timing = json::object();  // cuda_event records: blocking kernel, enqueue vs device time
  std::string suspect;            // why not to trust the (kept) number; empty when nothing looks wrong
  // Per-run statistics when the file holds several runs (empty for one run): the record's own
  // samples_s are then all runs' kept samples, its value and stats over them with every run weighing
  // the same (compute_stats_of_runs).
  std::vector<RunStat> runs;
  std::vector<PairedRounds> paired;  // the pairs this record is the A side of, measured as pairs

  // Metric value of one sample (same direction as value).
  double metric_of_seconds(double seconds) const;
};

// A record whose number can be used: status ok and a finite value. Callers that need more (samples,
// a positive median) say so under their own name.
inline bool usable(const Record& r) { return r.status == Status::ok && r.value && std::isfinite(*r.value); }

// The differences a - b of two records' run medians (each times its scale: seconds to the caller's
// unit), paired by run: one per run both measured ok, in run order. A change of the machine's speed
// between runs moves both sides of a pair alike, which the difference of the two records' medians
// over all runs does not cancel (an A/B saving, or a habit's cost against its clean step, read these).
std::vector<double> paired_run_differences(const Record& a, double scale_a, const Record& b, double scale_b);

// The paired estimate of a - b, each side's seconds per repetition times its scale (seconds to the
// caller's unit), from the rounds in which the harness measured them as a pair (either record may
// hold them): the median of the per-round differences with its ~95% interval (order statistics), and
// the median per-round ratio a / b with its interval. Empty when the two were not measured as a pair.
// `interval` is empty below 6 rounds: the difference is then not estimable, never "± 0".
struct PairedEstimate {
  int rounds = 0;
  double difference = 0;                  // median of (a * scale_a - b * scale_b) over the rounds
  std::optional<MedianInterval> interval;  // of the difference
  double ratio = 0;                       // median of (a * scale_a) / (b * scale_b)
  std::optional<MedianInterval> ratio_interval;
};
std::optional<PairedEstimate> paired_estimate(const Record& a, double scale_a, const Record& b, double scale_b);

// The ratio of two records' values, a's over b's (a speed-up where the metric is a rate), read from
// their paired rounds where the harness measured them as a pair: the median per-round ratio of the
// seconds (b's over a's for rates, whose values go as work / seconds; a's over b's for times), times
// the ratio of their work per repetition for rates; otherwise the ratio of the two values. `rounds`:
// how many paired rounds it came from (0: measured apart); `interval` the paired ratio's ~95% interval
// where estimable. Empty where either record has no usable value or the metrics' kinds differ.
struct ValueRatio {
  double ratio = 0;
  int rounds = 0;
  std::optional<MedianInterval> interval;
};
std::optional<ValueRatio> value_ratio(const Record& a, const Record& b);

// The record's samples grouped as measured (one group when sample_groups is empty).
std::vector<std::vector<double>> sample_groups_of(const Record& r);
// The ~95% noise of the record's median, relative to it (median_noise_relative_halfwidth over its
// groups); infinity when there are too few samples to say.
double median_noise(const Record& r);
// The groups of a record that joins `more` samples measured apart to `r`'s (a repetition, a run).
void add_sample_group(Record& r, const std::vector<double>& more, const std::vector<std::int64_t>& more_groups = {});

// Counters of one record measured several times (the runs of `gtb run --runs K`, the repetitions of
// one run): `into` keeps its counters, each that every one of `each` reports in the same unit taking
// the median of their values, never one run's figure alone.
void median_counters(std::map<std::string, Counter>& into, const std::vector<std::map<std::string, Counter>>& each);

json to_json(const Record& r);
Record record_from_json(const json& j);  // throws std::runtime_error with a clear message

// Builds the record id from its parts; params and options in declaration order.
std::string make_record_id(const std::string& family, const std::string& workload, const std::string& variant,
                           Backend backend, const json& params, const json& options);

}  // namespace gtb
