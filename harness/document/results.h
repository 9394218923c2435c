// The results document: assembling, comparing CPU with GPU, validating and writing atomically.
#pragma once

#include <string>
#include <vector>

#include "harness/document/types.h"

namespace gtb {

// Version 2 added per-run statistics (record "runs", top-level "runs"); version 1 files are read as
// one run each. Version 3 made findings typed (harness/findings.h): findings.<family> holds sections
// and keeps the family's raw numbers under "data"; older files' findings are read as raw data.
inline constexpr int kSchemaVersion = 3;
inline constexpr int kOldestSchemaVersion = 1;
inline constexpr const char* kSchemaName = "gtb-results";

// CPU vs GPU pairs: for each ok cuda record, the best ok cpu record with the same family, workload
// and params. gpu_over_cpu > 1 means the GPU is better, whatever the metric's direction.
json make_comparisons(const std::vector<Record>& records);

// The unit of a context ceiling by its name: "TFLOP/s" for a compute ceiling (..._tflops), else "GB/s".
std::string ceiling_unit(const std::string& name);
// Adds pct_of_ceiling counters to records naming a ceiling present in the context's measured ceilings
// (published::kCeilings): of their
// rate in the ceiling's unit (the metric, or for a compute ceiling also a `tflops` counter).
void apply_ceilings(std::vector<Record>& records, const json& context);

// A record that does the same work as records of other families names them in info.same_work_as
// (record ids, best first). The first of them that measured gives it the counter time_vs_same_work
// (this record's median seconds per repetition over that record's: above 1, this one is slower)
// and info.same_work_record (its id). Records whose counterparts did not run stay as they are.
void apply_same_work(std::vector<Record>& records);

// Adds pct_of_gemm_peak to records with a "tflops" counter and info "gemm_precision", from the best
// measured rate of the same backend and precision in `peaks` (what a family publishes as
// published::kPeaks: {backend: {precision: {"tflops": x}, or x}}).
void apply_peaks(std::vector<Record>& records, const json& peaks);

// A family's raw findings numbers: findings.<family>.data in a typed entry, the entry itself in a file
// before schema version 3; nullptr when absent.
const json* findings_data(const json& findings, const std::string& family);

// Adds one family's results context to the context of a merged file: the first family's context is
// the base, a later family adds its own section (context.<family>, e.g. its ranks), and an OpenBLAS
// core type the base did not examine (host.blas.coretype.examined: false, a family that does not use
// OpenBLAS) is replaced by that of a family that did.
void merge_family_context(json& merged, const json& family_context, const std::string& family);

// {"schema", "schema_version", "generated_at", "suite", "runs", "context", "families", "records",
//  "comparisons", "findings"}; `runs`: how many runs of the families were asked for (gtb run --runs).
// A family binary writes this for its own records: no result of another family enters it.
json make_document(const json& context, const std::string& suite, const json& families,
                   const std::vector<Record>& records, const json& findings, int runs = 1);
// The driver's merge of several families (and runs) into one file, the one place where families meet:
// what the families entries declare they publish (families[].publishes, published.h) is read from
// their findings data: measured ceilings enter the context, records get their percent of them and
// of the published peak rates, then the document is made as above. A document none of
// whose families entries declares anything is read with published::legacy_declaration().
json make_merged_document(const json& context, const std::string& suite, const json& families,
                          const std::vector<Record>& records, const json& findings, int runs = 1);

// Structural checks the loader relies on (schema name and version, required fields, numeric values);
// throws std::runtime_error with a message naming the first problem.
void validate_document(const json& doc);
// Reads and validates a results file; throws std::runtime_error("<path>: <problem>").
json load_document(const std::string& path);
std::vector<Record> records_of(const json& doc);

// Writes text to path via a temp file in the same folder + fsync + rename: readers see the old file
// or the complete new one. Throws std::runtime_error on failure, leaving no temp file behind.
void write_file_atomic(const std::string& path, const std::string& text);
// Checks that a file can be created in path's folder (before a long run). Throws with the reason.
void check_writable(const std::string& path);

// Rejects NaN/inf anywhere in a document (they are never written).
bool all_numbers_finite(const json& j);

}  // namespace gtb
