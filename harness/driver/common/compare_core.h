// gtb compare's engine: match records of two results files, decide each verdict, render the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/document/format.h"
#include "harness/document/types.h"

namespace gtb::compare {

// printf-style number formatting, as every compare file writes it.
inline const auto& fmt = format::printf_number;

// How much change matters and how much evidence a verdict needs.
struct Settings {
  double threshold = 0.05;   // effect size: relative change of the metric in its better direction
  double confidence = 0.99;  // two-sided bootstrap interval of the median ratio
  double alpha = 0.01;       // one-sided Mann-Whitney U significance level
  int min_samples = 5;       // kept samples needed on each side before any verdict but same/noisy
  int resamples = 2000;      // bootstrap resamples
  // With one run on each side only a change beyond this counts: within-run samples say nothing
  // about the next run on a shared machine, so their evidence is weak.
  double single_run_threshold = 0.25;
  // Two-sided confidence of the run-level interval (several runs, or gtb ab's paired rounds): 0.98
  // leaves 1% per direction, which with three runs a side still catches a 10% change of a record
  // whose runs spread 2% (see docs/compare.md for the measured rates).
  double run_confidence = 0.98;
  // The run-to-run spread used is at least this factor times the typical spread of the samples
  // inside a run (robust, from their quartiles); for paired rounds sqrt(2) times that. Three runs
  // (or five rounds) estimate their own spread poorly, and a record whose samples visit two states
  // of the machine (a time slice lost or not) can put all of one side's medians in the same state:
  // the within-run spread says so.
  double within_run_floor = 0.5;
  std::uint64_t seed = 0x6774622d636d70ull;  // fixed: the same files always give the same verdicts
};

// A per-record override from the config file: the first rule whose glob matches the record id wins.
struct RecordRule {
  std::string pattern;  // fnmatch(3) glob over the record id; '*' also crosses '/'
  std::optional<double> threshold;
  bool ignore = false;
};

struct Config {
  Settings settings;
  std::vector<std::pair<std::string, double>> family_thresholds;
  std::vector<std::pair<std::string, bool>> family_ignore;
  std::vector<RecordRule> rules;
  // Set by gtb ab: the runs of BASE and NEW were interleaved round by round and are paired by run
  // number. Not a config-file key.
  bool paired = false;

