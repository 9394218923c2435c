// Workload registration, the verify → measure protocol, and the shared family main().
#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>

#include "gtb/context.h"
#include "harness/runtime/device_timing.h"
#include "harness/runtime/fiber.h"
#include "gtb/gpu.h"
#include "gtb/gtb.h"
#include "gtb/publish.h"
#include "harness/runtime/startup.h"
#include "kernels/common/denormals.h"
#include "harness/document/results.h"
#include "harness/model/savings.h"

namespace gtb {

namespace {

struct Registry {
  std::vector<std::unique_ptr<Bench>> benches;
  struct Findings {
    std::string title;
    int order;
    detail::ErasedFindingsFn fn;
  };
  std::map<std::string, Findings> findings;
  std::map<std::string, ProcessGroup> groups;
  std::map<std::string, PrecheckFn> prechecks;
  std::map<std::string, std::vector<PairsFn>> pairs;
  std::map<std::string, std::vector<std::function<void(json&)>>> contexts;
};
Registry& registry() {
  static Registry r;
  return r;
}

template <class T>
std::vector<std::vector<AxisValue>> to_tuples(const std::vector<std::vector<T>>& v) {
  std::vector<std::vector<AxisValue>> out;
  out.reserve(v.size());
  for (const auto& t : v) out.emplace_back(t.begin(), t.end());
  return out;
}

json value_json(const AxisValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::size_t suite_index(Suite s) { return static_cast<std::size_t>(s); }

}  // namespace

Bench::Bench(std::string family, std::string workload, std::string variant, Backend backend, CaseFn fn)
    : family_(std::move(family)),
      workload_(std::move(workload)),
      variant_(std::move(variant)),
      backend_(backend),
      fn_(std::move(fn)) {}

Bench& Bench::add_axis(std::vector<std::string> names, bool is_option, std::vector<std::vector<AxisValue>> full,
                       std::vector<std::vector<AxisValue>> quick) {
  const std::string label = joined(names);
  if (names.empty()) throw std::invalid_argument("an axis of " + workload_ + " has no name");
  if (full.empty()) throw std::invalid_argument("axis '" + label + "' of " + workload_ + " has no values");
  for (const auto* list : {&full, &quick})
    for (const auto& t : *list)
      if (t.size() != names.size())
        throw std::invalid_argument("axis '" + label + "' of " + workload_ + ": a point has " +
                                    std::to_string(t.size()) + " values for " + std::to_string(names.size()) + " names");
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool taken = std::find(names.begin(), names.begin() + std::ptrdiff_t(i), names[i]) != names.begin() + std::ptrdiff_t(i);
    for (const Axis& a : axes_) taken = taken || std::find(a.names.begin(), a.names.end(), names[i]) != a.names.end();
    if (taken) throw std::invalid_argument("axis '" + names[i] + "' declared twice in " + workload_);
  }
  axes_.push_back({std::move(names), is_option, std::move(full), std::move(quick)});
  return *this;
}
template <class T>
Bench& Bench::add_single(const std::string& name, bool is_option, const std::vector<T>& full,
                         const std::vector<T>& quick) {
  auto tuples = [](const std::vector<T>& v) {
    std::vector<std::vector<AxisValue>> out;
    out.reserve(v.size());
    for (const auto& x : v) out.push_back({AxisValue(x)});
    return out;
  };
  return add_axis({name}, is_option, tuples(full), tuples(quick));
}
Bench& Bench::axis(const std::string& n, std::vector<std::int64_t> f, std::vector<std::int64_t> q) {
  return add_single(n, false, f, q);
}
Bench& Bench::axis(const std::string& n, std::vector<double> f, std::vector<double> q) {
  return add_single(n, false, f, q);
}
Bench& Bench::axis(const std::string& n, std::vector<std::string> f, std::vector<std::string> q) {
  return add_single(n, false, f, q);
}
Bench& Bench::option(const std::string& n, std::vector<std::int64_t> f, std::vector<std::int64_t> q) {
  return add_single(n, true, f, q);
}
Bench& Bench::option(const std::string& n, std::vector<std::string> f, std::vector<std::string> q) {
  return add_single(n, true, f, q);
}
Bench& Bench::zip(std::vector<std::string> names, std::vector<std::vector<std::int64_t>> f,
                  std::vector<std::vector<std::int64_t>> q) {
  return add_axis(std::move(names), false, to_tuples(f), to_tuples(q));
}
Bench& Bench::filter(FilterFn fn) {
  filter_ = [plain = std::move(fn)](const json& p, const json& o, Suite) { return plain(p, o); };
  return *this;
}
Bench& Bench::filter(SuiteFilterFn fn) {
  filter_ = std::move(fn);
  return *this;
}
bool Bench::keeps(const json& params, const json& options, Suite suite) const {
  return !filter_ || filter_(params, options, suite);
}
Bench& Bench::rate(std::string metric, std::string unit, double scale) {
  metric_ = {std::move(metric), std::move(unit), scale, MetricKind::rate};
  return *this;
}
Bench& Bench::time(std::string metric, std::string unit, double scale) {
  metric_ = {std::move(metric), std::move(unit), scale, MetricKind::time};
  return *this;
}
Bench& Bench::ceiling(std::string name) {
  ceiling_ = std::move(name);
  return *this;
}
Bench& Bench::describe(std::string text) {
  description_ = std::move(text);
  return *this;
}
Bench& Bench::rule(const RuleChange& every_suite) {
  for (PerSuite& p : suites_) p.change.then(every_suite);
  return *this;
}
Bench& Bench::rule(Suite suite, const RuleChange& change) {
  suites_.at(suite_index(suite)).change.then(change);
  return *this;
}
Bench& Bench::only(Suite suite) {
  for (std::size_t i = 0; i < suites_.size(); ++i) suites_[i].included = i == suite_index(suite);
  return *this;
}
StopRule Bench::rule_for(Suite s) const { return suites_.at(suite_index(s)).change.applied_to(suite_rule(s)); }
bool Bench::in_suite(Suite s) const { return suites_.at(suite_index(s)).included; }

Bench& add(std::string family, std::string workload, std::string variant, Backend backend, CaseFn fn) {
  registry().benches.push_back(
      std::make_unique<Bench>(std::move(family), std::move(workload), std::move(variant), backend, std::move(fn)));
  return *registry().benches.back();
}

bool detail::add_erased_findings(std::string family, std::string title, int order, ErasedFindingsFn fn) {
  registry().findings[std::move(family)] = {std::move(title), order, std::move(fn)};
  return true;
}

// The family's findings in their typed form: the family's result becomes `data`, and the sections
// are built from that same result. A throwing computation costs the family its sections, never the
// results file.
static json family_findings(const std::string& family, const std::vector<Record>& records) {
  const auto it = registry().findings.find(family);
  if (it == registry().findings.end()) return json();
  findings::Family f;
  f.title = it->second.title;
  f.order = it->second.order;
  json data = json::object();
  auto error_section = [&f](const std::exception& e) {
    f.sections.clear();
    auto& s = f.section("error", "Findings");
    s.not_measured = std::string("the findings could not be computed: ") + e.what();
  };
  detail::SectionsBuilder sections;
  try {
    sections = it->second.fn(records, data);
  } catch (const std::exception& e) {
    data["error"] = std::string("findings could not be computed: ") + e.what();
    error_section(e);
  }
  if (sections) {
    try {
      sections(f);
    } catch (const std::exception& e) {
      error_section(e);
    }
  }
  // Cost terms and measured steps sit beside the sections, not inside the family's own numbers.
  json lifted = json::object();
  // (A family's own numbers may already hold a "steps" list: the producer writes cost_terms,
  // cost_steps and cost_pairs, published as terms, steps and pairs.)
  for (const auto& [from, to] :
       {std::pair{"cost_terms", "terms"}, std::pair{"cost_steps", "steps"}, std::pair{"cost_pairs", "pairs"}})
    if (data.contains(from)) {
      lifted[to] = std::move(data[from]);
      data.erase(from);
    }
  f.data = data;
  if (data.empty() && f.sections.empty() && lifted.empty()) return json();
  json out = findings::to_json(f);
  for (auto& [key, value] : lifted.items()) out[key] = std::move(value);
  return out;
}

bool set_precheck(std::string family, PrecheckFn fn) {
  registry().prechecks[std::move(family)] = std::move(fn);
  return true;
}

bool set_process_group(std::string family, ProcessGroup group) {
  registry().groups[std::move(family)] = std::move(group);
  return true;
}

bool add_context(std::string family, std::function<void(json& family_context)> fn) {
  registry().contexts[std::move(family)].push_back(std::move(fn));
  return true;
}

bool add_pairs(std::string family, PairsFn fn) {
  registry().pairs[std::move(family)].push_back(std::move(fn));
  return true;
}

std::vector<std::pair<std::string, std::string>> declared_pairs(const std::string& family,
                                                                const std::vector<Record>& planned) {
  std::vector<std::pair<std::string, std::string>> found;
  // The findings' pairs: what they would publish (cost_pairs) over these records, every one measured
  // alike (a millisecond a repetition; a pair depends on the records' configurations only).
  if (const auto it = registry().findings.find(family); it != registry().findings.end()) {
    std::vector<Record> stand_ins = planned;
    for (Record& r : stand_ins) {
      r.status = Status::ok;
      r.samples = {1e-3};
      r.stats = compute_stats(r.samples);
      if (r.metric.kind == MetricKind::rate) r.work_per_rep = 1;
      r.value = r.metric_of_seconds(1e-3);
    }
    try {
      json data = json::object();
      it->second.fn(stand_ins, data);
      if (data.contains("cost_pairs") && data.at("cost_pairs").is_array())
        for (const json& jp : data.at("cost_pairs")) {
          const cost::Pair p = cost::pair_from_json(jp, family);
          found.emplace_back(p.a, p.b);
        }
    } catch (const std::exception&) {
      // Findings that cannot run over stand-ins declare no pairs this way (their records are measured apart).
    }
  }
  if (const auto it = registry().pairs.find(family); it != registry().pairs.end())
    for (const PairsFn& fn : it->second) {
      auto more = fn(planned);
      found.insert(found.end(), more.begin(), more.end());
    }
  // Each pair once (either order), both of its records planned, in the records' order.
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < planned.size(); ++i) at.emplace(planned[i].id, i);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [a, b] : found) {
    if (a == b || !at.count(a) || !at.count(b)) continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& q) {
      return (q.first == a && q.second == b) || (q.first == b && q.second == a);
    });
    if (!seen) out.emplace_back(a, b);
  }
  std::stable_sort(out.begin(), out.end(), [&](const auto& x, const auto& y) {
    return std::pair{at[x.first], at[x.second]} < std::pair{at[y.first], at[y.second]};
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// State

State::State(Record& record, Suite suite, StopRule rule) : record_(record), suite_(suite), rule_(rule) {}

const json& State::params() const { return record_.params; }
const json& State::options() const { return record_.options; }

namespace {
const json& lookup(const Record& r, const std::string& name) {
  if (r.params.contains(name)) return r.params.at(name);
  if (r.options.contains(name)) return r.options.at(name);
  throw std::invalid_argument("case " + r.id + " has no parameter '" + name + "'");
}
}  // namespace

std::int64_t State::get_int(const std::string& name) const {
  const json& v = lookup(record_, name);
  if (!v.is_number_integer()) throw std::invalid_argument("parameter '" + name + "' is not an integer");
  return v.get<std::int64_t>();
}
int State::get_int(const std::string& name, int min) const {
  const std::int64_t v = get_int(name);
  if (v < min || v > INT_MAX)
    throw std::invalid_argument(record_.family + ": " + name + " must be >= " + std::to_string(min));
  return static_cast<int>(v);
}
bool State::has(const std::string& name) const { return params().contains(name) || options().contains(name); }
double State::get_double(const std::string& name) const {
  const json& v = lookup(record_, name);
  if (!v.is_number()) throw std::invalid_argument("parameter '" + name + "' is not a number");
  return v.get<double>();
}
std::string State::get_string(const std::string& name) const {
  const json& v = lookup(record_, name);
  if (!v.is_string()) throw std::invalid_argument("parameter '" + name + "' is not a string");
  return v.get<std::string>();
}

void State::set_work(double amount) {
  if (!(amount > 0) || !std::isfinite(amount)) throw std::invalid_argument("set_work: work must be positive and finite");
  record_.work_per_rep = amount;
}

void State::check(bool passed, const std::string& detail, json data) {
  checked_ = true;
  json c = data.is_object() ? std::move(data) : json::object();
  c["passed"] = passed;
  c["detail"] = detail;
  record_.check = c;
  if (!passed) {
    record_.status = Status::invalid;
    record_.status_detail = detail.empty() ? "output check failed" : detail;
  }
}
bool State::check_passed() const { return checked_ && record_.status != Status::invalid; }

namespace {
// The clock the harness's decisions read: the host's, or, in a process group that agrees, the first
// process's (ProcessGroup::agree), so that every process decides the same.
std::function<double()>& decision_clock() {
  static std::function<double()> clock = host_seconds;
  return clock;
}
double decision_seconds() { return decision_clock()(); }

struct RefusedAfterFailedCheck : std::logic_error {
  using std::logic_error::logic_error;
};
}  // namespace

// A side of a group of cases measured in rounds (the declared pairs): its case runs in a fiber; its
// first exec calibrates and warms up, then parks, and takes one sample each time the harness resumes
// it with `sample`, until `finish`.
struct detail::RoundSlot {
  enum class Say { sample, finish };
  Say say = Say::sample;
  bool ready = false;           // its exec has calibrated and warmed up, and waits for rounds
  bool used = false;            // its first exec went into the rounds (a later one runs alone)
  StopRule rule;
  bool settle = true;           // an untimed sample before each timed one (sample_in_rounds)
  std::vector<double> samples;  // seconds per repetition, one a round
  std::string stop_reason;      // the rounds' (rounds_stop_decision)
};
void detail_attach_rounds(State& st, detail::RoundSlot* slot) { st.rounds_ = slot; }

namespace {
// The rounds of one side (see detail::RoundSlot): the device-timing log of this side travels with it
// while other sides run, so that its summary reads only its own samples.
// Each timed sample of a short side follows untimed ones of the same side, kRoundSettleSeconds of them
// (kRoundSettleMaxSeconds): the side is then measured after itself, as alone, and not after what the
// other side left behind.
SampleSet sample_in_rounds(detail::RoundSlot& slot, const StopRule& rule, const Sampler& sampler,
                           const Sampler& untimed) {
  DeviceTimingLog& dlog = device_timing_log();
  SampleSet out = calibrate_and_warm_up(rule, sampler, decision_clock());
  const std::int64_t reps = out.reps_per_sample;
  slot.rule = rule;
  slot.ready = true;
  DeviceTimingLog parked;
  while (true) {
    std::swap(parked, dlog);
    Fiber::yield();
    std::swap(parked, dlog);
    if (slot.say == detail::RoundSlot::Say::finish) break;
    if (slot.settle) {
      DeviceTimingLog scratch;  // the settling sample is no sample of the record's
      std::swap(scratch, dlog);
      const double t0 = decision_seconds();
      untimed(reps);
      // Decided on the first round: a side whose sample takes longer does not settle.
      if (slot.samples.empty()) slot.settle = decision_seconds() - t0 <= kRoundSettleMaxSeconds;
      // The side comes back to its own speed over a time, not over one sample (kRoundSettleSeconds).
      while (slot.settle && decision_seconds() - t0 < kRoundSettleSeconds) untimed(reps);
      std::swap(scratch, dlog);
    }
    const double t = sampler(reps);
    if (!std::isfinite(t) || t < 0) throw std::runtime_error("sampler returned a non-finite or negative time");
    slot.samples.push_back(t / double(reps));
  }
  if (slot.samples.empty()) return run_samples(rule, sampler, decision_clock());  // no round was run: alone, as usual
  out.seconds_per_rep = slot.samples;
  out.stop_reason = slot.stop_reason;
  out.stats = compute_stats(out.seconds_per_rep);
  return out;
}
}  // namespace

const SampleSet& State::sample(Clock clock, const Sampler& sampler) {
  if (!checked_) throw std::logic_error("exec called before check(): every measurement is verified first");
  if (record_.status == Status::invalid) throw RefusedAfterFailedCheck("the output check failed; not timed");
  if (record_.metric.kind == MetricKind::rate && !(record_.work_per_rep > 0))
    throw std::logic_error("rate metric without set_work()");
  thread_local SampleSet last;
  DeviceTimingLog& dlog = device_timing_log();
  dlog.clear();
  // Device-clock samples also get the host wall time around them: an event time longer than that
  // means the events timed something else (flagged suspect when the results are assembled).
  std::vector<double> host_per_rep;
  Sampler timed = sampler;
  if (clock == Clock::cuda_event)
    timed = [&](std::int64_t reps) {
      const double t0 = host_seconds();
      const double s = sampler(reps);
      host_per_rep.push_back((host_seconds() - t0) / double(std::max<std::int64_t>(1, reps)));
      return s;
    };
  if (rounds_ && !rounds_->used && Fiber::current()) {
    rounds_->used = true;
    last = sample_in_rounds(*rounds_, rule_, timed, sampler);
    if (!rounds_->samples.empty()) record_.info["rounds_settled"] = rounds_->settle;
  } else {
    last = run_samples(rule_, timed, decision_clock());
  }
  if (clock == Clock::cuda_event && host_per_rep.size() >= last.seconds_per_rep.size() && !last.seconds_per_rep.empty()) {
    const std::vector<double> kept(host_per_rep.end() - std::ptrdiff_t(last.seconds_per_rep.size()), host_per_rep.end());
    record_.info["host_wall_seconds_per_rep"] = compute_stats(kept).median;
  }
  record_.clock = clock;
  if (clock == Clock::cuda_event)
    record_.device_timing = dlog.empty() ? device_timing_unlogged() : dlog.summary(last.seconds_per_rep.size());
  record_.samples.insert(record_.samples.end(), last.seconds_per_rep.begin(), last.seconds_per_rep.end());
  record_.stats = compute_stats(record_.samples);
  record_.reps_per_sample = last.reps_per_sample;
  record_.warmup_samples = last.warmup_samples;
  record_.stop_reason = last.stop_reason;
  record_.value = record_.metric_of_seconds(record_.stats->median);
  record_.status = Status::ok;
  return last;
}

const SampleSet& State::exec_batch_self_timed(Clock clock, const Sampler& body) { return sample(clock, body); }

const SampleSet& detail::sample(State& st, Clock clock, const Sampler& sampler) { return st.sample(clock, sampler); }

double State::probe(const std::function<void()>& fn, const ProbeRule& how) { return probe(fn, nullptr, how); }

double State::probe(const std::function<void()>& fn, const std::function<void()>& finish, const ProbeRule& how) {
  if (how.samples < 1 || !(how.min_sample_seconds > 0) || how.reps < 0) throw std::invalid_argument("invalid probe rule");
  auto take = [&](std::int64_t reps) { return finish ? batch_seconds(reps, fn, finish) : batch_seconds(reps, fn); };
  std::int64_t reps = how.reps;
  if (reps == 0) {  // one untimed call, one timed, then enough calls for a sample of min_sample_seconds
    fn();
    if (finish) finish();
    const double one = std::max(take(1), 1e-6);
    reps = std::max<std::int64_t>(1, static_cast<std::int64_t>(how.min_sample_seconds / one));
  }
  std::vector<double> per_call;
  for (int i = 0; i < how.samples; ++i) per_call.push_back(take(reps) / double(reps));
  return median(per_call);
}

void State::counter(const std::string& name, double value, const std::string& unit) {
  if (!std::isfinite(value)) {
    record_.info["dropped_counters"].push_back(name + " (non-finite)");
    return;
  }
  record_.counters[name] = {value, unit};
}
void State::info(const std::string& name, json value) { record_.info[name] = std::move(value); }

// ---------------------------------------------------------------------------------------------
// Cases and the family main

namespace {

struct Case {
  const Bench* bench = nullptr;
  json params, options;
  std::string id;
};

std::vector<Case> expand(const std::string& family, Suite suite) {
  std::vector<Case> out;
  for (const auto& b : registry().benches) {
    if (b->family() != family || !b->in_suite(suite)) continue;
    std::vector<const std::vector<std::vector<AxisValue>>*> lists;
    for (const Axis& a : b->axes()) lists.push_back(&a.values(suite));
    std::vector<std::size_t> idx(lists.size(), 0);
    while (true) {
      Case c;
      c.bench = b.get();
      c.params = json::object();
      c.options = json::object();
      for (std::size_t i = 0; i < lists.size(); ++i) {
        const Axis& a = b->axes()[i];
        const std::vector<AxisValue>& point = (*lists[i])[idx[i]];
        for (std::size_t j = 0; j < a.names.size(); ++j)
          (a.is_option ? c.options : c.params)[a.names[j]] = value_json(point[j]);
      }
      if (b->keeps(c.params, c.options, suite)) {
        c.id = make_record_id(b->family(), b->workload(), b->variant(), b->backend(), c.params, c.options);
        out.push_back(std::move(c));
      }
      std::size_t k = 0;
      for (; k < idx.size(); ++k) {
        if (++idx[k] < lists[k]->size()) break;
        idx[k] = 0;
      }
      if (k == idx.size()) break;
    }
  }
  return out;
}

// What the repetitions of one case measured (Google Benchmark's --benchmark_repetitions; gtb run
// --repetitions): each ok repetition's kept samples and counters.
struct Repeats {
  std::vector<std::vector<double>> samples;
  std::vector<std::map<std::string, Counter>> counters;
};

struct RunState {
  Suite suite = Suite::quick;
  double budget_override = 0;
  std::map<std::string, std::size_t> index;  // record id -> position in records
  std::vector<Record> records;
  std::map<std::string, Repeats> repeats;    // record id -> its ok repetitions
  std::optional<std::string> sticky_cuda_error;
  bool pairs = true;                         // --gtb_pairs: declared pairs measured as pairs
  // Cases measured together in rounds: the declared pairs joined where they share a case.
  struct Group {
    std::vector<const Case*> cases;            // in run order
    std::vector<std::pair<int, int>> pairs;    // indices into cases: (a, b)
    int runs = 0;                              // how often the group has been measured
    std::map<std::string, int> reported;       // case id -> how often its entry has reported
  };
  std::vector<Group> groups;
  std::map<std::string, std::size_t> group_of;  // case id -> its group
};

Record base_record(const Case& c) {
  Record r;
  r.id = c.id;
  r.family = c.bench->family();
  r.workload = c.bench->workload();
  r.variant = c.bench->variant();
  r.backend = c.bench->backend();
  r.params = c.params;
  r.options = c.options;
  r.metric = c.bench->metric();
  r.ceiling = c.bench->ceiling_name();
  if (!c.bench->description().empty()) r.info["description"] = c.bench->description();
  return r;
}

// A family stopped at its time limit leaves no results file; this line is how gtb run can still say
// which case it was in. Ranks of one family write the same id, so overwriting in place is enough.
void note_case_started(const std::string& id) {
  static const char* path = std::getenv("GTB_CASE_FILE");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%s\n", id.c_str());
    std::fclose(f);
  }
}

void run_case(RunState& rs, const Case& c, Record& r, detail::RoundSlot* rounds = nullptr) {
  if (r.backend == Backend::cuda) {
    if (auto why = gpu::unavailable_reason()) {
      r.status = Status::skipped;
      r.status_detail = "no usable GPU: " + *why;
      return;
    }
    if (rs.sticky_cuda_error) {
      r.status = Status::failed;
      r.status_detail = "CUDA context unusable after an earlier error: " + *rs.sticky_cuda_error;
      return;
    }
  }
  StopRule rule = c.bench->rule_for(rs.suite);
  if (rs.budget_override > 0) rule.budget_seconds = rs.budget_override;
  State st(r, rs.suite, rule);
  detail_attach_rounds(st, rounds);
  bool errored = true;
  try {
    c.bench->fn()(st);
    errored = false;
    if (r.status == Status::ok && !r.stats) {
      r.status = Status::failed;
      r.status_detail = st.check_passed() ? "the case verified its output but measured nothing"
                                          : "the case neither verified nor measured anything";
    }
  } catch (const RefusedAfterFailedCheck&) {
    // stays invalid
  } catch (const Skip& e) {
    r.status = Status::skipped;
    r.status_detail = e.what();
  } catch (const OutOfMemory& e) {
    r.status = Status::skipped;
    r.status_detail = std::string("out of memory: ") + e.what();
  } catch (const std::bad_alloc&) {
    r.status = Status::skipped;
    r.status_detail = "out of memory: a host allocation failed";
  } catch (const std::exception& e) {
    if (r.status != Status::invalid) {
      r.status = Status::failed;
      r.status_detail = e.what();
    }
  }
  if (r.status != Status::ok) {
    r.value.reset();
    if (r.status != Status::invalid) {
      r.stats.reset();
      r.samples.clear();
      r.sample_groups.clear();
    }
  }
  if (errored && r.backend == Backend::cuda) {
    if (auto sticky = gpu::reset_after_error()) rs.sticky_cuda_error = sticky;
  }
}

// The cases a run takes (--gtb_backend, --gtb_cases): those of one backend, then a slice of them
// in run order (registration order), so that a check can run a first few of every family's cases
// before the rest.
struct Selection {
  std::optional<Backend> backend;
  std::size_t from = 0, to = std::numeric_limits<std::size_t>::max();
  bool selective() const { return backend || from > 0 || to != std::numeric_limits<std::size_t>::max(); }
};
std::vector<Case> select(std::vector<Case> cases, const Selection& sel) {
  std::vector<Case> out;
  std::size_t i = 0;
  for (Case& c : cases) {
    if (sel.backend && c.bench->backend() != *sel.backend) continue;
    if (i >= sel.from && i < sel.to) out.push_back(std::move(c));
    ++i;
  }
  return out;
}
// "FROM:TO", "FROM:" or ":TO" (0-based, TO excluded); false when malformed or TO < FROM.
bool parse_slice(const std::string& text, Selection& sel) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  auto num = [](const std::string& t, std::size_t& v) {
    if (t.empty()) return true;
    if (t.find_first_not_of("0123456789") != std::string::npos || t.size() > 12) return false;
    v = std::stoull(t);
    return true;
  };
  std::size_t from = 0, to = std::numeric_limits<std::size_t>::max();
  if (!num(text.substr(0, colon), from) || !num(text.substr(colon + 1), to) || to < from) return false;
  sel.from = from, sel.to = to;
  return true;
}

}  // namespace

