// The framework family: the interpreter check (bad input), the ids of gtb's same work, and the
// findings computed from records (the step ratio, the crossover, the workers that feed a step).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "bench/framework/findings.h"
#include "bench/framework/worker.h"
#include "tests/cpu/framework_record.h"
#include "harness/document/stats.h"

namespace {

namespace fw = gtb::framework;
using gtb::Backend;
using gtb::json;
using gtb::Record;

// GTB_PYTHON for the scope of one test.
struct PythonIs {
  explicit PythonIs(const std::string& p) {
    if (const char* old = std::getenv("GTB_PYTHON")) saved = old, had = true;
    ::setenv("GTB_PYTHON", p.c_str(), 1);
  }
  ~PythonIs() { had ? ::setenv("GTB_PYTHON", saved.c_str(), 1) : ::unsetenv("GTB_PYTHON"); }
  std::string saved;
  bool had = false;
};

std::string script(const std::string& name, const std::string& body) {
  const std::string p = "/tmp/gtb-fw-test-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  ::chmod(p.c_str(), 0755);
  return p;
}

TEST(FrameworkPython, DefaultIsPython3AndTheVariableWins) {
  {
    PythonIs p("/opt/some/python");
    EXPECT_EQ(fw::python_program(), "/opt/some/python");
  }
  const char* old = std::getenv("GTB_PYTHON");
  const std::string saved = old ? old : "";
  ::unsetenv("GTB_PYTHON");
  EXPECT_EQ(fw::python_program(), "python3");
  if (old) ::setenv("GTB_PYTHON", saved.c_str(), 1);
}

TEST(FrameworkPython, AMissingProgramIsBadInputNamingIt) {
  PythonIs p("/no/such/python");
  const std::string why = fw::python_problem();
  EXPECT_NE(why.find("GTB_PYTHON=/no/such/python"), std::string::npos) << why;
  EXPECT_NE(why.find("No such file or directory"), std::string::npos) << why;
}

TEST(FrameworkPython, AProgramThatIsNotPythonIsBadInput) {
  {
    PythonIs p("/bin/false");
    const std::string why = fw::python_problem();
    EXPECT_NE(why.find("is not a Python 3.7+ interpreter"), std::string::npos) << why;
    EXPECT_NE(why.find("exited with code 1"), std::string::npos) << why;
  }
  // Exits 0 and prints something else: still not Python.
  const std::string fake = script("fake", "echo hello from a shell");
  PythonIs p(fake);
  const std::string why = fw::python_problem();
  EXPECT_NE(why.find("is not a Python 3.7+ interpreter"), std::string::npos) << why;
  EXPECT_NE(why.find("hello from a shell"), std::string::npos) << why;
  ::unlink(fake.c_str());
}

TEST(FrameworkPython, APython3IsAccepted) {
  // Any Python 3 passes the check, torch or not (without torch the records are skipped instead).
  const std::string py = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "";
  if (py.empty()) GTEST_SKIP() << "no /usr/bin/python3";
  PythonIs p(py);
  EXPECT_EQ(fw::python_problem(), "");
}

// The ids as the train and vectorize families write them (axis order, then options).
TEST(FrameworkSameWork, IdsAreTheTrainAndVectorizeRecordIds) {
  const json p = {{"width", 256}, {"depth", 4}, {"batch", 32}};
  const auto cpu = fw::same_work_ids("mlp_step", Backend::cpu, p, {{"mode", "eager"}});
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0], "train/batch_sweep/fastest_blas/cpu/batch=32,width=256,depth=4");
  EXPECT_EQ(cpu[1], "train/model_sweep/fastest_blas/cpu/batch=32,width=256,depth=4");
  const auto graph = fw::same_work_ids("mlp_step", Backend::cuda, p, {{"mode", "graph"}});
  ASSERT_EQ(graph.size(), 1u);
  EXPECT_EQ(graph[0], "train/model_sweep/cublas/cuda/batch=32,width=256,depth=4,mode=graph");
  EXPECT_EQ(fw::same_work_ids("op_chain", Backend::cpu, {{"n", 4096}}, json::object()).at(0),
            "vectorize/chain/openmp/cpu/n=4096");
  EXPECT_TRUE(fw::same_work_ids("dataloader", Backend::cpu, {{"n", 1}}, json::object()).empty());
}

