// The public API a benchmark family uses: declare workloads and axes, verify, then hand the work to time to the harness.
// include/gtb/ is the families' front door: bench/ includes these headers and nothing else of harness/
// (tests/tools/check_front_door.py); harness/runtime/ implements them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/document/findings.h"
#include "harness/runtime/entry.h"
#include "gtb/host_timing.h"
#include "harness/document/stats.h"
#include "harness/runtime/stopping.h"
#include "harness/document/types.h"
#include "kernels/common/errors.h"  // gtb::Skip, gtb::OutOfMemory

namespace gtb {

using AxisValue = std::variant<std::int64_t, double, std::string>;

// One axis of a workload: a name and its values, or a zip: several names whose values vary
// together, one tuple per point (a GEMM shape (m, n, k)). Single axes are one-name zips.
struct Axis {
  std::vector<std::string> names;
  bool is_option = false;  // options describe the variant (memory kind, precision); params the problem
  std::vector<std::vector<AxisValue>> full;   // one tuple of names.size() values per point
  std::vector<std::vector<AxisValue>> quick;  // empty: same as full
  const std::vector<std::vector<AxisValue>>& values(Suite s) const {
    return s == Suite::quick && !quick.empty() ? quick : full;
  }
};

class State;
namespace detail {
// State's measurement path, for the harness's own exec forms outside this header (cuda_timing.h).
const SampleSet& sample(State& st, Clock clock, const Sampler& sampler);
struct RoundSlot;  // a case measured in rounds with others (registry.cpp)
}  // namespace detail
using CaseFn = std::function<void(State&)>;
// Returns false to drop a combination of axis values (e.g. D2H with write-combined memory).
using FilterFn = std::function<bool(const json& params, const json& options)>;
// The same for a combination that one suite keeps and another drops.
using SuiteFilterFn = std::function<bool(const json& params, const json& options, Suite suite)>;

// Declares one workload variant on one backend. Axes multiply into cases; each case becomes one
// record and one Google Benchmark entry.
class Bench {
 public:
  Bench(std::string family, std::string workload, std::string variant, Backend backend, CaseFn fn);

  Bench& axis(const std::string& name, std::vector<std::int64_t> full, std::vector<std::int64_t> quick = {});
  Bench& axis(const std::string& name, std::vector<double> full, std::vector<double> quick = {});
  Bench& axis(const std::string& name, std::vector<std::string> full, std::vector<std::string> quick = {});
  Bench& option(const std::string& name, std::vector<std::int64_t> full, std::vector<std::int64_t> quick = {});
  Bench& option(const std::string& name, std::vector<std::string> full, std::vector<std::string> quick = {});
  // Several params that vary together: one axis of tuples, e.g.
  //   .zip({"m", "n", "k"}, {{256, 256, 256}, {2048, 4096, 1024}}, {{256, 256, 256}})
  // Each case gets every name as a param, in the order given; ids read as if they were axes.
  Bench& zip(std::vector<std::string> names, std::vector<std::vector<std::int64_t>> full,
             std::vector<std::vector<std::int64_t>> quick = {});
  Bench& filter(FilterFn fn);
  Bench& filter(SuiteFilterFn fn);
  // Primary metric: value = work per repetition / median seconds per repetition / scale.
  Bench& rate(std::string metric, std::string unit, double scale);
  // Primary metric: value = median seconds per repetition / scale (lower is better).
  Bench& time(std::string metric, std::string unit, double scale);
  // Name of a measured ceiling in the results context (e.g. "device_copy_gbps"); the driver adds
  // percent of that ceiling to GB/s records.
  Bench& ceiling(std::string name);
  Bench& describe(std::string text);
  // Changes to the suites' default stopping rules (suite_rule()): in every suite, or in one.
  // Later changes win field by field.
  Bench& rule(const RuleChange& every_suite);
  Bench& rule(Suite suite, const RuleChange& change);
  Bench& only(Suite suite);  // in this suite only (default: every suite)

  // Introspection (used by the harness).
  const std::string& family() const { return family_; }
  const std::string& workload() const { return workload_; }
  const std::string& variant() const { return variant_; }
  Backend backend() const { return backend_; }
  const std::vector<Axis>& axes() const { return axes_; }
  const CaseFn& fn() const { return fn_; }
  bool keeps(const json& params, const json& options, Suite suite) const;
  const MetricSpec& metric() const { return metric_; }
  const std::string& ceiling_name() const { return ceiling_; }
  const std::string& description() const { return description_; }
  StopRule rule_for(Suite s) const;  // the suite's default with this registration's changes
  bool in_suite(Suite s) const;