std::vector<Record> planned_records(const std::string& family, Suite suite) {
  std::vector<Record> out;
  for (const Case& c : expand(family, suite)) out.push_back(base_record(c));
  return out;
}

namespace {

json list_json(const std::string& family, Suite suite, const Selection& sel) {
  json ws = json::array();
  std::map<const Bench*, int> counts;
  for (const Case& c : select(expand(family, suite), sel)) counts[c.bench]++;
  for (const auto& b : registry().benches) {
    if (b->family() != family || !b->in_suite(suite)) continue;
    if (sel.selective() && !counts.count(b.get())) continue;  // none of its cases taken
    json axes = json::array();
    for (const Axis& a : b->axes()) {
      json vals = json::array();
      for (const auto& point : a.values(suite)) {
        json t = json::array();
        for (const auto& v : point) t.push_back(value_json(v));
        vals.push_back(a.names.size() == 1 ? t[0] : t);  // a zip's point lists its names' values
      }
      json axis = {{"name", joined(a.names)}, {"kind", a.is_option ? "option" : "param"}, {"values", vals}};
      if (a.names.size() > 1) axis["names"] = a.names;
      axes.push_back(std::move(axis));
    }
    const StopRule rule = b->rule_for(suite);
    ws.push_back({{"workload", b->workload()},
                  {"variant", b->variant()},
                  {"backend", to_string(b->backend())},
                  {"metric", b->metric().name},
                  {"unit", b->metric().unit},
                  {"axes", axes},
                  {"cases", counts[b.get()]},
                  {"rule", to_json(rule)},
                  {"description", b->description()}});
  }
  std::vector<Record> planned;
  for (const Case& c : select(expand(family, suite), sel)) planned.push_back(base_record(c));
  json pairs = json::array();
  for (const auto& [a, b] : declared_pairs(family, planned)) pairs.push_back({a, b});
  return {{"family", family}, {"suite", to_string(suite)}, {"workloads", ws}, {"pairs", pairs}};
}

std::string precheck_message(const std::string& family) {
  const auto it = registry().prechecks.find(family);
  if (it == registry().prechecks.end() || !it->second) return "";
  try {
    return it->second();
  } catch (const std::exception& e) {
    return e.what();
  }
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  return 2;
}

void print_help(const std::string& family) {
  std::printf("gtb-%s: the %s benchmark family of gtb.\n"
              "gtb flags:\n"
              "  --gtb_out=FILE        write gtb's results JSON to FILE (atomically)\n"
              "  --gtb_suite=quick|full  axis values and stopping budgets (default quick)\n"
              "  --gtb_budget=SECONDS  sampling time budget per record (overrides the suite's)\n"
              "  --gtb_backend=cpu|cuda  only the cases of this backend\n"
              "  --gtb_cases=FROM:TO   only these of the (backend's) cases, in run order (0-based,\n"
              "                        TO excluded; 2: the first two, 2: the rest)\n"
              "  --gtb_pairs=on|off    measure the declared A/B pairs as pairs, in alternating rounds\n"
              "                        (default on; off: every case alone, one after the other)\n"
              "  --gtb_list            print the workloads and axes as JSON and exit\n"
              "  --gtb_precheck        check the input only the run can see (exit 2 with the message)\n"
              "  --gtb_findings_from=FILE  print this family's findings computed from FILE's records\n"
              "                        (a results file of any supported version) as JSON and exit\n"
              "                        (into the --gtb_out file when one is given)\n"
              "Google Benchmark's flags work as usual (--benchmark_filter, --benchmark_format,\n"
              "--benchmark_out, --benchmark_out_format, --benchmark_repetitions, ...).\n",
              family.c_str(), family.c_str());
}

// What family_main's flags ask for; the suite and the budget go straight into the run's state.
struct MainFlags {
  Selection sel;
  std::string out_path, findings_from;
  bool list = false, precheck = false;
  std::vector<char*> rest;  // argv[0] and the flags left for Google Benchmark
};

// Reads the --gtb_ flags. Returns an exit code when main is done (help, a bad flag), -1 otherwise.
int parse_flags(int argc, char** argv, const std::string& family, RunState& rs, MainFlags& f) {
  f.rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const std::string& flag) -> std::optional<std::string> {
      if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
      return std::nullopt;
    };
    if (auto v = val("--gtb_out")) {
      f.out_path = *v;
      if (f.out_path.empty()) return usage_error("--gtb_out needs a file path");
    } else if (auto s = val("--gtb_suite")) {
      try {
        rs.suite = suite_from_string(*s);
      } catch (const std::invalid_argument& e) {
        return usage_error(std::string("--gtb_suite: ") + e.what());
      }
    } else if (auto b = val("--gtb_budget")) {
      char* end = nullptr;
      const double x = std::strtod(b->c_str(), &end);
      if (b->empty() || *end != '\0' || !(x > 0) || !std::isfinite(x))
        return usage_error("--gtb_budget must be a positive number of seconds, not '" + *b + "'");
      rs.budget_override = x;
    } else if (auto be = val("--gtb_backend")) {
      try {
        f.sel.backend = backend_from_string(*be);
      } catch (const std::invalid_argument& e) {
        return usage_error(std::string("--gtb_backend: ") + e.what());
      }
    } else if (auto sl = val("--gtb_cases")) {
      if (!parse_slice(*sl, f.sel))
        return usage_error("--gtb_cases is FROM:TO (0-based, TO excluded; either may be left out), not '" + *sl + "'");
    } else if (auto pr = val("--gtb_pairs")) {
      if (*pr != "on" && *pr != "off") return usage_error("--gtb_pairs is on or off, not '" + *pr + "'");
      rs.pairs = *pr == "on";
    } else if (a == "--gtb_list") {
      f.list = true;
    } else if (a == "--gtb_precheck") {
      f.precheck = true;
    } else if (auto ff = val("--gtb_findings_from")) {
      f.findings_from = *ff;
      if (f.findings_from.empty()) return usage_error("--gtb_findings_from needs a results file");
    } else if (a == "--help" || a == "-h") {
      print_help(family);
      return 0;
    } else if (a.rfind("--gtb_", 0) == 0) {
      return usage_error("unknown flag '" + a + "' (see --help)");
    } else {
      f.rest.push_back(argv[i]);
    }
  }
  return -1;
}

