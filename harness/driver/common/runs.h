// One family binary run as a child process, and repeated runs merged into one record set.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/driver/common/launch.h"
#include "harness/document/types.h"

namespace gtb::driver {

// One execution of one family binary.
struct FamilyJob {
  std::string family;
  std::string binary;  // path of gtb-<family>
  int run = 1;         // 1-based; "run" in the families entry when the file holds several runs
  bool tag_run = false;
  std::string stem;    // file names in the work folder: <stem>.json, <stem>.log, <stem>.gbench.json
  std::string label;   // progress prefix, e.g. "[4/6] myfam (run 2/3)"
  std::function<void()> on_tick;  // optional: called about every 200 ms while the child runs
};

struct RunSettings {
  std::string suite = "quick";
  double budget = 0;  // seconds per record; 0: the suite's
  std::filesystem::path work;
  LaunchRequest launch;  // ranks for the families that run under mpirun (one process by default)
  bool health = true;    // read the machine's health before, during and after each family
  double family_timeout = 0;  // seconds one run of a family may take; 0: default_family_timeout(suite, budget)
  // The cases each family binary takes (--gtb_backend=..., --gtb_cases=...; gtb run --backend,
  // --cases), passed to its run and to its count alike; empty: all of the suite's.
  std::vector<std::string> selection;
  // Each family's cases run this many times in one process, in a random interleaved order (Google
  // Benchmark's random interleaving), each record pooling the samples of its repetitions (gtb run
  // --repetitions); 1: each case once, in registration order.
  int repetitions = 1;
};

// The family binary's flags for `repetitions` (none for 1). None either for a family run as MPI
// ranks (`ranked`): its ranks must run the same case at the same time, sample for sample, and Google
// Benchmark draws its random order in each process apart.
std::vector<std::string> repetition_flags(int repetitions, bool ranked);

// The time limit of one family run when none is given: 600 s in the quick suite, 3600 s in the full
// one, times budget / the suite's default budget when a larger --budget stretches every record.
// Each run of `--runs K` is a process of its own with its own limit, so K does not enter; R
// repetitions make one run R times as long, so the limit a RunSettings gets grows R times.
double default_family_timeout(const std::string& suite, double budget);
double family_timeout_of(const RunSettings& s);  // the limit that applies to `s`

struct FamilyOutcome {
  json entry = json::object();  // the results file's "families" entry
  std::vector<Record> records;
  json context;                 // null unless the family wrote a readable results file
  json findings = json::object();
  bool finished = false;        // ended by itself (ok or failed), not stopped by an interruption
  bool ok = false;
};

// Number of cases the binary will run (asked of the binary itself), or -1 if it cannot say. Listing
// runs under the family's limit (`timeout_s`, 0: the suite's default); `timed_out`, when given, says
// whether it was stopped there.
int count_cases(const std::string& binary, const std::string& suite, const std::filesystem::path& work,
                double timeout_s = 0, bool* timed_out = nullptr, const std::vector<std::string>& selection = {});

// The message of a family binary's `--gtb_precheck` when it rejects its input (exit 2), "" otherwise
// (a binary that cannot say is left to its run, where a failure is recorded).
std::string family_precheck(const std::string& binary);

// The input check of every command that runs family binaries (gtb run, gtb ab): for each (family,
// binary) whose family declares a PRECHECK, its `--gtb_precheck`; the first rejection as "family:
// message", "" when none rejects (or an interruption stops the checks). Said before anything is
// measured or written.
std::string precheck_families(const std::vector<std::pair<std::string, std::string>>& family_binaries);

// A family's findings derived again by its binary from the records of the results file at `doc_path`
// (--gtb_findings_from); null when it could not (the findings it wrote at run time then stand).
json findings_from(const std::string& binary, const std::string& doc_path, const std::filesystem::path& work,
                   double timeout_s);
// The families some of whose records gained counters in the merge (a percent of another family's
// measured peak, say): their findings, computed before the merge, never saw those counters.
std::vector<std::string> families_enriched_by_merge(const std::vector<Record>& before, const json& merged_doc);
// The families whose findings the driver derives again from the merged file: with several runs every
// family that has findings (each run's binary saw only its own run's records, and the last run's
// findings would otherwise stand for the file), else those enriched by the merge.
std::vector<std::string> families_to_derive_again(const std::vector<Record>& before, const json& merged_doc, int runs);

// Runs the binary (under mpirun for a family that runs as ranks, when asked), shows progress on
// stderr, records the machine's health meanwhile in the entry, reads its results. An interruption (SIGINT/SIGTERM
// forwarded to the child) gives finished = false and a "failed" entry whose error is "interrupted".
// A run past family_timeout_of(settings) is stopped with its process group and recorded "failed"
// ("timed out after S s (last case started: ID)"); the binary names each case it starts in the file
// that GTB_CASE_FILE names.
FamilyOutcome run_one_family(const FamilyJob& job, const RunSettings& settings, int total_cases);

// The families entry of a family that was never started because the run was interrupted.
json not_run_entry(const std::string& family, int run, bool tag_run);

// What a finished, ok family run adds to a results file being built: its context merged into
// `context`, its findings (by family key) into `findings`, its records appended to `records`.
void absorb_family_run(const FamilyOutcome& res, const std::string& family, json& context, json& findings,
                       std::vector<Record>& records);

// A fresh folder under the system's temporary one for the family runs' files, named
// <prefix>-XXXXXX; throws std::runtime_error("cannot create a temporary folder: ...").
std::filesystem::path make_work_folder(const std::string& prefix);

// Merges the records of several runs (runs[i] = the records of run i + 1; a run may lack a family)
// by record id. With one run the records come back unchanged. Otherwise each record keeps every
// run's status, value and statistics in `runs`, and its own samples, stats and value are over the
// ok runs' samples together. Status: invalid or failed in any run wins (the detail names the run),
// then ok in any run, then skipped.
std::vector<Record> merge_runs(const std::vector<std::vector<Record>>& runs);

}  // namespace gtb::driver