 private:
  Bench& add_axis(std::vector<std::string> names, bool is_option, std::vector<std::vector<AxisValue>> full,
                  std::vector<std::vector<AxisValue>> quick);
  template <class T>
  Bench& add_single(const std::string& name, bool is_option, const std::vector<T>& full, const std::vector<T>& quick);
  std::string family_, workload_, variant_;
  Backend backend_;
  CaseFn fn_;
  SuiteFilterFn filter_;
  std::vector<Axis> axes_;
  MetricSpec metric_;
  std::string ceiling_;
  std::string description_;
  struct PerSuite {
    bool included = true;
    RuleChange change;
  };
  std::array<PerSuite, kSuiteNames.size()> suites_;
};

// Registers a workload variant; keep the returned reference in a static to register at start-up:
//   static auto& b = gtb::add("myfam", "copy_h2d", "pinned", gtb::Backend::cuda, run_h2d)
//                        .axis("bytes", {...}).rate("bandwidth", "GB/s", 1e9);
Bench& add(std::string family, std::string workload, std::string variant, Backend backend, CaseFn fn);

// The cases `family` has in `suite`, in run order, as records before they run (id, params, options,
// metric): what --gtb_list counts and a run executes.
std::vector<Record> planned_records(const std::string& family, Suite suite);

// A family's findings, typed from computing to rendering. `compute` derives the family's own result
// (a struct of its bench/<family>/findings.h) from the finished records of this process; `to_json`
// writes that result as findings.<family>.data in the results file; `sections` builds what the
// family concludes, typed for the generic report and plots (harness/document/findings.h), from the
// same records and the same result, never from its JSON. Every results file stores findings.<family>
// in the typed form, with `data` kept inside it. A throwing compute or to_json leaves an "error" in
// `data` and costs the family its sections; a throwing sections costs only the sections. One
// registration per family (a later one replaces it); returns true (for static registration):
//   const bool kFindings = gtb::add_family_findings<myfam::Findings>("myfam", "My family", 40,
//       myfam::compute_findings, myfam::to_json, sections);
template <class T>
using FindingsCompute = std::function<T(const std::vector<Record>& records)>;
template <class T>
using FindingsToJson = std::function<void(const T& found, json& data)>;
template <class T>
using FindingsSections = std::function<void(const std::vector<Record>& records, const T& found, findings::Family& out)>;

namespace detail {
// The registry's type-erased form: computes the result and writes `data` from it, then returns what
// builds the sections from that same result.
using SectionsBuilder = std::function<void(findings::Family& out)>;
using ErasedFindingsFn = std::function<SectionsBuilder(const std::vector<Record>& records, json& data)>;
bool add_erased_findings(std::string family, std::string title, int order, ErasedFindingsFn fn);
}  // namespace detail

template <class T>
bool add_family_findings(std::string family, std::string title, int order, FindingsCompute<T> compute,
                         FindingsToJson<T> to_json, FindingsSections<T> sections) {
  return detail::add_erased_findings(
      std::move(family), std::move(title), order,
      [compute = std::move(compute), to_json = std::move(to_json), sections = std::move(sections)](
          const std::vector<Record>& records, json& data) -> detail::SectionsBuilder {
        auto found = std::make_shared<const T>(compute(records));
        to_json(*found, data);
        return [&records, found, sections](findings::Family& out) { sections(records, *found, out); };
      });
}

// The A/B pairs a family compares, declared before anything runs, so that the harness measures each
// pair as a pair: the cases of a pair (and of pairs that share a case) are set up, checked and warmed
// up each once, then take their samples in alternating rounds within one process, so that both sides
// meet the same moments of the machine (docs/harness.md). The pairs a family's findings publish for
// the savings validation (cost_pairs) are declared already: the harness asks the findings which pairs
// they would publish over the planned records. This adds others (the records a finding compares):
// `fn` gets the planned records of the run (one suite, the selected cases) and returns (a, b) ids.
// Several calls add up; returns true (for static registration). A family of several processes (a
// ProcessGroup) measures its pairs as pairs where its group can agree (ProcessGroup::agree).
using PairsFn = std::function<std::vector<std::pair<std::string, std::string>>(const std::vector<Record>& planned)>;
bool add_pairs(std::string family, PairsFn fn);
// The pairs a run of `family` measures as pairs over these planned records (the findings' and
// add_pairs'), each once, in the records' order; what --gtb_list shows as "pairs".
std::vector<std::pair<std::string, std::string>> declared_pairs(const std::string& family,
                                                                const std::vector<Record>& planned);

// What a family adds to the results context under its own name (context[family], which a merged
// results file keeps), written before the first case: the libraries it found, for example.
bool add_context(std::string family, std::function<void(json& family_context)> fn);  // returns true

// A family that runs as several cooperating processes (MPI ranks) installs these: start() runs
// before the first case, describe() adds to the results context, and only the process whose
// writes_results() is true writes the results file; finish() runs on every exit path after start().
// agree(x) returns the first process's x on every process (a broadcast). With it, every process runs
// the harness's own timing loop: the harness reads its clock through agree, and each sample a case
// takes must be the same on every process (the slowest one's, for example), so that all make the
// same decisions (repetitions, rounds, when to stop) and meet in the same collectives; the declared
// pairs are then measured in rounds as in one process. Without agree, the processes follow one case
// at a time and pairs are measured apart.
struct ProcessGroup {
  std::function<void()> start;
  std::function<void(json& context)> describe;
  std::function<bool()> writes_results;
  std::function<void()> finish;
  std::function<double(double)> agree;
};
bool set_process_group(std::string family, ProcessGroup group);  // returns true (for static registration)

// Bad input a family can only see at run time (a program it runs, named by an environment variable):
// the check returns "" when the input is usable, else the message. `--gtb_precheck` runs it and
// exits 2 with the message on stdout (0 without one, or without a check), and a run exits 2 with it
// before any case. `gtb run` asks every selected family that declares PRECHECK in its
// gtb_add_family before anything runs, and exits 2 on one that rejects its input, writing nothing.
using PrecheckFn = std::function<std::string()>;
bool set_precheck(std::string family, PrecheckFn fn);  // returns true (for static registration)

// What a case function gets: its parameters, the suite, and the verify → measure protocol.
class State {
 public:
  State(Record& record, Suite suite, StopRule rule);

