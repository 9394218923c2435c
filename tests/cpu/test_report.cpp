// Tests of gtb report: findings in Markdown from results files, absent families said to be absent.
#include <gtest/gtest.h>

#include <sstream>

#include "harness/driver/report/render_report.h"
#include "harness/driver/common/render_summary.h"
#include "harness/driver/common/render_verdict.h"
#include "harness/document/findings.h"
#include "harness/document/results.h"

namespace gtb {
namespace {

std::string fixture(const std::string& name) { return std::string(GTB_FIXTURE_DIR) + "/" + name; }

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The committed results file was written before families declared what they publish. Merged again
// from its parts (the context without the merged ceilings, the records without their percentages),
// its records, comparisons, findings and context come out as they are in the file: without
// declarations (the legacy keys) and with the declarations the family binaries now write.
TEST(Merge, CommittedFileMergesAsItWasWritten) {
  const json file = load_document(std::string(GTB_RESULTS_DIR) + "/gtb-cpu-AMD-EPYC-2vcpu-20261201.json");
  json ctx = file.at("context");
  ASSERT_TRUE(ctx.contains("ceilings") && ctx.contains("ceilings_missing"));
  ctx.erase("ceilings");
  ctx.erase("ceilings_missing");
  std::vector<Record> recs = records_of(file);
  // The file's records as they are read: under their current ids (record_ids.h), otherwise as written.
  json expected = json::array();
  for (const Record& r : recs) expected.push_back(to_json(r));
  std::size_t renamed = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) renamed += expected[i].at("id") != file.at("records")[i].at("id");
  EXPECT_GT(renamed, 0u);  // the file predates a rename: the merge sees the new ids
  std::size_t percents = 0;
  for (auto& r : recs) percents += r.counters.erase("pct_of_ceiling") + r.counters.erase("pct_of_gemm_peak");
  ASSERT_GT(percents, 0u);  // the file has something to get back
  json declared = file.at("families");
  for (auto& f : declared) {
    if (f.at("name") == "ceilings") f["publishes"] = {{"ceilings", "ceilings"}, {"ceilings_missing", "ceilings_missing"}};
    if (f.at("name") == "gemm") f["publishes"] = {{"peaks", "best_rate"}};
  }
  for (const json& families : {file.at("families"), declared}) {
    const json doc = make_merged_document(ctx, file.at("suite").get<std::string>(), families, recs, file.at("findings"),
                                          file.at("runs").get<int>());
    EXPECT_EQ(doc.at("records"), expected);
    EXPECT_EQ(doc.at("comparisons"), file.at("comparisons"));
    EXPECT_EQ(doc.at("findings"), file.at("findings"));
    EXPECT_EQ(doc.at("context"), file.at("context"));
  }
  // Declarations that point elsewhere are followed: no percent of a peak nobody publishes.
  for (auto& f : declared)
    if (f.at("name") == "gemm") f["publishes"] = {{"peaks", "no_such_key"}};
  const json doc = make_merged_document(ctx, "quick", declared, recs, file.at("findings"));
  for (const auto& r : doc.at("records")) EXPECT_FALSE(r.value("counters", json::object()).contains("pct_of_gemm_peak"));
}

TEST(Summary, LabelsAndReasonsAreNeverCut) {
  // Two records whose names and parameters differ only past 40 characters, and a long skip reason:
  // a table that cuts them makes distinct records read the same.
  auto rec = [](const std::string& variant, const std::string& tail) {
    return json{{"family", "parallel"}, {"workload", "collective"}, {"variant", variant}, {"backend", "cpu"},
                {"params", {{"ranks", 2}, {"collective", "all_reduce"}, {"bytes", 1048576}, {"dtype", tail}}},
                {"options", json::object()}, {"status", "ok"}, {"value", 1.5}, {"unit", "GB/s"},
                {"stats", {{"median", 1e-3}, {"iqr", 1e-5}}}};
  };
  const std::string reason(150, 'r');
  json doc = {{"families", json::array()},
              {"records", {rec("mpi_with_a_long_variant_name_that_goes_on", "fp32_accumulate_one"),
                           rec("mpi_with_a_long_variant_name_that_goes_on", "fp32_accumulate_two"),
                           {{"family", "gemm"}, {"workload", "gemm"}, {"variant", "cublas"}, {"backend", "cuda"},
                            {"status", "skipped"}, {"status_detail", reason + " end"}}}}};
  std::ostringstream os;
  driver::print_summary(os, doc);
  const std::string out = os.str();
  EXPECT_TRUE(has(out, "parallel/collective/mpi_with_a_long_variant_name_that_goes_on/cpu")) << out;
  EXPECT_TRUE(has(out, "dtype=fp32_accumulate_one")) << out;
  EXPECT_TRUE(has(out, "dtype=fp32_accumulate_two")) << out;
  EXPECT_TRUE(has(out, reason + " end")) << out;
  EXPECT_FALSE(has(out, "~")) << out;
}

// The rows a text takes on a terminal of `columns` (a longer line wraps), counted by characters.
std::size_t screen_rows(const std::string& text, std::size_t columns) {
  std::size_t rows = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t chars = 0;
    for (unsigned char c : line) chars += (c & 0xC0) != 0x80;
    rows += chars == 0 ? 1 : (chars + columns - 1) / columns;
  }
  return rows;
}