// --gtb_findings_from: the family's findings from a results file's records, on stdout or into a file.
int print_findings_from(const std::string& family, const std::string& from, const std::string& out_path) {
  try {
    std::vector<Record> mine;
    for (Record& r : records_of(load_document(from)))
      if (r.family == family) mine.push_back(std::move(r));
    const json f = family_findings(family, mine);
    const std::string text = (f.is_null() ? json::object() : f).dump(1) + "\n";
    if (out_path.empty())
      std::cout << text;
    else  // the driver's way: stdout may carry a library's messages
      write_file_atomic(out_path, text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: --gtb_findings_from: %s\n", e.what());
    return 2;
  }
  return 0;
}

// A repetition's fresh record joins the record of the case's first run (its kept samples and
// counters are those of the ok repetitions so far, this one's added).
void join_repetition(Record& into, Record&& rep, std::vector<std::vector<double>>& samples,
                     std::vector<std::map<std::string, Counter>>& counters) {
  if (into.status != Status::ok) return;  // a failed, invalid or skipped first outcome stands
  if (rep.status == Status::invalid || rep.status == Status::failed) {
    const std::string detail = "repetition " + std::to_string(samples.size() + 1) + ": " + rep.status_detail;
    into = std::move(rep);
    into.status_detail = detail;
    into.value.reset();
    if (into.status != Status::invalid) into.stats.reset(), into.samples.clear(), into.sample_groups.clear();
    return;
  }
  if (rep.status != Status::ok || rep.samples.empty()) return;  // skipped this time: the others stand
  samples.push_back(rep.samples);
  counters.push_back(rep.counters);
  for (PairedRounds& p : rep.paired) {  // a pair's rounds of every repetition, in order
    auto it = std::find_if(into.paired.begin(), into.paired.end(), [&](const PairedRounds& q) { return q.with == p.with; });
    if (it == into.paired.end()) {
      into.paired.push_back(std::move(p));
    } else {
      it->a_s.insert(it->a_s.end(), p.a_s.begin(), p.a_s.end());
      it->b_s.insert(it->b_s.end(), p.b_s.begin(), p.b_s.end());
    }
  }
  add_sample_group(into, rep.samples);  // each repetition its own group: it met the machine apart
  // Every repetition weighs the same, as the runs of `gtb run --runs K` do.
  into.stats = compute_stats_of_runs(samples);
  into.value = into.metric_of_seconds(into.stats->median);
  median_counters(into.counters, counters);
  into.info["repetitions"] = samples.size();
}

// A case's fresh record of this process: the case's record (its first) or a repetition that joins it.
void keep_record(RunState& rs, const Case& c, Record&& fresh) {
  auto it = rs.index.find(c.id);
  if (it == rs.index.end()) {
    rs.index[c.id] = rs.records.size();
    rs.records.push_back(std::move(fresh));
    const Record& r = rs.records.back();
    if (r.status == Status::ok && !r.samples.empty()) {
      rs.repeats[c.id].samples.push_back(r.samples);
      rs.repeats[c.id].counters.push_back(r.counters);
    }
  } else {
    Repeats& rp = rs.repeats[c.id];
    join_repetition(rs.records[it->second], std::move(fresh), rp.samples, rp.counters);
  }
}

// Whether the case runs (again): the first time, and after an ok record (not after a failure, a
// failed check or a skip).
bool runs_again(const RunState& rs, const Case& c) {
  const auto it = rs.index.find(c.id);
  return it == rs.index.end() || rs.records[it->second].status == Status::ok;
}

// Measures a group in rounds (docs/harness.md): every case runs in a fiber of its own up to its exec,
// which calibrates and warms up, then each round resumes every side for one sample, in the run order
// and in reverse on alternate rounds (a side's place in the round evens out), until the rounds'
// stopping rule says stop; then every case runs to its end. A side that fails, skips or measures
// nothing leaves the rounds; the others go on. Each pair of two ok sides keeps its rounds on A's record.
void run_group(RunState& rs, const RunState::Group& g) {
  struct Side {
    const Case* c = nullptr;
    Record rec;
    detail::RoundSlot slot;
    std::unique_ptr<Fiber> fiber;
    bool ran = false;  // set up this time (not after an earlier failure, failed check or skip)
  };
  std::vector<Side> sides(g.cases.size());
  for (std::size_t i = 0; i < sides.size(); ++i) {
    Side& s = sides[i];
    s.c = g.cases[i];
    s.rec = base_record(*s.c);
    s.fiber = std::make_unique<Fiber>([&rs, &s] {
      try {
        run_case(rs, *s.c, s.rec, &s.slot);
      } catch (...) {  // run_case keeps std::exception in the record; anything else ends the case here
        s.rec.status = Status::failed;
        s.rec.status_detail = "the case threw an unknown exception";
      }
    });
  }
  // Set up, check, calibrate and warm up each side, one after the other.
  for (Side& s : sides) {
    if (!runs_again(rs, *s.c)) continue;
    s.ran = true;
    note_case_started(s.c->id);
    s.fiber->resume();
  }
  auto in_rounds = [&](const Side& s) { return s.slot.ready && !s.fiber->finished(); };
  std::string why;
  const double start = decision_seconds();
  for (int round = 0; why.empty(); ++round) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < sides.size(); ++i)
      if (in_rounds(sides[i])) order.push_back(i);
    if (order.empty()) break;
    if (round % 2) std::reverse(order.begin(), order.end());
    for (std::size_t i : order) {
      sides[i].slot.say = detail::RoundSlot::Say::sample;
      sides[i].fiber->resume();
    }
    std::vector<std::size_t> live;
    std::map<std::size_t, int> at;
    for (std::size_t i = 0; i < sides.size(); ++i)
      if (in_rounds(sides[i])) at[i] = int(live.size()), live.push_back(i);
    if (live.empty()) break;
    std::vector<StopRule> rules;
    std::vector<std::vector<double>> samples;
    for (std::size_t i : live) rules.push_back(sides[i].slot.rule), samples.push_back(sides[i].slot.samples);
    std::vector<std::pair<int, int>> pairs;
    for (const auto& [a, b] : g.pairs)
      if (at.count(std::size_t(a)) && at.count(std::size_t(b))) pairs.emplace_back(at[std::size_t(a)], at[std::size_t(b)]);
    why = rounds_stop_decision(rules, samples, pairs, decision_seconds() - start);
  }
  for (Side& s : sides) {
    if (!s.ran) continue;
    s.slot.stop_reason = why;
    s.slot.say = detail::RoundSlot::Say::finish;
    while (s.fiber->resume()) {
    }
  }
  for (const auto& [a, b] : g.pairs) {
    Side &sa = sides[std::size_t(a)], &sb = sides[std::size_t(b)];
    if (sa.rec.status == Status::ok && sb.rec.status == Status::ok && !sa.slot.samples.empty() &&
        sa.slot.samples.size() == sb.slot.samples.size())
      sa.rec.paired.push_back({sb.c->id, sa.slot.samples, sb.slot.samples});
  }
  for (Side& s : sides)
    if (s.ran) keep_record(rs, *s.c, std::move(s.rec));
}

