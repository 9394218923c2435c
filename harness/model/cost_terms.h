// Cost terms: the measured functions a family offers the cost model ("seconds to copy B bytes from
// pinned memory", "FLOP/s of a matmul of this shape"), their JSON form and their lookup.
//
// A family publishes `terms` (and, when its records are whole steps, `steps`) beside its findings
// sections. This file knows terms, never families: a term remembers which family published it only
// as data, so that validation can leave a step's own family out. docs/advise.md lists every term.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "harness/document/types.h"
#include "harness/model/term_names.h"

namespace gtb::cost {

// One measured point of a table term.
struct Point {
  json at = json::object();  // axis -> value
  double y = 0;
  std::string record;
};

// The units a term's numbers may carry: a table's `y` and a constant's `unit`. These lists are the
// only definition: reading a term refuses any other, and docs/gtb-results.schema.json names the
// same (a test compares them).
inline constexpr const char* kTableUnits[] = {"seconds", "flop_per_s", "bytes_per_s", "samples_per_s",
                                              "logits_per_s", "fraction", "count"};
inline constexpr const char* kConstantUnits[] = {"s", "fraction", "count"};

// One cost term. `form` says which fields carry the numbers:
//   latency_bandwidth: seconds(x) = latency_s + x / per_second, trusted for x within [x_min, x_max];
//   table: `points` over `axes`, y in unit `y` (one of kTableUnits), interpolated log-log between
//          neighbours;
//   constant: `value` in `unit` (one of kConstantUnits: seconds, a fraction or a count such as
//          cpu_threads).
// A term with `cannot_say` set carries no number, only the reason.
struct Term {
  std::string family, name;
  Backend backend = Backend::cpu;
  json where = json::object();  // selector values (strings or numbers)
  std::string form, x, y, unit, cannot_say, note;
  double latency_s = 0, per_second = 0, x_min = 0, x_max = 0;
  double value = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> axes;
  std::vector<Point> points;
  std::vector<std::string> records;