// A results document as a long busy run leaves it: 9 families of 3 runs each, every family run
// with a warning (most of them only a change of speed, the others other processes' load, one of them
// also long), a family that failed with a long reason, thousands of records (skipped for 40 reasons,
// failed, invalid, suspect), 60 CPU vs GPU pairs and 3 ceilings not measured; the cost terms of the
// synthetic fixture, so that the verdict has causes and fixes.
json crowded_document() {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  auto reading = [](double all) {
    return json{{"threads", 2}, {"one_core_gmadd_per_s", 12}, {"all_cores_gmadd_per_s", all}, {"wake_us", 5},
                {"wake_max_us", 9}};
  };
  const std::vector<std::string> names = {"ceilings", "transfer", "vectorize", "gemm", "train",
                                          "transformer", "framework", "parallel", "pitfalls"};
  doc["families"] = json::array();
  for (int run = 1; run <= 3; ++run)
    for (std::size_t i = 0; i < names.size(); ++i) {
      json h = {{"seconds", 10}, {"busy", false}, {"warnings", json::array()},
                {"speed", {{"before", reading(24)}, {"after", reading(11 + double(i))}}}};
      if (i % 3 == 0) {
        h["busy"] = true;
        h["warnings"] = {"other processes used " + std::to_string(20 + 7 * int(i) + run) + "% of the CPUs (limit 10%)",
                         "the hypervisor took 9% of the CPU time (steal; limit 5%)" + std::string(i == 0 ? 120 : 0, '!')};
      }
      json f = {{"name", names[i]}, {"run", run}, {"status", "ok"}, {"exit_code", 0}, {"seconds", 31.5}, {"records", 400},
                {"health", h}};
      if (names[i] == "parallel" && run == 2)
        f.update({{"status", "failed"}, {"exit_code", -1},
                  {"error", "timed out after 600 s (last case started: parallel/collective/mpi/cpu/ranks=2," +
                                std::string(200, 'x') + ")"}});
      doc["families"].push_back(f);
    }
  for (int k = 0; k < 3000; ++k) {
    json r = {{"family", names[std::size_t(k) % names.size()]}, {"workload", "workload_" + std::to_string(k % 37)},
              {"variant", "a_variant_with_a_long_name_" + std::to_string(k % 11)}, {"backend", k % 2 ? "cuda" : "cpu"},
              {"params", {{"bytes", 1 << (k % 20)}, {"n", k}}}, {"options", json::object()}};
    if (k % 2) {
      r.update({{"status", "skipped"}, {"status_detail", "no usable GPU, reason " + std::to_string(k % 40)}});
    } else if (k % 250 == 0) {
      r.update({{"status", "invalid"}, {"status_detail", "output differs from the float64 reference by " + std::string(90, '9')}});
    } else if (k % 500 == 2) {
      r.update({{"status", "failed"}, {"status_detail", "planted failure"}});
    } else {
      r.update({{"status", "ok"}, {"value", 1.5 + k}, {"unit", "GB/s"}, {"stats", {{"median", 1e-3}, {"iqr", 1e-5}}}});
      if (k % 100 == 4) r["suspect"] = "planted: faster than the machine can be";
    }
    doc["records"].push_back(r);
  }
  doc["comparisons"] = json::array();
  for (int k = 0; k < 60; ++k)
    doc["comparisons"].push_back({{"family", "gemm"}, {"workload", "gemm"}, {"params", {{"n", k}}},
                                  {"gpu_over_cpu", 0.5 + k}, {"winner", k ? "cuda" : "cpu"}, {"cuda", {{"variant", "cublas"}}}});
  doc["context"]["ceilings_missing"] = {{"host_copy_gbps", "a host array of 3072 MiB does not fit " + std::string(120, 'm')},
                                        {"host_triad_gbps", "a host array of 3072 MiB does not fit"},
                                        {"device_copy_gbps", "planted: not measured"}};
  return doc;
}

