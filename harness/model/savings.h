// The savings validation: for every A/B pair a family measured (the same step without and with one
// fix), the saving the cost model predicts from the other families' terms beside the saving measured.
//
// A family declares its pairs (record ids of its published steps, and the fix between them) beside
// its steps; this file knows pairs, steps and terms, never families. docs/advise.md states the rules.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/model/cost_model.h"
#include "harness/document/types.h"

namespace gtb::cost {

// One A/B pair: `a` is the step without the fix, `b` the same step with it (record ids of two steps
// the family publishes). `fix` names the fix as the model's fixes do where it is one of them
// (bf16, fewer_syncs, drop_copy, larger_batch, overlap, bucket_size, cuda_graphs, pinned_memory,
// more_workers), otherwise a name of the family's own. `change` says what differs, for a reader.
struct Pair {
  std::string family;  // the publisher (the findings key), set when read
  std::string fix, change, a, b;
};
json to_json(const Pair& p);
Pair pair_from_json(const json& j, const std::string& family);  // throws std::runtime_error naming the key
// Every family's pairs (findings.<family>.pairs); empty for files written before pairs existed.
std::vector<Pair> pairs_from_document(const json& results_document);
// Writes pairs into the family's findings data (data.cost_pairs), beside write_evidence's terms and steps.
void write_pairs(json& data, const std::vector<Pair>& pairs);
// The producers' helper: the pairs among `steps` of one workload and backend (the first two parts of
// the record ids, and the backend, equal) whose configurations are equal but for `key`, A's value one
// of `from` and B's `to` (null: the key absent, its default, shown as `to_shown`). `fix` as in Pair.
std::vector<Pair> pairs_differing_in(const std::vector<Step>& steps, const std::string& key,
                                     const std::vector<json>& from, const json& to, const std::string& fix,
                                     const std::string& to_shown = "none");

// The rounds a paired saving's interval needs (median_interval's minimum; the harness's
// kMinPairedRounds gives every declared pair that many where its budget allows).
inline constexpr int kMinPairedRoundsForInterval = 6;

// The targets the savings are held to.
inline constexpr double kSavingRelTolerance = 0.25;   // of the measured saving
inline constexpr double kSavingStepTolerance = 0.03;  // of the step without the fix

// The measured saving A - B (the steps' median seconds) and its noise: the half-widths of the two
// medians' ~95% confidence intervals (relative, from each record's samples and the spread of their
// groups' medians where they came in repetitions or runs: median_noise; times its step) added in
// quadrature; infinite where a record has too few samples to say (under 6). In a file of several
// runs, no less than half the range of the savings the runs measured one by one (run_spread_s): the
// drift of the machine between runs, which no record's own samples show.
//
// Where the harness measured the pair as a pair (the records' paired rounds, docs/harness.md), the
// saving is the median of the per-round differences A - B (at the steps' scale) and its noise the
// larger side of that median's ~95% interval (order statistics over the rounds); infinite below
// kMinPairedRounds rounds. A noise of zero (no spread seen at all) reads as infinite: never "± 0".
struct MeasuredSaving {
  double seconds = 0, noise_s = 0, step_s = 0;  // step_s: A's median
  int paired_rounds = 0;                        // > 0: measured as a pair, from this many rounds
  double run_spread_s = 0;                      // 0: fewer than two runs hold both records
  // >= 2: `seconds` is the median of the runs' own savings (A and B paired by run); 0 with one run, or
  // where each run repeated its records (the difference of the medians over all samples, every run
  // weighing the same: the repetitions of one run are as far apart as two runs)
  int paired_runs = 0;
};
MeasuredSaving measured_saving(const Step& a, const Record& ra, const Step& b, const Record& rb);

struct SavingRow {
  Pair pair;
  Backend backend = Backend::cpu;
  std::optional<MeasuredSaving> measured;
  Estimate predicted_a, predicted_b;          // each side from the other families' terms
  // The fix's share of its step as the model has it, (predicted_a - predicted_b) / predicted_a, and
  // the predicted saving: that share of the measured A step (the other families' terms were measured
  // minutes apart, at the host's speed of that moment: the share does not move with it, the seconds
  // do; the step validation checks the seconds).
  std::optional<double> predicted_share;
  std::optional<double> predicted_s;
  // scored: both sides known and the measured saving outside its noise; in_noise: the measured
  // saving is inside its own noise (not scored); cannot_say: a side was not predicted, or a record
  // is missing (`why`).
  std::string status;
  std::string why;
  bool sign_ok = false, within = false;       // scored rows only
  std::optional<double> error;                // (predicted - measured) / |measured|, scored rows
  double allowed_s = 0;                       // the larger of the two tolerances, seconds
};
struct SavingsValidation {
  std::vector<SavingRow> rows;
  int scored = 0, passed = 0;
  // The scored fixes ranked by their saving as a fraction of their own step, predicted against
  // measured: pairs of fixes the two orders put the other way round (0: the same order), out of
  // `ranked_pairs`; Kendall's tau over them.
  int discordant = 0, ranked_pairs = 0;
  std::optional<double> kendall_tau;
  std::string cannot_read;  // set by a reader that could not read the pairs (then no rows): why
};
// `records`: the document's records (the pairs' samples). Pairs whose records or steps are missing
// are rows that say so.
SavingsValidation validate_savings(const std::vector<Term>& terms, const std::vector<Step>& steps,
                                   const std::vector<Pair>& pairs, const std::vector<Record>& records);
json to_json(const SavingsValidation& v);

}  // namespace gtb::cost