  const json& params() const;
  const json& options() const;
  // Looks the name up in params, then options; throws std::invalid_argument if absent/wrong type.
  std::int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const;
  std::string get_string(const std::string& name) const;
  // An integer parameter or option bounded to [min, INT_MAX]; otherwise std::invalid_argument
  // "<family>: <name> must be >= <min>".
  int get_int(const std::string& name, int min) const;
  bool has(const std::string& name) const;  // a parameter or option of this case
  Suite suite() const { return suite_; }
  bool quick() const { return suite_ == Suite::quick; }
  const StopRule& rule() const { return rule_; }

  // Work done by one repetition, in the unit the metric's rate counts (bytes, FLOPs, samples).
  void set_work(double amount_per_rep);
  // The verification outcome. Must come before any exec: a failed check makes the record
  // `invalid` and every exec then refuses to time it.
  void check(bool passed, const std::string& detail, json data = json::object());
  bool check_passed() const;

  // Timing. The case hands over the work of one repetition; the harness runs everything else:
  // calibration (repetitions per sample until one lasts min_sample_seconds), warm-up, and samples
  // until the stopping rule says stop. Each exec refuses to run before check() (std::logic_error)
  // and after a failed check (the record stays invalid), and returns the kept samples.
  //
  // Host wall clock: fn() runs `reps` times back to back inside each sample's timed span. A
  // template, so that a short operation pays no indirect call per repetition.
  template <class Fn>
  const SampleSet& exec(Fn&& fn) {
    return sample(Clock::host_wall, [&](std::int64_t reps) { return batch_seconds(reps, fn); });
  }
  // As above, with finish() once after the repetitions, inside the span (a stream synchronize: the
  // sample ends when the queued work has drained). finish() also runs once untimed before the span,
  // so that each sample starts from a drained queue.
  template <class Fn, class Finish>
  const SampleSet& exec(Fn&& fn, Finish&& finish) {
    return sample(Clock::host_wall, [&](std::int64_t reps) { return batch_seconds(reps, fn, finish); });
  }
  // CUDA events on a stream: gtb::cuda::exec(), exec_each() and exec_cold_l2() (cuda_timing.h).
  //
  // The exception, for work that repeats itself and can only be timed as a whole batch: a kernel
  // whose own loop runs the repetitions, MPI ranks that must run the same repetitions in lockstep.
  // body(reps) does the work of `reps` repetitions and returns their seconds on `clock`, read only
  // with the harness's helpers (batch_seconds(), cuda::TimedRegion), never with a clock of its own.
  // The harness still chooses `reps`, warms up and samples.
  const SampleSet& exec_batch_self_timed(Clock clock, const Sampler& body);

  // A short pre-measurement for a choice the case makes before it is measured (which library runs
  // a step fastest), or a figure beside the record (host enqueue time): host wall seconds per call
  // of fn(), the median over how.samples samples. The caller verifies fn's output first; the record
  // is left as it was. finish(), when given, runs as in exec(fn, finish).
  double probe(const std::function<void()>& fn, const ProbeRule& how = {});
  double probe(const std::function<void()>& fn, const std::function<void()>& finish, const ProbeRule& how = {});

  // Additional figures of this record (e.g. overlap fraction, chosen algorithm).
  void counter(const std::string& name, double value, const std::string& unit);
  void info(const std::string& name, json value);

  Record& record() { return record_; }

 private:
  friend const SampleSet& detail::sample(State& st, Clock clock, const Sampler& sampler);
  friend void detail_attach_rounds(State& st, detail::RoundSlot* slot);
  // The one measurement path of every exec: checks the protocol, runs run_samples() (or, for a side of
  // a declared pair, its samples in the pair's rounds) and fills the record.
  const SampleSet& sample(Clock clock, const Sampler& sampler);
  Record& record_;
  Suite suite_;
  StopRule rule_;
  bool checked_ = false;
  detail::RoundSlot* rounds_ = nullptr;  // set when the case is a side of a pair measured in rounds
};

// Runs the current case again in a fresh process of this binary (only this case, same suite and
// sampling budget) with its environment changed, and makes that process's record this case's
// record. For settings a library reads once, when it loads (OPENBLAS_CORETYPE). `unset` lists
// variables to remove, `set` holds NAME=VALUE entries. Throws std::runtime_error when the child
// fails or writes no record for the case.
void run_case_in_child(State& st, const std::vector<std::string>& unset, const std::vector<std::string>& set);


}  // namespace gtb