// The end of a run fits one screen (50 lines of 100 columns) on a document of many records and many
// warnings, with room left for the paths printed after it (the results file, and the main job's
// findings report and figures): the families, the warnings grouped, the records counted, the
// verdict's headline and the table's file named. The whole table is print_summary's, not the screen's.
TEST(Summary, TheEndOfARunFitsOneScreen) {
  const json doc = crowded_document();
  const std::string table = "results/local/gtb-a-host-name-20261202T101010Z-summary.txt";
  std::ostringstream os;
  driver::print_short_summary(os, doc, table);
  const std::string out = os.str();
  EXPECT_LE(screen_rows(out, 100), 50u - 5u) << out;
  // Each family once, a family of several runs in one line that says so, the failed run's reason cut.
  for (const std::string f : {"ceilings", "transfer", "vectorize", "gemm", "train", "transformer", "framework",
                              "parallel", "pitfalls"})
    EXPECT_TRUE(has(out, "\n  " + f + " ")) << f << "\n" << out;
  EXPECT_TRUE(has(out, "  parallel      mixed    1200 records    94.5 s  3 runs, 2 ok, 1 failed; run 2: timed out after")) << out;
  EXPECT_TRUE(has(out, "1200 records")) << out;
  // The warnings: the runs whose speed alone moved in one line (the report's grouping), the rest as
  // many as the screen has room for, and how many more and where.
  EXPECT_TRUE(has(out, "WARNING: measured on a busy machine")) << out;
  EXPECT_TRUE(has(out, "family runs ran, and nothing else was over a limit: transfer (runs 1, 2, 3)")) << out;
  EXPECT_TRUE(has(out, " more: in the table, and in gtb report's Measurement health")) << out;
  EXPECT_TRUE(has(out, "WARNING: 3 ceilings not measured")) << out;
  // The records and the pairs counted.
  EXPECT_TRUE(has(out, "Records: 3116: ")) << out;
  EXPECT_TRUE(has(out, "30 of them suspect), 1501 skipped, 12 invalid, 6 failed\n")) << out;
  EXPECT_TRUE(has(out, "CPU vs GPU: 60 problems measured on both, the GPU better in 59")) << out;
  // The verdict's headline, then the table's file, last.
  EXPECT_TRUE(has(out, "\nVerdict for the reference step (predicted): MLP of width 1024")) << out;
  EXPECT_TRUE(has(out, "    1. ")) << out;
  EXPECT_TRUE(has(out, "    3. ")) << out;
  EXPECT_TRUE(has(out, "    largest saving: ")) << out;
  EXPECT_GT(out.rfind("\ntable: " + table + " ("), out.find("\nVerdict")) << out;
  EXPECT_FALSE(has(out, "\nrecord ")) << "the per-record table is the file's\n" << out;

  // The whole table keeps every record and every warning.
  std::ostringstream whole;
  driver::print_summary(whole, doc);
  EXPECT_TRUE(has(whole.str(), "a_variant_with_a_long_name_10/cpu")) << "a record left out of the table";
  EXPECT_TRUE(has(whole.str(), "  framework (run 3): other processes used")) << whole.str();
  EXPECT_TRUE(has(whole.str(), "  75 records skipped: no usable GPU, reason 39\n")) << whole.str();
  EXPECT_TRUE(has(whole.str(), "\n  transformer #1 ok ")) << whole.str();
  EXPECT_GT(screen_rows(whole.str(), 100), 1000u);
}

// A quiet run's end has no warning and nothing cut; a file without cost terms says so in a line.
TEST(Summary, AQuietRunsEndSaysAllAndNamesNoMissingFile) {
  json doc = load_document(fixture("cost/old_no_terms.json"));
  std::ostringstream os;
  driver::print_short_summary(os, doc, "");
  const std::string out = os.str();
  EXPECT_FALSE(has(out, "WARNING")) << out;
  EXPECT_FALSE(has(out, "table:")) << out;
  EXPECT_FALSE(has(out, "...")) << out;
  EXPECT_TRUE(has(out, "Verdict: none (no family of this file published cost terms")) << out;
  EXPECT_TRUE(has(out, "\nFamilies\n")) << out;
}

// An idle run's end says it read the machine and found it idle: without the line, a screen with no
// warning could be a run that read nothing.
TEST(Summary, AnIdleRunsEndSaysTheMachineWasIdle) {
  json doc = load_document(fixture("cost/old_no_terms.json"));
  ASSERT_FALSE(doc["families"].empty());
  for (auto& f : doc["families"]) f["health"] = {{"busy", false}, {"warnings", json::array()}};
  std::ostringstream os;
  driver::print_short_summary(os, doc, "");
  EXPECT_TRUE(has(os.str(), "\nMeasurement health: no family saw other load, steal or throttling above the limits\n"))
      << os.str();
  EXPECT_FALSE(has(os.str(), "WARNING")) << os.str();
}

TEST(Summary, TheTablesFileSitsBesideTheResults) {
  EXPECT_EQ(driver::summary_path("results/local/gtb-h-1.json"), "results/local/gtb-h-1-summary.txt");
  EXPECT_EQ(driver::summary_path("r"), "r-summary.txt");
  EXPECT_EQ(driver::summary_path("a.json.d/r.out"), "a.json.d/r.out-summary.txt");
  EXPECT_EQ(driver::summary_path(".json"), ".json-summary.txt");
}

