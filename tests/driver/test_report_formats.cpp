// Tests of gtb report's three formats (one report, written as Markdown, text or JSON), and of the one
// rule for a single-value option given twice (the last one wins) on gtb report and gtb compare.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/blocks.h"
#include "harness/driver/common/render_verdict.h"
#include "harness/driver/report/render_report.h"

namespace gtb::report_formats_test {
namespace {

std::string fixture(const std::string& name) { return std::string(GTB_FIXTURE_DIR) + "/" + name; }
std::string results(const std::string& name) { return std::string(GTB_RESULTS_DIR) + "/" + name; }
bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
// Columns on a terminal: UTF-8 continuation bytes take none.
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

const char* kCpuFile = "gtb-cpu-AMD-EPYC-2vcpu-20261203-13.json";

// A command run in this process: its exit code and what it printed on stdout.
struct Ran {
  int rc;
  std::string out;
};
Ran run(int (*cmd)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  const int rc = cmd(int(argv.size()), argv.data());
  std::fflush(stdout);
  return {rc, testing::internal::GetCapturedStdout()};
}

const report::Report& cpu_report() {
  static const report::Report r = report::build_report(load_document(results(kCpuFile)), kCpuFile);
  return r;
}

const json* section(const json& j, const std::string& title) {
  for (const auto& s : j.at("sections"))
    if (s.at("title") == title) return &s;
  return nullptr;
}

TEST(ReportFormats, MarkdownIsTheReportsBlocksWritten) {
  const std::string md = report::to_markdown(cpu_report());
  EXPECT_EQ(md, report::render_markdown(load_document(results(kCpuFile)), kCpuFile));
  EXPECT_EQ(md.rfind("# gtb report: ", 0), 0u);
  EXPECT_TRUE(has(md, "\n## What ran\n\n| family | ok | skipped | failed | invalid |\n| --- | ---: |"));
}

TEST(ReportFormats, JsonHoldsTheSectionsAsData) {
  const json j = report::to_json(cpu_report());
  EXPECT_EQ(j.at("schema"), "gtb-report");
  EXPECT_EQ(j.at("version"), report::kReportJsonVersion);
  EXPECT_EQ(j.at("source"), kCpuFile);
  const json& first = j.at("sections").at(0);
  EXPECT_EQ(first.at("level"), 1);
  EXPECT_EQ(first.at("title").get<std::string>().rfind("gtb report: ", 0), 0u);
  // The machine table: rows of name and value.
  EXPECT_EQ(first.at("blocks").at(0).at("type"), "table");
  EXPECT_EQ(first.at("blocks").at(0).at("rows").at(0).at(0), "file");
  // What ran: its table's columns and one row per family, the cells as the Markdown shows them.
  const json* ran = section(j, "What ran");
  ASSERT_NE(ran, nullptr);
  EXPECT_EQ(ran->at("level"), 2);
  const json& table = ran->at("blocks").at(0);
  EXPECT_EQ(table.at("columns"), json({"family", "ok", "skipped", "failed", "invalid"}));
  EXPECT_FALSE(table.at("rows").empty());
  // The verdict is its own section, with the model's answer as data: the reference step predicted on
  // each backend.
  const json* verdict = section(j, "Verdict: where a training step's time goes on this machine");
  ASSERT_NE(verdict, nullptr);
  EXPECT_EQ(verdict->at("level"), 2);
  const json& advice = verdict->at("data");
  EXPECT_EQ(advice.at("schema"), "gtb-advice");
  EXPECT_FALSE(advice.at("predictions").empty());
  // Every paragraph, item and cell of the Markdown is in the JSON: nothing is rendered twice.
  std::size_t items = 0, tables = 0;
  for (const auto& s : j.at("sections"))
    for (const auto& b : s.at("blocks")) {
      if (b.at("type") == "list") items += b.at("items").size();
      tables += b.at("type") == "table";
    }
  std::size_t md_items = 0, md_tables = 0;
  for (const auto& b : cpu_report().blocks) {
    md_items += b.kind == report::Block::Kind::item;
    md_tables += b.kind == report::Block::Kind::table;
  }
  EXPECT_EQ(items, md_items);
  EXPECT_EQ(tables, md_tables);
  EXPECT_GT(items, 0u);
}

TEST(ReportFormats, TextIsForATerminal) {
  const std::string t = report::to_text(cpu_report());
  EXPECT_EQ(t.rfind("gtb report: ", 0), 0u);
  EXPECT_TRUE(has(t, "\nWhat ran\n--------\n\n"));
  // Tables in aligned columns, not Markdown's pipes.
  EXPECT_TRUE(has(t, "\n  family"));
  EXPECT_FALSE(has(t, "| family | ok |"));
  // Lines wrapped at 100 columns (table rows and list items' continuations are indented), the
  // verdict's included.
  std::istringstream lines(t);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  ", 0) != 0) {
      EXPECT_LE(columns(line), 100u) << line;
    }
}

// A text table of long cells fits a terminal: the wide columns narrowed (a column name wrapped at
// its words), every cell's words kept in order over its lines, rows of several lines set apart; a
// word longer than its column stands alone on its line.
TEST(ReportFormats, TextTablesWrapTheirCellsToFitATerminal) {
  blocks::Block t = blocks::make_block(blocks::Block::Kind::table, 0, "");
  const std::string long_cell = "none predicted: the loader bounds the step and this fix leaves the loader as it is, "
                                "measured here at its own step a little further on";
  t.head = {"cause", "share of the step", "fix", "predicted saving"};
  t.rows = {{"matmul: 11 GEMMs per micro-batch (forward and backward), fp32", "84%", "BF16 mixed precision", long_cell},
            {"loader", "6%", "More workers", "1.28 ms"},
            {"x", "1%", "a_word_far_longer_than_any_column_could_be_made_wide_in_a_terminal_of_a_hundred_columns", "-"}};
  const std::string text = blocks::to_text({t});
  std::istringstream lines(text);
  std::string words;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("a_word_far_longer") == std::string::npos) EXPECT_LE(columns(line), 100u) << line;
    words += line + " ";
  }
  EXPECT_EQ(text.rfind("  cause ", 0), 0u) << text;
  EXPECT_TRUE(has(text, "share")) << text;
  EXPECT_FALSE(has(text, "share of the step")) << "the column name wraps: " << text;
  EXPECT_TRUE(has(text, "\n\n  loader ")) << "a blank line before a row after a wrapped one: " << text;
  // Every word of the long cell is there, in order.
  std::istringstream cell(long_cell);
  std::size_t at = 0;
  for (std::string w; cell >> w;) {
    const std::size_t found = words.find(w, at);
    ASSERT_NE(found, std::string::npos) << w;
    at = found + w.size();
  }
}

