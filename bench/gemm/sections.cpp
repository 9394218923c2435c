// The gemm family's findings for the report and plots: the best rate per backend and precision,
// its error, GPU over CPU at the same precision, misaligned shapes, and what a step's GEMMs, passes
// and update keep of their back-to-back rate.
#include <algorithm>
#include <cmath>
#include <map>

#include "bench/gemm/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;

void best_rates(const std::vector<gtb::Record>& recs, fx::Family& f) {
  auto& s = f.section("best", "Best rate per backend and precision");
  struct Acc {
    double best = 0, worst_err = -1, tol = -1, pct_peak = -1;
    std::string shape, variant;
  };
  std::map<std::string, std::map<std::string, Acc>> acc;
  for (const auto& r : recs) {
    if (!gtb::usable(r)) continue;
    std::string prec = fx::option_text(r, "precision");
    if (prec.empty()) prec = "fp32";
    Acc& a = acc[gtb::to_string(r.backend)][prec];
    if (*r.value > a.best) {
      a.best = *r.value;
      a.shape = fx::params_text(r.params);
      a.variant = r.variant;
      if (r.counters.count("pct_of_datasheet_peak")) a.pct_peak = r.counters.at("pct_of_datasheet_peak").value;
    }
    for (const char* c : {"rel_fro_err", "max_rel_error"})
      if (r.counters.count(c)) a.worst_err = std::max(a.worst_err, r.counters.at(c).value);
    if (r.counters.count("tolerance")) a.tol = std::max(a.tol, r.counters.at("tolerance").value);
  }
  auto& t = s.table("best", {{"backend"}, {"precision"}, {"best", "TFLOP/s", Hint::rate}, {"best over best FP32", "", Hint::ratio},
                             {"worst relative error", "", Hint::number}, {"tolerance", "", Hint::number},
                             {"of datasheet peak", "", Hint::percent}, {"at"}});
  auto or_null = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  for (const auto& [be, precs] : acc) {
    const double fp32 = precs.count("fp32") ? precs.at("fp32").best : 0;
    for (const auto& [prec, a] : precs)
      t.rows.push_back({be, prec, a.best, fp32 > 0 ? json(a.best / fp32) : json(nullptr), or_null(a.worst_err),
                        a.tol > 0 ? json(a.tol) : json(nullptr), or_null(a.pct_peak), a.variant + ", " + a.shape});
  }
  if (t.rows.empty()) s.not_measured = "no gemm record has a number (" + fx::why_none(recs, gtb::Backend::cuda) + ")";
  if (!fx::any_number(recs, gtb::Backend::cuda)) s.say("GPU: not measured (" + fx::why_none(recs, gtb::Backend::cuda) + ").");
  // One line joins only a sweep of one kind of shape: square matrices growing. The skinny, training
  // and misaligned shapes are other questions (the table and the lines below answer them); joined
  // to the squares by their cube root they draw a line through unrelated shapes.
  auto& g = s.figure("gemm_tflops", "GEMM throughput vs size of square matrices (m = n = k), per precision");
  g.where = {{"workload", "gemm"}, {"options.l2", {"warm", nullptr}}, {"info.shape_class", "square"}};
  g.x = {"params.m"};
  g.series = {"backend", "options.precision"};
  g.reduce = "max";
  g.logx = 2;
  g.logy = true;
  g.xlabel = "matrix size m = n = k";
  g.ylabel = "TFLOP/s (2*m*n*k / time), best library";
  // The datasheet peak of each precision the GPU ran, as a dotted line.
  std::map<std::string, double> peaks;
  for (const auto& r : recs)
    if (gtb::usable(r) && r.info.contains("datasheet") && r.info.at("datasheet").is_object() &&
        r.info.at("datasheet").contains("peak_tflops") && r.info.at("datasheet").at("peak_tflops").is_number())
      peaks[fx::option_text(r, "precision")] = r.info.at("datasheet").at("peak_tflops").get<double>();
  for (const auto& [prec, peak] : peaks) g.hlines.push_back({peak, prec + " datasheet peak"});
}