// ---- findings from records ----

Record rec(const std::string& workload, Backend be, json params, json options, double seconds, const std::string& variant = "pytorch") {
  return gtb::test::framework_record(workload, be, std::move(params), std::move(options), seconds, variant);
}

TEST(FrameworkFindings, StepRatioAndCrossover) {
  std::vector<Record> recs;
  const double cpu_s[] = {0.001, 0.002, 0.010}, gpu_s[] = {0.004, 0.003, 0.001};
  const int batches[] = {1, 32, 512};
  for (int i = 0; i < 3; ++i) {
    const json p = {{"width", 256}, {"depth", 4}, {"batch", batches[i]}};
    recs.push_back(rec("mlp_step", Backend::cpu, p, {{"mode", "eager"}}, cpu_s[i]));
    recs.push_back(rec("mlp_step", Backend::cuda, p, {{"mode", "eager"}}, gpu_s[i]));
  }
  recs[0].counters["time_vs_same_work"] = {2.5, "x"};
  recs[0].info["same_work_record"] = "train/x";
  const fw::Findings f = fw::compute_findings(recs);
  ASSERT_EQ(f.steps.size(), 6u);
  EXPECT_NEAR(*f.steps[0].ratio, 2.5, 1e-12);
  EXPECT_NEAR(*f.steps[0].gtb_ms, 1.0 / 2.5, 1e-12);
  EXPECT_EQ(f.steps[0].gtb_record, "train/x");
  EXPECT_FALSE(f.steps[1].ratio) << "no counterpart: no ratio";
  ASSERT_EQ(f.crossovers.size(), 1u);
  EXPECT_EQ(f.crossovers[0].gpu_faster_from_batch.value_or(-1), 512);
}

TEST(FrameworkFindings, SmallestFeedingWorkersPerPreprocessingCost) {
  std::vector<Record> recs;
  auto loader = [&](int us, int workers, double idle) {
    Record r = rec("dataloader", Backend::cpu, {{"sample_us", us}, {"num_workers", workers}, {"batch", 16}, {"step_ms", 10}},
                   {{"pin_memory", "off"}, {"persistent_workers", workers ? "on" : "off"}}, 0.01);
    r.counters["idle_fraction"] = {idle, "1"};
    recs.push_back(r);
  };
  loader(50, 0, 0.08), loader(50, 1, 0.01), loader(50, 2, 0.0);
  loader(1000, 0, 0.6), loader(1000, 1, 0.35), loader(1000, 2, 0.04);
  loader(4000, 0, 0.9), loader(4000, 1, 0.7), loader(4000, 2, 0.5);
  const fw::Findings f = fw::compute_findings(recs);
  std::map<std::int64_t, std::optional<std::int64_t>> smallest;
  for (const auto& d : f.fed)
    if (d.persistent_workers == "on") smallest[d.sample_us] = d.smallest_fed_workers;
  ASSERT_EQ(smallest.size(), 3u);
  EXPECT_EQ(smallest[50].value_or(-1), 1);
  EXPECT_EQ(smallest[1000].value_or(-1), 2);
  EXPECT_FALSE(smallest[4000]) << "none of the workers measured feeds it";
}