// No Markdown syntax in a text report: no table rule, no bold, no "#" heading; the verdict's
// tables in aligned columns like the others.
void expect_no_markdown(const std::string& t) {
  EXPECT_FALSE(has(t, "| --- |")) << t;
  EXPECT_FALSE(has(t, "---: |")) << t;
  EXPECT_FALSE(has(t, "**")) << t;
  std::istringstream lines(t);
  for (std::string line; std::getline(lines, line);) EXPECT_NE(line.rfind('#', 0), 0u) << line;
}

TEST(ReportFormats, TheVerdictIsWrittenInEachFormat) {
  const json doc = load_document(results(kCpuFile));
  const std::string t = report::to_text(cpu_report());
  expect_no_markdown(t);
  EXPECT_TRUE(has(t, "\nVerdict: where a training step's time goes on this machine\n-----")) << t;
  EXPECT_TRUE(has(t, "\n  cause ")) << t;
  EXPECT_TRUE(has(t, "\nHow far to trust it: the model against the steps gtb measured\n\nEach step measured whole")) << t;
  EXPECT_TRUE(has(t, "\n  measured step ")) << t;
  // JSON: the verdict's paragraphs, tables and lists as data, no Markdown section.
  const json j = report::to_json(cpu_report());
  for (const auto& s : j.at("sections"))
    for (const auto& b : s.at("blocks")) EXPECT_NE(b.at("type"), "markdown") << s.at("title");
  const json* verdict = section(j, "Verdict: where a training step's time goes on this machine");
  ASSERT_NE(verdict, nullptr);
  const json* causes = nullptr;
  for (const auto& b : verdict->at("blocks"))
    if (b.at("type") == "table") causes = &b;
  ASSERT_NE(causes, nullptr) << verdict->dump(1);
  EXPECT_EQ(causes->at("columns"), json({"cause", "share of the step", "predicted", "fix", "predicted saving", "evidence"}));
  ASSERT_TRUE(causes->at("rows").is_array());
  ASSERT_FALSE(causes->at("rows").empty());
  for (const auto& row : causes->at("rows")) {
    ASSERT_TRUE(row.is_array());
    EXPECT_EQ(row.size(), 6u);
  }
  const json* trust = section(j, "How far to trust it: the model against the steps gtb measured");
  ASSERT_NE(trust, nullptr);
  EXPECT_EQ(trust->at("level"), 3);
  bool steps_table = false;
  for (const auto& b : trust->at("blocks"))
    steps_table = steps_table || (b.at("type") == "table" && b.at("columns").at(0) == "measured step" && !b.at("rows").empty());
  EXPECT_TRUE(steps_table) << trust->dump(1);
  EXPECT_NE(section(j, "What fixing it saved: predicted savings against the A/B steps gtb measured"), nullptr);
  // Markdown: the verdict's blocks, as the report has always written it.
  const std::string md = report::to_markdown(cpu_report());
  const std::string verdict_md = verdict::render_report_verdict(doc);
  EXPECT_EQ(verdict_md.rfind("\n## Verdict: where", 0), 0u) << verdict_md;
  EXPECT_TRUE(has(md, verdict_md));
  EXPECT_TRUE(has(verdict_md, "\n\n### How far to trust it"));
  EXPECT_TRUE(has(verdict_md, "| --- | ---: | ---: | --- | ---: | --- |"));
}