void against(const gtb::gemm::Findings& found, fx::Family& f) {
  auto& s = f.section("comparisons", "GPU over CPU and misaligned shapes");
  double lo = INFINITY, hi = 0;
  for (const auto& e : found.gpu_vs_cpu_same_precision) lo = std::min(lo, e.gpu_over_cpu), hi = std::max(hi, e.gpu_over_cpu);
  if (hi > 0) {
    s.line("gpu_over_cpu_low", "GPU over CPU at the same precision and shape, lowest", lo, "", Hint::ratio);
    s.line("gpu_over_cpu_high", "GPU over CPU at the same precision and shape, highest", hi, "", Hint::ratio);
  }
  double worst = INFINITY;
  for (const auto& e : found.alignment) worst = std::min(worst, e.ratio);
  if (std::isfinite(worst))
    s.line("misaligned_worst", "misaligned shapes at their worst, of the aligned shape's rate", worst, "", Hint::fraction);
  if (s.lines.empty()) s.not_measured = "needs GPU and CPU records of the same precision, or misaligned shapes beside aligned ones";
}

// What a step's GEMMs, passes and update keep of their back-to-back rate, by sequence size: the
// paired records' shares (each call inside the step against itself repeated at once) and the cold
// records' (each GEMM with every cache emptied first), as the cost model reads them.
void inside_a_step(const std::vector<gtb::Record>& recs, fx::Family& f) {
  auto& s = f.section("in_step", "A step's GEMMs, passes and update against back-to-back calls");
  struct Row {
    double flop = 0;
    std::string gemm;  // one of its GEMMs, rows x width x width
    json gemm_in, gemm_cold, pass_all, update_all, pass_one, update_one;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;  // (precision, rows x width) -> shares
  auto share = [](const gtb::Record& r, const char* name) {
    const auto it = r.counters.find(name);
    return it != r.counters.end() && it->second.value > 0 ? json(it->second.value) : json(nullptr);
  };
  for (const auto& r : recs) {
    if (r.workload != "sequence" || r.backend != gtb::Backend::cpu || !gtb::usable(r)) continue;
    const std::string mode = fx::option_text(r, "mode"), threads = fx::option_text(r, "threads");
    if (mode != "paired" && mode != "cold") continue;
    const double m = r.params.value("rows", 0.0), w = r.params.value("width", 0.0);
    Row& row = rows[{fx::option_text(r, "precision"), std::to_string(int(m)) + " x " + std::to_string(int(w))}];
    row.flop = 2.0 * m * w * w;
    row.gemm = std::to_string(int(m)) + " x " + std::to_string(int(w)) + " x " + std::to_string(int(w));
    if (mode == "cold") {
      row.gemm_cold = share(r, "hot_over_cold");
    } else if (threads == "one") {
      row.pass_one = share(r, "pass_hot_over_in_step");
      row.update_one = share(r, "update_hot_over_in_step");
    } else {
      row.gemm_in = share(r, "gemm_hot_over_in_step");
      row.pass_all = share(r, "pass_hot_over_in_step");
      row.update_all = share(r, "update_hot_over_in_step");
    }
  }
  if (rows.empty()) {
    s.not_measured = "no paired or cold GEMM sequence record (a file of older gtb, or the sequence did not run)";
    return;
  }
  s.say("The share of its back-to-back rate each part of a training step keeps (1: as fast as the same call "
        "repeated at once; 0.5: twice its time), measured on a step of 4 layers at rows x width through the "
        "steps' GEMM plan: the GEMMs inside the step, and with every cache emptied before each call (their "
        "operands from memory, as in a step whose working set outgrows the last-level cache); the ReLU passes "
        "and the SGD update inside the step, on all threads and on one. The cost model divides a step's "
        "parts by them (docs/advise.md).");
  auto& t = s.table("in_step", {{"precision"},
                                {"rows x width"},
                                {"one GEMM (m x n x k)"},
                                {"GEMMs inside the step", "", Hint::fraction},
                                {"GEMMs from memory", "", Hint::fraction},
                                {"passes inside (all threads)", "", Hint::fraction},
                                {"update inside (all threads)", "", Hint::fraction},
                                {"passes inside (one thread)", "", Hint::fraction},
                                {"update inside (one thread)", "", Hint::fraction}});
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first.first != b.first.first ? a.first.first > b.first.first : a.second.flop < b.second.flop;
  });
  for (const auto& [key, row] : sorted)
    t.rows.push_back({key.first, key.second, row.gemm, row.gemm_in, row.gemm_cold, row.pass_all, row.update_all,
                      row.pass_one, row.update_one});
}

const bool kFindings = gtb::add_family_findings<gtb::gemm::Findings>(
    "gemm", "Matrix multiply", 40, gtb::gemm::compute_findings, gtb::gemm::to_json,
    [](const std::vector<gtb::Record>& recs, const gtb::gemm::Findings& found, fx::Family& f) {
      best_rates(recs, f);
      against(found, f);
      inside_a_step(recs, f);
    });

}  // namespace