// The verdict's headline is the report's verdict in a few lines: per backend the same causes in the
// same order (the first three of its table), and the fix with the largest saving; a backend that
// cannot say, one line.
TEST(Summary, TheHeadlineIsTheVerdictsFirstLines) {
  const json doc = load_document(fixture("cost/cost_synthetic.json"));
  const auto lines = verdict::render_headline(doc);
  const std::string md = verdict::render_report_verdict(doc);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("Verdict for the reference step (predicted): MLP of width 1024", 0), 0u)
      << lines[0];
  int backends = 0;
  for (const std::string backend : {"CPU", "GPU"}) {
    const auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind("  " + backend + ": ", 0) == 0; });
    ASSERT_NE(at, lines.end()) << backend;
    ++backends;
    if (has(*at, "cannot say")) {
      EXPECT_TRUE(has(md, "**" + backend + ": cannot say**")) << md;
      continue;
    }
    // The causes table of this backend in the report: its rows' names, in order.
    const auto from = md.find("**" + backend + ": ");
    ASSERT_NE(from, std::string::npos) << md;
    std::vector<std::string> rows;
    for (auto p = md.find("\n| ", md.find("| --- |", from)); p != std::string::npos && rows.size() < 3; p = md.find("\n| ", p + 1)) {
      if (md.compare(p, 4, "\n| -") == 0 || p > md.find("\n\n", md.find("| --- |", from))) break;
      rows.push_back(md.substr(p + 3, md.find(':', p) - p - 3));
    }
    ASSERT_FALSE(rows.empty()) << md;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::string& l = *(at + 1 + std::ptrdiff_t(k));
      EXPECT_EQ(l.rfind("    " + std::to_string(k + 1) + ". " + rows[k] + " ", 0), 0u) << l << "\n" << md;
    }
    EXPECT_EQ((at + 1 + std::ptrdiff_t(rows.size()))->rfind("    largest saving: ", 0), 0u) << *(at + 1 + std::ptrdiff_t(rows.size()));
  }
  EXPECT_EQ(backends, 2);
  const auto none = verdict::render_headline(load_document(fixture("cost/old_no_terms.json")));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].rfind("Verdict: none", 0), 0u);
}

TEST(Report, GpuFixtureHasEveryFindingWithItsNumbers) {
  const std::string md = report::render_markdown(load_document(fixture("gpu_base.json")), "gpu_base.json");
  EXPECT_TRUE(has(md, "# gtb report: NVIDIA H200 (synthetic) on synthetic-fixture"));
  EXPECT_TRUE(has(md, "Synthetic data"));
  // Pinned vs pageable at the largest common size: 52/20 and 51/14 GB/s by construction, moved a
  // little by the fixture's run-to-run drift.
  EXPECT_TRUE(has(md, "| copy_h2d | device | 256 MiB |")) << md;
  EXPECT_TRUE(has(md, "| 2.5") || has(md, "| 2.6")) << md;
  EXPECT_TRUE(has(md, "Transfers (transfer)")) << md;
  EXPECT_TRUE(has(md, "Latency, peak bandwidth and half-peak size")) << md;
  EXPECT_TRUE(has(md, "Loader threads needed")) << md;
  EXPECT_TRUE(has(md, "Launch-bound threshold")) << md;
  EXPECT_TRUE(has(md, "CUDA Graph over eager launches")) << md;
  EXPECT_TRUE(has(md, "GPU/CPU crossover batch")) << md;
  EXPECT_TRUE(has(md, "| cuda | fp16")) << md;
  EXPECT_TRUE(has(md, "of datasheet peak")) << md;
  EXPECT_TRUE(has(md, "% of device_copy_gbps")) << md;
  EXPECT_TRUE(has(md, "Figures (`gtb plot`): `transfer_bandwidth`")) << md;
  // Families in the order their findings ask for: ceilings, transfer, vectorize, gemm, train.
  EXPECT_LT(md.find("(ceilings)"), md.find("(transfer)"));
  EXPECT_LT(md.find("(transfer)"), md.find("(vectorize)"));
  EXPECT_LT(md.find("(gemm)"), md.find("(train)"));
}

TEST(Report, CpuOnlyFileSaysWhatIsMissing) {
  const std::string md = report::render_markdown(load_document(fixture("cpu_b.json")), "cpu_b.json");
  EXPECT_TRUE(has(md, "no GPU"));
  EXPECT_TRUE(has(md, "synthetic fixture without a GPU"));  // why GPU records have no number
  EXPECT_TRUE(has(md, "Not measured"));
  EXPECT_FALSE(has(md, "pinned speedup |")) << md;  // no pinned/pageable table without GPU copies
}

// The validation's summary says, to one decimal, whether each error is within its target (a median of
// 15.4% must not read as the 15% target met), and the verdict follows the numbers.
TEST(Report, ValidationSaysWhetherTheTargetIsMet) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  const std::string md = report::render_markdown(doc, "cost_synthetic.json");
  const auto at = md.find("scored steps the median error is **");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string line = md.substr(at, md.find('\n', at) - at);
  EXPECT_NE(line.find(".") , std::string::npos) << line;
  const bool ok = has(line, "both within the target."), worst = has(line, "the worst is over its target."),
             median = has(line, "the median is over its target."), both = has(line, "both are over the target.");
  EXPECT_EQ(int(ok) + int(worst) + int(median) + int(both), 1) << line;
  // Every measured step made ten times slower: every error is then near -90%, both over the target.
  for (auto& [fam, entry] : doc["findings"].items())
    if (entry.is_object() && entry.contains("steps"))
      for (auto& st : entry["steps"]) st["seconds"] = st["seconds"].get<double>() * 10;
  const std::string slow = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_TRUE(has(slow, "both are over the target.")) << slow.substr(slow.find("scored steps"), 300);
  // ... and all of them on one side: under-predicted, the side count says so and misses its target.
  const auto n_at = slow.find(" steps 0 are predicted above the measurement and ");
  ASSERT_NE(n_at, std::string::npos) << slow.substr(slow.find("scored steps"), 500);
  EXPECT_TRUE(has(slow.substr(n_at, 200), "below (target: no more than two thirds on one side): over it.")) << slow.substr(n_at, 200);
  // Half of them ten times faster instead (predicted above), half ten times slower: within it.
  int i = 0;
  for (auto& [fam, entry] : doc["findings"].items())
    if (entry.is_object() && entry.contains("steps"))
      for (auto& st : entry["steps"]) st["seconds"] = st["seconds"].get<double>() * (i++ % 2 ? 1.0 : 0.01);
  const std::string mixed = report::render_markdown(doc, "cost_synthetic.json");
  const auto m_at = mixed.find("scored steps the median error is **");
  const std::string mline = mixed.substr(m_at, mixed.find('\n', m_at) - m_at);
  EXPECT_TRUE(has(mline, "(target: no more than two thirds on one side): within the target.")) << mline;
}