// The groups of a run: its declared pairs (declared_pairs), joined where they share a case.
void plan_groups(RunState& rs, const std::string& family, const std::vector<Case>& cases) {
  std::vector<Record> planned;
  for (const Case& c : cases) planned.push_back(base_record(c));
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < cases.size(); ++i) at.emplace(cases[i].id, i);
  const auto pairs = declared_pairs(family, planned);
  std::vector<std::size_t> root(cases.size());
  for (std::size_t i = 0; i < root.size(); ++i) root[i] = i;
  auto find = [&](std::size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (const auto& [a, b] : pairs) root[find(at[a])] = find(at[b]);
  std::map<std::size_t, std::size_t> group_at;  // root -> index in rs.groups
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool paired = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) { return at[p.first] == i || at[p.second] == i; });
    if (!paired) continue;
    const auto [it, fresh] = group_at.emplace(find(i), rs.groups.size());
    if (fresh) rs.groups.emplace_back();
    rs.groups[it->second].cases.push_back(&cases[i]);
    rs.group_of[cases[i].id] = it->second;
  }
  for (const auto& [a, b] : pairs) {
    RunState::Group& g = rs.groups[rs.group_of[a]];
    auto index = [&](const std::string& id) {
      return int(std::find_if(g.cases.begin(), g.cases.end(), [&](const Case* c) { return c->id == id; }) - g.cases.begin());
    };
    g.pairs.emplace_back(index(a), index(b));
  }
}