TEST(FrameworkFindings, OpTaxLoopsPrecisionAndLossReads) {
  std::vector<Record> recs;
  Record op = rec("op_chain", Backend::cpu, {{"n", 256}}, json::object(), 30e-6, "eager");
  op.counters["time_vs_same_work"] = {10.0, "x"};  // gtb's chain: 3 us
  recs.push_back(op);
  recs.push_back(rec("loop_vs_vector", Backend::cpu, {{"n", 256}}, json::object(), 500e-6, "python_loop"));
  recs.push_back(rec("loop_vs_vector", Backend::cpu, {{"n", 256}}, json::object(), 2e-6, "vectorized"));
  Record fp32 = rec("mixed_precision", Backend::cpu, {{"width", 512}, {"batch", 512}}, {{"precision", "fp32"}}, 0.02);
  Record bf16 = rec("mixed_precision", Backend::cpu, {{"width", 512}, {"batch", 512}}, {{"precision", "bf16"}}, 0.01);
  fp32.counters["loss_after_k"] = {1.5, "1"};
  bf16.counters["loss_after_k"] = {1.6, "1"};
  recs.push_back(fp32), recs.push_back(bf16);
  recs.push_back(rec("loss_read", Backend::cuda, {{"width", 256}, {"batch", 32}}, {{"loss_read_every", 1}}, 300e-6));
  recs.push_back(rec("loss_read", Backend::cuda, {{"width", 256}, {"batch", 32}}, {{"loss_read_every", 100}}, 102e-6));
  const fw::Findings f = fw::compute_findings(recs);
  ASSERT_EQ(f.ops.size(), 1u);
  EXPECT_NEAR(f.ops[0].per_op_us, 10.0, 1e-9);
  EXPECT_NEAR(*f.ops[0].gtb_per_op_us, 1.0, 1e-9);
  EXPECT_NEAR(*f.ops[0].tax_per_op_us, 9.0, 1e-9);
  ASSERT_EQ(f.loops.size(), 1u);
  EXPECT_NEAR(f.loops[0].speedup, 250.0, 1e-9);
  ASSERT_EQ(f.precisions.size(), 2u);
  for (const auto& p : f.precisions)
    if (p.precision == "bf16") {
      EXPECT_NEAR(*p.speedup_vs_fp32, 2.0, 1e-12);
      EXPECT_NEAR(*p.fp32_loss_after_k, 1.5, 1e-12);
    }
  ASSERT_EQ(f.loss_reads.size(), 1u);
  EXPECT_NEAR(f.loss_reads[0].extra_us_per_read, 200.0, 1e-9);
  // The framework_op term: seconds per operator by n, on the CPU; the GPU's says why it has none.
  ASSERT_GE(f.terms.size(), 4u);
  EXPECT_EQ(f.terms[0].name, "framework_op");
  EXPECT_TRUE(f.terms[0].usable());
  EXPECT_NEAR(f.terms[0].points.at(0).y, 10e-6, 1e-15);
  EXPECT_FALSE(f.terms[2].usable()) << "no GPU record: the GPU's term says why";
  json data = json::object();
  fw::to_json(f, data);
  EXPECT_TRUE(data.contains("ops") && data.contains("loops") && data.contains("precisions"));
}

// Mixed precision reports memory beside speed-up and loss: the tensors one step holds (counted by
// the worker on every backend) and their ratio to FP32's.
TEST(FrameworkFindings, PrecisionMemoryBesideFp32s) {
  std::vector<Record> recs;
  Record fp32 = rec("mixed_precision", Backend::cpu, {{"width", 512}, {"batch", 512}}, {{"precision", "fp32"}}, 0.02);
  Record bf16 = rec("mixed_precision", Backend::cpu, {{"width", 512}, {"batch", 512}}, {{"precision", "bf16"}}, 0.01);
  fp32.counters["step_memory_bytes"] = {8e6, "bytes"};
  bf16.counters["step_memory_bytes"] = {6e6, "bytes"};
  recs.push_back(fp32), recs.push_back(bf16);
  const fw::Findings f = fw::compute_findings(recs);
  ASSERT_EQ(f.precisions.size(), 2u);
  for (const auto& p : f.precisions) {
    ASSERT_TRUE(p.step_memory_bytes) << p.precision;
    ASSERT_TRUE(p.memory_vs_fp32) << p.precision;
    EXPECT_NEAR(*p.memory_vs_fp32, p.precision == "bf16" ? 0.75 : 1.0, 1e-12);
    EXPECT_FALSE(p.peak_memory_bytes) << "no GPU peak on the CPU";
  }
  json data = json::object();
  fw::to_json(f, data);
  EXPECT_EQ(data["precisions"][1]["step_memory_bytes"], 6e6);
  EXPECT_EQ(data["precisions"][1]["memory_vs_fp32"], 0.75);
}

}  // namespace