// A step whose record is flagged suspect stays in the table, marked, and leaves the scored count.
TEST(Report, AnUnsteadyStepIsShownButNotScored) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  auto scored = [](const std::string& md) {
    const auto at = md.find("Over ");
    return at == std::string::npos ? -1 : std::atoi(md.c_str() + at + 5);
  };
  const std::string before = report::render_markdown(doc, "cost_synthetic.json");
  const int n = scored(before);
  ASSERT_GT(n, 0) << before;
  EXPECT_FALSE(has(before, "(not scored)"));
  // A measured step of the fixture whose record the file holds and whose row the table shows.
  std::string rec;
  for (auto& r : doc["records"]) {
    const std::string id = r.value("id", std::string());
    if (rec.empty() && id.rfind("train/precision/", 0) == 0 && has(before, "| " + id + " | cuda |")) {
      r["suspect"] = "the samples spread over 80% of their median";
      rec = id;
    }
  }
  ASSERT_FALSE(rec.empty()) << before;
  const std::string after = report::render_markdown(doc, "cost_synthetic.json");
  const auto row = after.find("| " + rec + " | cuda |");
  ASSERT_NE(row, std::string::npos) << after;
  EXPECT_TRUE(has(after.substr(row, after.find('\n', row) - row), "% (not scored) |")) << after.substr(row, 200);
  EXPECT_TRUE(has(after, "- 1 measured step is shown but not scored: the step's own samples are not a steady figure"))
      << after;
  if (n > 1)
    EXPECT_EQ(scored(after), n - 1);
  else
    EXPECT_FALSE(has(after, "scored steps the median error")) << after;
}

// Beside the count of steps on each side, the report counts the errors beyond the noise of the step's
// own median: steady samples (no noise) leave every error beyond it; repetitions that met the machine
// at two speeds put every error inside it.
TEST(Report, ErrorsBeyondTheStepsOwnNoiseAreCounted) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  auto beyond = [](const std::string& md) {
    const std::string key = "runs they came in): ";
    const auto at = md.find(key);
    if (at == std::string::npos) return std::pair<int, int>{-1, -1};
    const char* p = md.c_str() + at + key.size();
    char* end = nullptr;
    const int above = int(std::strtol(p, &end, 10));
    const auto below_at = md.find(" above and ", at);
    return std::pair<int, int>{above, std::atoi(md.c_str() + below_at + 11)};
  };
  auto sides = [](const std::string& md) {
    const auto at = md.find(" steps ", md.find("Of the "));
    const int over = std::atoi(md.c_str() + at + 7);
    const auto und = md.find(" are predicted above the measurement and ", at);
    return std::pair<int, int>{over, std::atoi(md.c_str() + und + 41)};
  };
  // Every record: samples equal to its median (no noise at all).
  for (auto& r : doc["records"])
    if (r.value("status", "") == "ok" && r.contains("stats")) {
      const double m = r["stats"]["median"].get<double>();
      r["samples_s"] = std::vector<double>(20, m);
      r.erase("sample_groups");
    }
  const std::string steady = report::render_markdown(doc, "cost_synthetic.json");
  const auto [over, under] = sides(steady);
  ASSERT_GT(over + under, 0) << steady;
  // Steps whose record keeps no samples cannot say (the fixture has one): the sentence says of how many.
  int known = over + under;
  if (const auto at = steady.find(" whose records can say)"); at != std::string::npos)
    known = std::atoi(steady.c_str() + steady.rfind("(of the ", at) + 8);
  ASSERT_GT(known, 0) << steady;
  const auto [above, below] = beyond(steady);
  EXPECT_EQ(above + below, known) << steady;  // no noise: every error is beyond it
  EXPECT_LE(above, over);
  EXPECT_LE(below, under);
  // Four repetitions each: two at the median, two a thousand times slower (a noise of ~100%).
  for (auto& r : doc["records"])
    if (r.value("status", "") == "ok" && r.contains("stats")) {
      const double m = r["stats"]["median"].get<double>();
      std::vector<double> v;
      for (double level : {1.0, 1000.0, 1.0, 1000.0})
        for (int i = 0; i < 5; ++i) v.push_back(m * level);
      r["samples_s"] = v;
      r["sample_groups"] = {5, 5, 5, 5};
    }
  const std::string apart = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_EQ(sides(apart), std::make_pair(over, under)) << apart;  // the errors themselves: the steps' seconds
  EXPECT_EQ(beyond(apart), std::make_pair(0, 0)) << apart;
}