  bool usable() const { return cannot_say.empty(); }
};

// A measured whole step, published for validation.
struct Step {
  std::string family, record;
  Backend backend = Backend::cpu;
  double seconds = 0;  // median seconds per step
  json config = json::object();
  // What validation leaves out: every term of the step's own family (the default), or only what
  // came from the step's own record ("record": a family whose terms price a part of a step it also
  // measures whole, from other records of its own).
  std::string leave_out = "family";
  // Why the validation shows this step without scoring it (its measured median is not a steady
  // figure: the record was flagged suspect); empty: scored. Set from the results document, never
  // published.
  std::string not_scored = {};
  // The ~95% noise of the measured median, relative to it (median_noise_relative_halfwidth over the
  // record's samples and the groups they came in); infinity when the record cannot say. Set from the
  // results document, never published.
  double noise = std::numeric_limits<double>::infinity();
};

json to_json(const Term& t);
json to_json(const Step& s);
// Both throw std::runtime_error naming the offending key. `family` is the publisher (the findings key).
Term term_from_json(const json& j, const std::string& family);
Step step_from_json(const json& j, const std::string& family);

// Every family's terms / steps in a results document (findings.<family>.terms / .steps). Files
// written before terms existed give an empty list; has_terms() tells the two apart. A file of several
// runs: each table point and constant, and each step's seconds, is the median over the runs of that
// run's own value (run_findings), where two or more runs hold it. A step whose record the file flags
// `suspect` carries the flag's reason in `not_scored`.
std::vector<Term> terms_from_document(const json& results_document);
std::vector<Step> steps_from_document(const json& results_document);
// One run's steps of a file of several runs (`run_findings` entry `run`): that run's own seconds; a
// step whose record's samples in that run spread over more than `max_spread` of their median
// (interquartile range) is not scored. Empty when the file holds no such run.
std::vector<Step> steps_of_run(const json& results_document, int run, double max_spread);
bool has_terms(const json& results_document);

// What the model can say about one part of a step.
struct Estimate {
  std::optional<double> seconds;
  std::vector<std::string> records;  // every record the number came from
  std::string cannot_say;            // set when seconds is empty: why
  bool outside_measured = false;     // the query lies outside the measured range (clamped, not extrapolated)
  std::string note;
};
// Sum of two estimates: seconds add, records merge, the first cannot_say wins, flags OR.
Estimate operator+(const Estimate& a, const Estimate& b);
Estimate scaled(const Estimate& e, double factor);

// The one way the model finds terms: those of `name` (term_names.h) on backend `b` that `pick`
// accepts, the usable ones in their order; `reason` gets the first unusable one's cannot_say (the
// publisher's why). Every lookup below and the model's parts go through it.
std::vector<const Term*> find_terms(const std::vector<Term>& terms, const std::string& name, Backend b,
                                    const std::function<bool(const Term&)>& pick, std::string& reason);

// Lookups. Each picks the terms of that name, backend and selector; none usable gives cannot_say
// with the publisher's reason (or "no ... term").
Estimate copy_seconds(const std::vector<Term>&, const std::string& name, Backend, const std::string& memory, double bytes);
// `orientation`: nn (A B), tn (A^T B, a weight gradient) or nt (A B^T, an input gradient); a backend
// without tables of that orientation is priced at its nn rate, with a note. `rate_precision`, where
// given, is set to the precision whose measured rate priced it (fp32 where a reduced precision's
// products run faster as FP32 on rounded operands).
Estimate matmul_seconds(const std::vector<Term>&, Backend, const std::string& precision, double m, double n, double k,
                        const std::string& orientation = "nn", std::string* rate_precision = nullptr);
// A reduced-precision GEMM from FP32 operands rounded as they enter the product, the rounding
// included (matmul_autocast: the CPU steps' BF16 sites); cannot_say where none was measured.
Estimate matmul_autocast_seconds(const std::vector<Term>&, Backend, const std::string& precision, double m, double n,
                                 double k, const std::string& orientation = "nn");
// `count` independent products of one shape at once (attention's per-head GEMMs): the
// matmul_batched table, or each product alone at the matmul rate where none was measured.
Estimate matmul_batched_seconds(const std::vector<Term>&, Backend, const std::string& precision, double m, double n,
                                double k, const std::string& orientation, double count);
// The share (0..) of the back-to-back GEMM rate a GEMM of `gemm_flop` FLOPs keeps inside a step at
// `precision` (matmul_in_step over a GEMM's FLOPs; files of older gtb hold it over the step's weights
// and activations, `working_set_bytes`); cannot_say where none was measured.
Estimate matmul_in_step_fraction(const std::vector<Term>&, Backend, const std::string& precision,
                                 double working_set_bytes, double gemm_flop);
// The share of the back-to-back GEMM rate a GEMM of `gemm_flop` FLOPs keeps with its operands in
// memory (matmul_from_memory), for a step whose working set is above the last-level cache the term
// was measured against (its x_min); cannot say below it or where no such term was measured.
Estimate matmul_from_memory_fraction(const std::vector<Term>&, Backend, const std::string& precision,
                                     double working_set_bytes, double gemm_flop);
// The share (0..) of the back-to-back rate a step's elementwise passes (name "passes_in_step", at the
// bytes all its passes move per step) or its optimizer update ("update_in_step", at the bytes an SGD
// update of its parameters moves and, where the table has the axis, the step's `rows` per
// micro-batch) keep inside a step at `precision` run on `threads` ("all" or "one"); cannot_say where
// none was measured.
Estimate pass_in_step_fraction(const std::vector<Term>&, Backend, const std::string& name, const std::string& precision,
                               const std::string& threads, double bytes, double rows = 0);
Estimate launch_seconds(const std::vector<Term>&, const std::string& mode);
// A constant term's value (not a time: a count such as cpu_threads) in Estimate::seconds.
Estimate constant_value(const std::vector<Term>& terms, const std::string& name, Backend b);
Estimate host_sync_seconds(const std::vector<Term>&, Backend);
Estimate allreduce_seconds(const std::vector<Term>&, Backend, int ranks, double bytes);
// Elementwise / streaming work moving `bytes` (read + written): plain passes (no `op`), or those
// measured computing `op` (stream_bandwidth's where.op: gelu, adam, sgd, sgd_one_thread, handoff,
// one_thread).
Estimate stream_seconds(const std::vector<Term>&, Backend, double bytes, const std::string& op = "");
// Seconds per batch of a loader at `workers` for a per-sample preprocessing cost `sample_us`.
// The CPU MLP step's loss (softmax cross-entropy) over `logits` logits on `threads` ("one" or "all"),
// where measured (the records of the step's own loss function that publish softmax_xent).
Estimate softmax_xent_seconds(const std::vector<Term>&, Backend, const std::string& threads, double logits);
// A GEMM of `flop` FLOPs run on one thread inside a step (matmul_one_thread: the one-thread step
// sequence's calls, each at its in-step share), at the rate measured at the nearest sizes.
Estimate matmul_one_thread_seconds(const std::vector<Term>&, Backend, const std::string& precision, double flop);
Estimate loader_seconds(const std::vector<Term>&, Backend, int workers, double sample_us, double batch);
// The hidden fraction of communication (0..1).
Estimate overlap_fraction(const std::vector<Term>&, Backend);

// Producers' helpers. A term without usable records: the reason is the records' own status detail
// ("skipped: no usable GPU: ..."), or "no record" when nothing of the kind ran.
Term cannot_say_term(const std::string& name, Backend, const json& where, const std::string& form,
                     const std::string& reason, const std::vector<std::string>& records = {});
std::string reason_none(const std::vector<Record>& records, Backend, const std::function<bool(const Record&)>& pick,
                        const std::string& what);

// A table term of the usable records `pick` selects: one point per distinct `at`, the best y of
// those sharing it (highest, or lowest when `lower_is_better`); a cannot_say term naming why when none.
Term table_term(const std::string& name, Backend, const json& where, const std::vector<std::string>& axes,
                const std::string& y, const std::vector<Record>& records, const std::function<bool(const Record&)>& pick,
                const std::function<json(const Record&)>& at, const std::function<double(const Record&)>& y_of,
                const std::string& what, bool lower_is_better = false);
// Writes terms and steps into the family's findings data (data.cost_terms, data.cost_steps), from where
// the registry publishes them beside the findings (findings.<family>.terms, .steps).
void write_evidence(json& data, const std::vector<Term>& terms, const std::vector<Step>& steps);

// Table interpolation, exposed for tests: log-log between the neighbours along each axis (points on
// a grid or scattered: the nearest points in log space, weighted by inverse distance when the query
// is not on a measured line). Sets outside_measured when the query is beyond the points on any axis.
struct Interpolated {
  double y = 0;
  std::vector<std::string> records;
  bool outside_measured = false;
};
std::optional<Interpolated> interpolate(const Term& table, const json& at);

}  // namespace gtb::cost