// With --diagnosis: the text has the diagnosis as gtb diagnose writes text, the JSON the diagnosis
// file as the section's data.
TEST(ReportFormats, TheDiagnosisIsWrittenInEachFormat) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gtb-report-diagnosis-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string d = (dir / "d.json").string(), synth = fixture("diagnose/results_synthetic_a100.json");
  ASSERT_EQ(run(driver::cmd_diagnose, {"diagnose", fixture("traces/a100-train-6steps.json.gz"), "--results", synth,
                                       "--format", "json", "--out", d})
                .rc,
            driver::kExitOk);
  const Ran text = run(driver::cmd_report, {"report", synth, "--diagnosis", d, "--format", "text"});
  const Ran as_json = run(driver::cmd_report, {"report", synth, "--diagnosis", d, "--format", "json"});
  const Ran md = run(driver::cmd_report, {"report", synth, "--diagnosis", d});
  fs::remove_all(dir);
  EXPECT_EQ(text.rc, driver::kExitOk);
  expect_no_markdown(text.out);
  EXPECT_TRUE(has(text.out, "\nDiagnosis\n---------\n\ngtb diagnose a100-train-6steps.json.gz: ")) << text.out;
  EXPECT_TRUE(has(md.out, "\n## Diagnosis of a100-train-6steps.json.gz: ")) << md.out;
  const json j = json::parse(as_json.out);
  const json* diagnosis = section(j, "Diagnosis");
  ASSERT_NE(diagnosis, nullptr);
  EXPECT_EQ(diagnosis->at("data").at("tool"), "gtb diagnose");
  EXPECT_TRUE(diagnosis->at("blocks").empty());
}

// A job's and a two-trace diff's diagnosis in a text report: as gtb diagnose --format text writes
// them, with no Markdown syntax, then the line that says where their figures come from.
TEST(ReportFormats, AJobsAndADiffsDiagnosisAreTextInATextReport) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gtb-report-job-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string job = (dir / "job.json").string(), diff = (dir / "diff.json").string();
  const std::string synth = fixture("diagnose/results_synthetic_a100.json"), tr = fixture("traces/ddp/");
  ASSERT_EQ(run(driver::cmd_diagnose, {"diagnose", tr + "job2", "--format", "json", "--out", job}).rc, driver::kExitOk);
  ASSERT_EQ(run(driver::cmd_diagnose, {"diagnose", "--diff", tr + "diff/base.json.gz", tr + "diff/slower-loader.json.gz",
                                       "--format", "json", "--out", diff})
                .rc,
            driver::kExitOk);
  const Ran job_text = run(driver::cmd_report, {"report", synth, "--diagnosis", job, "--format", "text"});
  const Ran diff_text = run(driver::cmd_report, {"report", synth, "--diagnosis", diff, "--format", "text"});
  fs::remove_all(dir);
  for (const Ran* r : {&job_text, &diff_text}) {
    EXPECT_EQ(r->rc, driver::kExitOk);
    expect_no_markdown(r->out);
    EXPECT_TRUE(has(r->out, "\nDiagnosis\n---------\n\n")) << r->out;
  }
  EXPECT_TRUE(has(job_text.out, "from `gtb diagnose` on each rank's trace")) << job_text.out;
  EXPECT_TRUE(has(diff_text.out, "comes from `gtb diagnose --diff`")) << diff_text.out;
}