// The machine's speed read before and after each family: the health section gives its range; where
// the slowest all-core reading is under 85% of the fastest, the validation says so beside its errors.
TEST(Report, AMachineWhoseSpeedChangedIsSaidBesideTheValidation) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  auto reading = [](double one, double all, double wake) {
    return json{{"threads", 2}, {"one_core_gmadd_per_s", one}, {"all_cores_gmadd_per_s", all}, {"wake_us", wake},
                {"wake_max_us", 10 * wake}};
  };
  const std::string none = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_FALSE(has(none, "fixed multiply-add loop")) << "no readings, nothing said";
  doc["families"] = json::array();
  doc["families"].push_back({{"name", "gemm"}, {"health", {{"seconds", 1}, {"busy", false}, {"warnings", json::array()},
                                                           {"speed", {{"before", reading(14, 28, 5)}, {"after", reading(15, 27, 6)}}}}}});
  doc["families"].push_back({{"name", "train"}, {"health", {{"seconds", 1}, {"busy", false}, {"warnings", json::array()},
                                                            {"speed", {{"before", reading(14, 26, 7)}, {"after", reading(13, 25, 9)}}}}}});
  const std::string steady = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_TRUE(has(steady, "ran at 13 to 15 G multiply-adds/s on one core and 25 to 28 on all cores")) << steady;
  EXPECT_FALSE(has(steady, "speed changed during"));
  doc["families"][1]["health"]["speed"]["after"] = reading(7, 14, 3000);  // half the speed, a slow wake
  const std::string drift = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_TRUE(has(drift, "**The machine's speed changed during the run**: its slowest all-core reading was 50% of its "
                         "fastest"))
      << drift;
  const auto v = drift.find("### How far to trust it");
  ASSERT_NE(v, std::string::npos);
  EXPECT_TRUE(has(drift.substr(v, 1500), "The machine's speed changed during this run")) << drift.substr(v, 1500);
  EXPECT_FALSE(has(drift.substr(v, 1500), "shared one core's cache")) << "no cache reading, nothing said of it";
  doc["families"][1]["health"]["speed"]["after"]["cache_scaling"] = 0.5;
  doc["families"][1]["health"]["speed"]["after"]["cache_sweep_bytes"] = 629145.6;
  doc["families"][0]["health"]["speed"]["after"]["cache_scaling"] = 0.98;
  doc["families"][0]["health"]["speed"]["after"]["cache_sweep_bytes"] = 629145.6;
  const std::string shared = report::render_markdown(doc, "cost_synthetic.json");
  const auto sv = shared.find("### How far to trust it");
  ASSERT_NE(sv, std::string::npos);
  EXPECT_TRUE(has(shared.substr(sv, 1500), "of its fastest (Measurement health), and in 1 of 2 readings its CPUs shared "
                                           "one core's cache."))
      << shared.substr(sv, 1500);
  EXPECT_TRUE(has(shared, "**the CPUs shared one core's cache** in 1 of 2 readings")) << shared;
  // Four readings, 5, 6, 7 and 3000 us: the middle one is the lower of 6 and 7 (a figure one reading gave).
  EXPECT_TRUE(has(drift, "a thread asleep took 6 us to wake (median; the slowest 30 ms)")) << drift;
}

// Family runs whose only warning is a change of speed: a line each while there are three or fewer,
// one line naming them (family and runs) when there are more; another warning keeps its own line.
TEST(Report, ManyFamilyRunsWhoseSpeedMovedShareOneLine) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  auto reading = [](double all) {
    return json{{"threads", 2}, {"one_core_gmadd_per_s", 12}, {"all_cores_gmadd_per_s", all}, {"wake_us", 5},
                {"wake_max_us", 9}};
  };
  auto family = [&](const std::string& name, int run, double after) {
    return json{{"name", name}, {"run", run},
                {"health", {{"seconds", 1}, {"busy", false}, {"warnings", json::array()},
                            {"speed", {{"before", reading(24)}, {"after", reading(after)}}}}}};
  };
  doc["runs"] = 3;
  doc["families"] = json::array({family("gemm", 1, 12), family("train", 1, 24), family("gemm", 2, 13), family("train", 2, 12)});
  std::string md = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_TRUE(has(md, "- gemm (run 1): the machine's speed changed while it ran: all cores 24 -> 12 G multiply-adds/s")) << md;
  EXPECT_TRUE(has(md, "- train (run 2): the machine's speed changed while it ran")) << md;
  EXPECT_FALSE(has(md, "family runs ran")) << md;
  doc["families"].push_back(family("pitfalls", 3, 12));
  doc["families"].push_back(family("gemm", 3, 24));
  doc["families"][1]["health"]["busy"] = true;
  doc["families"][1]["health"]["warnings"] = {"the hypervisor took 8% of the CPU time (steal; limit 5%)"};
  md = report::render_markdown(doc, "cost_synthetic.json");
  EXPECT_TRUE(has(md, "- the machine's speed changed while 4 of 6 family runs ran, and nothing else was over a limit: "
                      "gemm (runs 1, 2), train (run 2), pitfalls (run 3)"))
      << md;
  EXPECT_TRUE(has(md, "- train (run 1): the hypervisor took 8% of the CPU time (steal; limit 5%)")) << md;
  EXPECT_FALSE(has(md, "- gemm (run 1):")) << md;
}