// One Google Benchmark entry a case: it runs the case into `rs` and reports its median. Run again
// (repetitions), the case measures into a fresh record that joins the first (join_repetition). A case
// of a group measures the whole group when it is the first of its group's entries to run this time.
void register_cases(RunState& rs, const std::vector<Case>& cases) {
  rs.records.reserve(cases.size());
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark(c.id.c_str(), [&rs, &c](benchmark::State& gb) {
      if (const auto g = rs.group_of.find(c.id); g != rs.group_of.end()) {
        RunState::Group& group = rs.groups[g->second];
        int& mine = group.reported[c.id];
        if (group.runs <= mine) {
          run_group(rs, group);
          ++group.runs;
        }
        ++mine;
      } else if (runs_again(rs, c)) {
        Record fresh = base_record(c);
        note_case_started(c.id);
        run_case(rs, c, fresh);
        keep_record(rs, c, std::move(fresh));
      }
      const Record* r = &rs.records[rs.index.at(c.id)];
      if (r->status != Status::ok) {
        const std::string msg = std::string(to_string(r->status)) + ": " + r->status_detail;
        gb.SkipWithError(msg.c_str());
        for (auto _ : gb) {
        }
        return;
      }
      for (auto _ : gb) gb.SetIterationTime(r->stats->median);
      gb.counters[r->metric.unit] = benchmark::Counter(*r->value);
      gb.counters["samples"] = benchmark::Counter(double(r->stats->count));
    })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

// The results document of the run, written atomically to `out_path`.
int write_results(const std::string& family, const RunState& rs, const json& context, const json& findings,
                  double seconds, const std::string& out_path) {
  json fams = json::array();
  fams.push_back({{"name", family},
                  {"status", "ok"},
                  {"exit_code", 0},
                  {"seconds", seconds},
                  {"records", rs.records.size()}});
  if (json p = publications(family); !p.empty()) fams[0]["publishes"] = p;  // publish.h
  try {
    const json doc = make_document(context, to_string(rs.suite), fams, rs.records, findings);
    write_file_atomic(out_path, doc.dump(1) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: cannot write results: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int family_main(int argc, char** argv, const std::string& family) {
  if (const int rc = run_startup_takeover(argc, argv); rc >= 0) return rc;
  RunState rs;
  MainFlags flags;
  if (const int rc = parse_flags(argc, argv, family, rs, flags); rc >= 0) return rc;
  const std::string& out_path = flags.out_path;

  if (flags.list) {
    std::cout << list_json(family, rs.suite, flags.sel).dump(2) << "\n";
    return 0;
  }
  // Bad input only the run can see: said before anything runs or is written.
  const std::string bad_input = flags.precheck || flags.findings_from.empty() ? precheck_message(family) : "";
  if (flags.precheck) {
    if (bad_input.empty()) return 0;
    std::cout << bad_input << "\n";
    return 2;
  }
  if (!bad_input.empty()) return usage_error(bad_input);
  if (!flags.findings_from.empty()) return print_findings_from(family, flags.findings_from, out_path);
  if (!out_path.empty()) {
    try {
      check_writable(out_path);
    } catch (const std::exception& e) {
      return usage_error(std::string("--gtb_out: ") + e.what());
    }
  }

  // Before any case loads data or starts threads: this may re-execute the binary.
  run_startup_before_cases(argv);
  // Every CPU thread of a measuring process flushes denormals (kernels/common/denormals.h),
  // before any process group or case starts threads of its own (they inherit it).
  flush_denormals_on_every_thread();
  const auto group_it = registry().groups.find(family);
  const ProcessGroup* group = group_it == registry().groups.end() ? nullptr : &group_it->second;
  struct Finish {
    const ProcessGroup* g;
    ~Finish() {
      if (g && g->finish) g->finish();
    }
  } finish{group};
  if (group && group->start) {
    try {
      group->start();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s could not start its process group: %s\n", family.c_str(), e.what());
      return 1;
    }
  }

  const std::vector<Case> cases = select(expand(family, rs.suite), flags.sel);
  // The processes of a group that agrees decide on the first one's clock (ProcessGroup::agree) and
  // measure their pairs in rounds; those of one that does not follow one case at a time, pairs apart.
  if (group && group->agree)
    decision_clock() = [agree = group->agree] { return agree(host_seconds()); };
  if (rs.pairs && (!group || group->agree)) plan_groups(rs, family, cases);
  register_cases(rs, cases);
  int gb_argc = static_cast<int>(flags.rest.size());
  benchmark::Initialize(&gb_argc, flags.rest.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, flags.rest.data())) return 2;

  json context = full_context();
  if (group && group->describe) group->describe(context);
  if (auto it = registry().contexts.find(family); it != registry().contexts.end())
    for (const auto& fn : it->second) fn(context[family]);
  const double t0 = host_seconds();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const double seconds = host_seconds() - t0;
  // The records in the cases' order, however Google Benchmark ordered their runs (random interleaving).
  std::map<std::string, std::size_t> order;
  for (std::size_t i = 0; i < cases.size(); ++i) order.emplace(cases[i].id, i);
  std::stable_sort(rs.records.begin(), rs.records.end(),
                   [&](const Record& a, const Record& b) { return order[a.id] < order[b.id]; });
  rs.index.clear();

  json findings = json::object();
  if (json f = family_findings(family, rs.records); !f.is_null()) findings[family] = f;
  if (out_path.empty() || (group && group->writes_results && !group->writes_results())) return 0;
  return write_results(family, rs, context, findings, seconds, out_path);
}

}  // namespace gtb