TEST(ReportFormats, CommandWritesEachFormat) {
  const std::string file = results(kCpuFile);
  const Ran md = run(driver::cmd_report, {"report", file});
  const Ran as_md = run(driver::cmd_report, {"report", file, "--format", "markdown"});
  const Ran as_json = run(driver::cmd_report, {"report", file, "--format", "json"});
  const Ran as_text = run(driver::cmd_report, {"report", file, "--format", "text"});
  for (const Ran* r : {&md, &as_md, &as_json, &as_text}) EXPECT_EQ(r->rc, driver::kExitOk);
  EXPECT_TRUE(md.out == as_md.out) << "Markdown is not the default";
  EXPECT_EQ(md.out.rfind("# gtb report: ", 0), 0u);
  EXPECT_EQ(json::parse(as_json.out).at("schema"), "gtb-report");
  EXPECT_EQ(as_text.out.rfind("gtb report: ", 0), 0u);
  EXPECT_EQ(run(driver::cmd_report, {"report", file, "--format", "yaml"}).rc, driver::kExitBadInput);
}

TEST(ReportFormats, OutIsWrittenWholeOrNotAtAll) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gtb-report-formats-" + std::to_string(::getpid()));
  fs::create_directories(dir / "folder");
  const Ran ok = run(driver::cmd_report, {"report", results(kCpuFile), "--format", "json", "--out", (dir / "r.json").string()});
  EXPECT_EQ(ok.rc, driver::kExitOk);
  std::ifstream in(dir / "r.json");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(json::parse(ss.str()).at("schema"), "gtb-report");
  // Onto a folder: refused, and nothing is left beside it.
  const Ran bad = run(driver::cmd_report, {"report", results(kCpuFile), "--format", "json", "--out", (dir / "folder").string()});
  EXPECT_EQ(bad.rc, driver::kExitBadInput);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2u);  // r.json and folder
  fs::remove_all(dir);
}

// A single-value option given twice keeps the last one, on every command (common/cli11.h).
TEST(RepeatedOption, LastOneWinsOnReport) {
  const std::string file = results(kCpuFile);
  const Ran twice = run(driver::cmd_report, {"report", file, "--format", "json", "--format", "text"});
  EXPECT_EQ(twice.rc, driver::kExitOk);
  EXPECT_TRUE(twice.out == run(driver::cmd_report, {"report", file, "--format", "text"}).out)
      << "given twice, not as given once with the last";
}

TEST(RepeatedOption, LastOneWinsOnCompare) {
  const std::string base = fixture("gpu_base.json"), regressed = fixture("gpu_regressed.json");
  const Ran twice = run(driver::cmd_compare, {"compare", base, regressed, "--format", "text", "--format", "json",
                                              "--threshold", "50%", "--threshold", "20%"});
  const Ran once = run(driver::cmd_compare, {"compare", base, regressed, "--format", "json", "--threshold", "20%"});
  EXPECT_EQ(twice.rc, once.rc);
  EXPECT_TRUE(twice.out == once.out) << "given twice, not as given once with the last";
  EXPECT_EQ(json::parse(twice.out).at("schema"), "gtb-compare");
  // Each value is still checked: a refused one is refused wherever it stands.
  EXPECT_EQ(run(driver::cmd_compare, {"compare", base, regressed, "--threshold", "120%", "--threshold", "20%"}).rc,
            driver::kExitBadInput);
}

}  // namespace
}  // namespace gtb::report_formats_test