// A file of several runs keeps each run's findings: the report validates the model within each run
// too (that run's terms against its own steps), run by run, with the medians over the runs.
TEST(Report, SeveralRunsAreValidatedWithinEachRun) {
  json doc = load_document(fixture("cost/cost_synthetic.json"));
  EXPECT_FALSE(has(report::render_markdown(doc, "x.json"), "Within each run")) << "a one-run file";
  json runs = json::array();
  for (int k = 1; k <= 3; ++k) {
    json f = doc["findings"];
    // Run 2's steps ten times slower: only its own validation says so.
    if (k == 2)
      for (auto& [fam, entry] : f.items())
        if (entry.is_object() && entry.contains("steps"))
          for (auto& st : entry["steps"]) st["seconds"] = st["seconds"].get<double>() * 10;
    runs.push_back({{"run", k}, {"findings", f}});
  }
  doc["run_findings"] = runs;
  const std::string md = report::render_markdown(doc, "x.json");
  const auto at = md.find("Within each run (that run's terms against its own steps):");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string line = md.substr(at, md.find('\n', at) - at);
  EXPECT_TRUE(has(line, " run 1, ") && has(line, " run 2, ") && has(line, " run 3, ")) << line;
  EXPECT_TRUE(has(line, "over the runs, the median of their medians is **")) << line;
  // Runs 1 and 3 have the file's own findings: their figures are the pooled ones; run 2's differ.
  const auto p = md.find("the median error is **") + std::string("the median error is **").size();
  const std::string pooled = md.substr(p, md.find("**", p) - p);
  auto run_text = [&](const char* r) {
    const auto b = line.find(r);
    return line.substr(b, line.find(';', b) - b);
  };
  EXPECT_TRUE(has(run_text(" run 1, "), "median **" + pooled + "**")) << line;
  EXPECT_TRUE(has(run_text(" run 3, "), "median **" + pooled + "**")) << line;
  EXPECT_FALSE(has(run_text(" run 2, "), "median **" + pooled + "**")) << line;
  // A single run's findings are no per-run validation.
  doc["run_findings"] = json::array({runs[0]});
  EXPECT_FALSE(has(report::render_markdown(doc, "x.json"), "Within each run"));
}

// Any family, known to no code of the report, renders from its typed findings alone.
// The CPU row says which thread pool OpenBLAS ran on, and warns when it had a pool of its own.
TEST(Report, CpuRowSaysWhichThreadPoolTheGemmsRanOn) {
  json doc = load_document(fixture("cpu_b.json"));
  const auto cpu_row = [](const std::string& md) {
    const auto at = md.find("| CPU |");
    return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
  };
  doc["context"]["host"]["blas"]["threading"] = "openmp";
  EXPECT_TRUE(has(cpu_row(report::render_markdown(doc, "x.json")), "OpenBLAS on the same OpenMP threads"));
  doc["context"]["host"]["blas"]["threading"] = "pthreads";
  const std::string row = cpu_row(report::render_markdown(doc, "x.json"));
  EXPECT_TRUE(has(row, "a thread pool of its own")) << row;
  EXPECT_FALSE(has(row, "same OpenMP threads")) << row;
  doc["context"]["host"]["blas"].erase("threading");  // files from before the field: nothing said
  EXPECT_FALSE(has(cpu_row(report::render_markdown(doc, "x.json")), "OpenBLAS")) << cpu_row(report::render_markdown(doc, "x.json"));
}

// NVIDIA_TF32_OVERRIDE, as the context found it, is named in the machine table; nothing without it.
TEST(Report, MachineTableNamesTheTf32Override) {
  json doc = load_document(fixture("gpu_base.json"));
  const auto env_row = [](const std::string& md) {
    const auto at = md.find("| environment |");
    return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
  };
  EXPECT_EQ(env_row(report::render_markdown(doc, "x.json")), "");
  doc["context"]["environment"] = json::object();
  EXPECT_EQ(env_row(report::render_markdown(doc, "x.json")), "");
  doc["context"]["environment"]["NVIDIA_TF32_OVERRIDE"] = "0";
  const std::string row = env_row(report::render_markdown(doc, "x.json"));
  EXPECT_TRUE(has(row, "`NVIDIA_TF32_OVERRIDE=0`")) << row;
}