  // {"threshold", "confidence", "alpha", "min_samples", "resamples", "seed", "single_run_threshold",
  //  "run_confidence",
  //  "families": {"<family>": 0.1 | {"threshold": 0.1, "ignore": false}},
  //  "records": {"<glob>": 0.1 | {"threshold": 0.1, "ignore": true}}}. Unknown keys are errors:
  // a misspelt key must not silently fall back to the default. Throws std::runtime_error.
  static Config from_json(const json& j);
  double threshold_for(const Record& r) const;
  bool ignored(const Record& r) const;
};

// `unconfirmed`: found slower between files whose family was measured on a busy machine, with no
// fresh rounds to confirm it (gtb ab, or --confirmed-by): neither a pass nor a regression.
enum class Verdict { broken, slower, unconfirmed, noisy, faster, missing, added, unmeasured, same, ignored };
// `added` is called "new" (a keyword in C++).
inline constexpr NameTable<Verdict, 10> kVerdictNames = {{{Verdict::broken, "broken"},
                                                         {Verdict::slower, "slower"},
                                                         {Verdict::unconfirmed, "unconfirmed"},
                                                         {Verdict::noisy, "noisy"},
                                                         {Verdict::faster, "faster"},
                                                         {Verdict::missing, "missing"},
                                                         {Verdict::added, "new"},
                                                         {Verdict::unmeasured, "unmeasured"},
                                                         {Verdict::same, "same"},
                                                         {Verdict::ignored, "ignored"}}};
inline const char* to_string(Verdict v) { return name_of(kVerdictNames, v); }
// gtb compare's exit code when something was found slower but could not be confirmed (busy machine).
inline constexpr int kExitUnconfirmed = 3;
bool is_regression(Verdict v);

// The decision for one matched pair of ok records, from metric values per kept sample.
struct Decision {
  Verdict verdict = Verdict::same;
  double ratio = 1.0;    // NEW over BASE in the better direction: > 1 means NEW is better
  double ci_low = 1.0;   // bootstrap interval of the median ratio, same orientation
  double ci_high = 1.0;
  double p_slower = 1.0;  // one-sided Mann-Whitney p of "NEW is worse"
  double p_faster = 1.0;  // ... of "NEW is better"
  bool tested = false;    // enough samples on both sides: interval and p-values are meaningful
  std::string note;
};
// One run on each side. base_value/new_value: the records' values (the point estimate); samples:
// per-sample metric values.
Decision decide(double base_value, double new_value, const std::vector<double>& base_samples,
                const std::vector<double>& new_samples, Better better, double threshold, const Settings& s,
                std::uint64_t seed);

// Several runs on a side: decided on the per-run values (one per run, the metric at that run's median
// sample). Unpaired: the interval of the ratio of geometric means uses the run-to-run spread (the
// larger of BASE's own and the pooled spread of both sides), so a change within that noise floor is
// never a regression. Paired (gtb ab, base[i] and next[i] from the same round): the interval of the
// mean paired log ratio. Student's t at s.run_confidence either way.
// `within_spread`: the typical standard deviation of log samples inside one run; the run-to-run
// spread used is at least s.within_run_floor times it (paired: the spread of the paired log ratios,
// at least sqrt(2) times that).
Decision decide_runs(const std::vector<double>& base, const std::vector<double>& next, bool paired, Better better,
                     double threshold, const Settings& s, double within_spread = 0.0);

struct Row {
  std::string id;
  std::string family, workload, variant, backend;
  json params = json::object();
  json options = json::object();
  std::string metric, unit, better;
  std::string base_status, new_status;  // empty when the record is absent from that side
  std::optional<double> base_value, new_value;
  std::size_t base_n = 0, new_n = 0;  // kept samples
  std::size_t base_runs = 0, new_runs = 0;  // ok runs (1 for a file of one run)
  std::string evidence;  // "samples" (one run each side), "runs" or "paired rounds"
  double threshold = 0;
  bool has_ratio = false;  // both values present: d.ratio is meaningful
  Decision d;
};

struct ContextCheck {
  bool comparable = true;
  std::vector<std::string> problems;  // why the machines differ (exit 2 unless allowed)
  std::vector<std::string> warnings;  // differences worth knowing that do not block
};
ContextCheck check_contexts(const json& base_context, const json& new_context);
// "NVIDIA H200 on host-a" or "<CPU model> on host-a (no GPU)".
std::string machine_name(const json& context);

struct Side {
  std::string path;
  std::string generated_at;
  std::string machine;
  std::string suite;
};

struct Calibration {
  bool done = false;
  std::size_t records = 0;       // records with enough samples to simulate
  std::size_t trials = 0;        // simulated A/A comparisons
  std::size_t false_slower = 0;  // simulated A/A comparisons that said "slower"
  std::size_t false_faster = 0;
  std::size_t noisy = 0;
  double expected_false_regressions = 0;  // per compare of these files: sum of per-record rates
  std::vector<std::pair<std::string, double>> worst;  // record id, simulated false-alarm rate
};

struct Result {
  Side base, next;
  Settings settings;
  bool paired = false;  // decided on paired rounds (gtb ab)
  // gtb ab: how many fresh rounds decide again a record found slower (0: no confirmation), and the
  // families that ran them.
  int confirm_rounds = 0;
  std::vector<std::string> confirmed_families;
  ContextCheck context;
  bool machines_allowed = false;  // --allow-different-machines
  std::vector<Row> rows;          // regressions first, then the rest by verdict and id
  Calibration calibration;
  // gtb ab: the family runs that failed (crashed, wrote nothing), "<family> in round <n>: <error>".
  // One in NEW is a regression; one in BASE makes the input bad.
  std::vector<std::string> base_failures, new_failures;
  std::size_t count(Verdict v) const;
  std::size_t regressions() const;
  // The command's exit status, decided here alone (every renderer prints this one): 2 incomparable
  // machines (not allowed) or a BASE family run failed, 1 a regression or a NEW family run failed,
  // 3 (kExitUnconfirmed) only unconfirmed, 0 otherwise.
  int exit_code() const;
};

// Matches the records of two validated documents by (family, workload, variant, backend, params,
// options) and decides every pair. Throws std::runtime_error on a duplicate record key.
Result compare_documents(const json& base, const json& next, const Config& config);

// gtb ab's confirmation: a row of `res` decided `slower` stays a regression only when `confirm`, the
// comparison of fresh paired rounds of its family, decides it `slower` too; otherwise it becomes
// `noisy`. The note gives the confirmation's change and interval; rows are sorted again. With
// independent rounds a false alarm has to happen twice.
void apply_confirmation(Result& res, const Result& confirm);
// gtb compare of two files: a row decided `slower` whose family either file measured on a busy
// machine (families[].health.busy) becomes `unconfirmed`, its note giving both files' health
// warnings. It fails the job with its own exit code (3), never silently passes.
void mark_unconfirmed_on_busy(Result& res, const json& base, const json& next);

// Simulated A/A: for each ok record with enough samples in BASE, draws two sample sets of the
// compared sizes from BASE's own samples `trials_per_record` times and counts the verdicts.
Calibration calibrate(const json& base, const json& next, const Config& config, int trials_per_record);

std::string render_text(const Result& r);
std::string render_markdown(const Result& r);
json render_json(const Result& r);
// The verdict of the whole comparison with the status the command returns (exit_code()), e.g.
// "2 REGRESSIONS (exit 1)": the one text every renderer and summary line prints.
std::string outcome(const Result& r);

}  // namespace gtb::compare