TEST(Report, RendersAnyTypedFamilyGenerically) {
  json doc = load_document(fixture("gpu_base.json"));
  findings::Family f;
  f.title = "Made-up family";
  f.order = 1;
  auto& s = f.section("s", "What it found");
  s.say("A paragraph.");
  s.line("l", "a bandwidth", 12.34, "GB/s", findings::Hint::bandwidth, "at 1 GiB");
  auto& t = s.table("t", {{"size", "", findings::Hint::bytes}, {"gain", "", findings::Hint::ratio}});
  t.rows.push_back({json(130000), json(1.5)});
  t.rows.push_back({json(nullptr), json("never")});
  s.figure("madeup_fig", "A figure").x = {"params.n"};
  auto& p = f.section("p", "A guess");
  p.projected = true;
  p.not_measured = "no input was given";
  doc["findings"]["madeup"] = findings::to_json(f);
  doc["families"].push_back({{"name", "madeup"}, {"status", "ok"}});
  const std::string md = report::render_markdown(doc, "x.json");
  EXPECT_TRUE(has(md, "## Made-up family (madeup)")) << md;
  EXPECT_TRUE(has(md, "- a bandwidth: 12.3 GB/s (at 1 GiB)")) << md;
  EXPECT_TRUE(has(md, "| 127 KiB | 1.50x |")) << md;
  EXPECT_TRUE(has(md, "| - | never |")) << md;
  EXPECT_TRUE(has(md, "`madeup_fig`")) << md;
  EXPECT_TRUE(has(md, "### A guess (projected, not measured)")) << md;
  EXPECT_TRUE(has(md, "Not measured: no input was given.")) << md;
  EXPECT_LT(md.find("(madeup)"), md.find("(ceilings)"));  // order 1 comes first
}

// A machine without a GPU: the driver's error once (the machine table), one line per cause with what
// it skipped in each family, and the family sections pointing there instead of repeating it.
TEST(Report, RepeatedReasonsCollapseToOneLinePerCause) {
  const std::string path = std::string(GTB_RESULTS_DIR) + "/gtb-cpu-AMD-EPYC-2vcpu-20261201.json";
  const std::string md = report::render_markdown(load_document(path), "r.json");
  auto count = [&md](const std::string& what) {
    std::size_t n = 0;
    for (auto at = md.find(what); at != std::string::npos; at = md.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("cudaErrorInsufficientDriver"), 1u) << md;
  EXPECT_TRUE(has(md, "- **376** skipped: no usable GPU: the error in the GPU row above (every GPU record): gemm 160, transfer 82"))
      << md;
  EXPECT_GE(count("no usable GPU, see [What ran](#what-ran)"), 5u) << md;
  EXPECT_EQ(count("(not measured)"), 0u) << md;  // no "- label: - (not measured)" line by line
  EXPECT_EQ(count("| not measured |"), 0u) << md;
  EXPECT_TRUE(has(md, "Not measured: GPU float4 over scalar kernel, GPU one kernel over a launch per step")) << md;
}

// Rows and lines with no number are named in one line; a row's note stays with it, and rows that share
// a note are named together; a row with a number stays in the table.
TEST(Report, RowsAndLinesWithoutANumberAreNamedTogether) {
  json doc = load_document(fixture("gpu_base.json"));
  findings::Family f;
  f.title = "Made-up family";
  auto& s = f.section("s", "Found");
  s.line("a", "first gain", nullptr, "", findings::Hint::ratio, "not measured");
  s.line("b", "second gain", nullptr, "", findings::Hint::ratio, "needs a GPU");
  s.line("c", "third gain", 2.0, "", findings::Hint::ratio);
  auto& t = s.table("t", {{"what"}, {"rate", "GB/s", findings::Hint::bandwidth}, {"note"}});
  t.rows.push_back({json("row one"), json(nullptr), json("no fit")});
  t.rows.push_back({json("row two"), json(nullptr), json("no fit")});
  t.rows.push_back({json("row three"), json(5.0), json("good fit")});
  doc["findings"]["madeup"] = findings::to_json(f);
  doc["families"].push_back({{"name", "madeup"}, {"status", "ok"}});
  const std::string md = report::render_markdown(doc, "x.json");
  EXPECT_TRUE(has(md, "- third gain: 2.00x")) << md;
  EXPECT_FALSE(has(md, "- first gain")) << md;
  EXPECT_TRUE(has(md, "| row three | 5 GB/s | good fit |")) << md;
  EXPECT_FALSE(has(md, "| row one |")) << md;
  EXPECT_TRUE(has(md, "Not measured: first gain; second gain (needs a GPU); row one, row two (no fit).")) << md;
}

TEST(Report, OlderFindingsAreShownAsRecorded) {
  // A file before typed findings (schema 1 and 2) keeps its raw numbers readable.
  const std::string md = report::render_markdown(load_document(fixture("cpu_a.json")), "cpu_a.json");
  EXPECT_TRUE(has(md, "## Family: transfer")) << md;
  EXPECT_TRUE(has(md, "--gtb_findings_from")) << md;
  EXPECT_TRUE(has(md, "\"copy_model\"")) << md;
}

TEST(Report, ToleratesOddFindings) {
  json doc = load_document(fixture("gpu_base.json"));
  // Findings of another shape (a future version, a hand edit) must not crash the report.
  doc["findings"]["transfer"]["sections"][0]["tables"][0]["rows"] = json::array({json::array({1})});
  doc["findings"]["train"]["sections"] = 3;
  doc["findings"]["vectorize"] = "text";
  doc["comparisons"] = json::object();
  doc["findings"]["newfamily"] = {{"k", 1}};
  std::string md;
  EXPECT_NO_THROW(md = report::render_markdown(doc, "odd.json"));
  EXPECT_TRUE(has(md, "Could not read the `transfer` findings")) << md;
  EXPECT_TRUE(has(md, "Matrix multiply (gemm)")) << md;
}

}  // namespace
}  // namespace gtb
