// Pricing: each symptom's fix through the cost-term lookups (harness/model/cost_terms.h), per step.
#include "harness/driver/diagnose/diagnose_price.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "harness/model/cost_terms.h"
#include "harness/document/json_read.h"
#include "harness/driver/common/diagnose_render.h"

namespace gtb::diagnose {

namespace {

std::string normalized(std::string s) {
  std::string o;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

json records_of(const cost::Estimate& e) {
  json r = json::array();
  for (const auto& id : e.records) r.push_back(id);
  return r;
}

// The one place a fix's number is formed: saving = before - after, both from measured terms.
json fix(const std::string& name, const std::string& symptom, const cost::Estimate& saving, const std::string& how,
         double step_s) {
  json f;
  f["fix"] = name;
  f["symptom"] = symptom;
  if (saving.seconds) {
    f["saving_per_step_s"] = std::max(0.0, *saving.seconds);
    f["share_of_step"] = step_s > 0 ? json(std::max(0.0, *saving.seconds) / step_s) : json(nullptr);
    f["cannot_say"] = nullptr;
  } else {
    f["saving_per_step_s"] = nullptr;
    f["share_of_step"] = nullptr;
    f["cannot_say"] = saving.cannot_say.empty() ? "no measured term" : saving.cannot_say;
  }
  f["records"] = records_of(saving);
  f["outside_measured"] = saving.outside_measured;
  f["how"] = how;
  if (!saving.note.empty()) f["note"] = saving.note;
  return f;
}

cost::Estimate minus(const cost::Estimate& a, const cost::Estimate& b) { return a + cost::scaled(b, -1.0); }

cost::Estimate none(const std::string& why) {
  cost::Estimate e;
  e.cannot_say = why;
  return e;
}

// A GPU price is justified only from records of the GPU the trace ran on: sets trace_gpu,
// results_gpu and same_gpu in `p`; returns why nothing can be priced ("" when the GPUs match).
std::string gpu_mismatch(const json& d, const json& results, json& p) {
  const auto& devices = d["trace"]["devices"];
  const std::string trace_gpu = devices.empty() ? "" : devices[0].get<std::string>();
  std::string results_gpu, gpu_reason;
  if (const auto* g = json_read::find(results, {"context", "gpu"})) {
    if (g->value("available", false) && g->contains("devices") && !(*g)["devices"].empty())
      results_gpu = (*g)["devices"][0].value("name", "");
    else
      gpu_reason = g->value("reason", "no GPU");
  } else {
    gpu_reason = "the results file has no context.gpu";
  }
  p["trace_gpu"] = trace_gpu.empty() ? json(nullptr) : json(trace_gpu);
  p["results_gpu"] = results_gpu.empty() ? json(nullptr) : json(results_gpu);

  std::string blocked;
  if (results_gpu.empty()) blocked = "the results have no GPU records (" + gpu_reason + ")";
  else if (trace_gpu.empty()) blocked = "the trace does not name its GPU (no deviceProperties), so records of " +
                                        results_gpu + " cannot be said to apply";
  else if (normalized(trace_gpu) != normalized(results_gpu))
    blocked = "the results were measured on " + results_gpu + ", the trace ran on " + trace_gpu +
              ": another GPU's records do not price this one";
  p["same_gpu"] = blocked.empty();
  return blocked;
}

// What every fix is priced with: the diagnosis, the measured terms, why nothing can be priced ("" when
// it can), the share of each symptom that falls in one step, a step's GPU window in seconds.
struct Pricing {
  const json& d;
  const json& o;  // d["overall"]
  const std::vector<cost::Term>& terms;
  const std::string& blocked;
  double per;
  double step_s;
  bool has_gpu;
};

// Pageable copies -> pinned, at each copy's size.
void copy_fixes(const Pricing& pr, json& fixes) {
  if (!pr.has_gpu) return;
  for (const auto& cp : pr.o["gpu"]["copies"]) {
    if (cp.value("memory", "") != "pageable") continue;
    const std::string dir = cp.value("direction", "");
    const std::string term = dir == "HtoD" ? "h2d_copy" : dir == "DtoH" ? "d2h_copy" : "";
    if (term.empty()) continue;
    cost::Estimate s;
    bool first = true;
    if (!pr.blocked.empty()) s = none(pr.blocked);
    else if (cp.value("bytes_unknown", 0) > 0) s = none("some of these copies carry no byte count");
    else
      for (const auto& sz : cp["sizes"]) {
        const double b = sz["bytes"].get<double>(), n = sz["count"].get<double>();
        const auto one = minus(cost::copy_seconds(pr.terms, term, Backend::cuda, "pageable", b),
                               cost::copy_seconds(pr.terms, term, Backend::cuda, "pinned", b));
        s = first ? cost::scaled(one, n * pr.per) : s + cost::scaled(one, n * pr.per);
        first = false;
      }
    fixes.push_back(fix("pin the host memory of the " + dir + " copies", "copy_" + dir + "_pageable", s,
                        "each pageable copy's measured " + term + " time at its size minus the pinned one, "
                        "times the copies per step", pr.step_s));
  }
}

// Syncs and scalar reads: each one the measured cost of a host read of a device scalar in a step.
void sync_fix(const Pricing& pr, json& fixes) {
  const double syncs = per_step(pr.d, {"host", "syncs", "total"}).value;
  const double reads = per_step(pr.d, {"host", "scalar_reads", "count"}).value;
  const double n = std::max(std::isfinite(syncs) ? syncs : 0.0, std::isfinite(reads) ? reads : 0.0);
  if (n <= 0) return;
  const auto s = pr.blocked.empty() ? cost::scaled(cost::host_sync_seconds(pr.terms, Backend::cuda), n) : none(pr.blocked);
  fixes.push_back(fix("remove the per-step syncs and item() reads (read the loss every N steps)", "syncs", s,
                      "syncs per step (the larger of sync calls and item() reads) times the measured cost "
                      "of one host read of a device scalar",
                      pr.step_s));
}

// Launch-bound kernels: eager launch minus graph launch, per short kernel.
void launch_fix(const Pricing& pr, json& fixes) {
  if (!pr.has_gpu) return;
  const double n = per_step(pr.d, {"gpu", "kernels", "shorter_than_launch"}).value;
  if (!(std::isfinite(n) && n > 0)) return;
  const auto s = pr.blocked.empty() ? cost::scaled(minus(cost::launch_seconds(pr.terms, "eager"),
                                                         cost::launch_seconds(pr.terms, "graph")),
                                                   n)
                                    : none(pr.blocked);
  fixes.push_back(fix("capture the short kernels in a CUDA graph (or fuse them)", "kernels", s,
                      "kernels shorter than a launch per step times (measured eager launch - graph launch)",
                      pr.step_s));
}

// FP32 SIMT GEMMs -> TF32 / BF16 tensor cores at the trace's shapes.
void gemm_fixes(const Pricing& pr, json& fixes) {
  if (!pr.has_gpu) return;
  const auto& simt = pr.o["gpu"]["gemm_kernels"]["simt_fp32"];
  if (simt.value("count", 0) <= 0) return;
  for (const char* precision : {"tf32", "bf16"}) {
    cost::Estimate s;
    if (!pr.blocked.empty()) s = none(pr.blocked);
    else if (simt["shapes"].empty())
      s = none("the trace recorded no shapes for its FP32 SIMT GEMM kernels (record_shapes off, or the "
               "kernels do not link to an aten::mm-like op by External id)");
    else {
      bool first = true;
      for (const auto& sh : simt["shapes"]) {
        const double m = sh["m"].get<double>(), n = sh["n"].get<double>(), k = sh["k"].get<double>(), us = sh["us"].get<double>();
        const auto fp32 = cost::matmul_seconds(pr.terms, Backend::cuda, "fp32", m, n, k);
        const auto fast = cost::matmul_seconds(pr.terms, Backend::cuda, precision, m, n, k);
        cost::Estimate one;
        if (fp32.seconds && fast.seconds && *fp32.seconds > 0) {
          // The trace's own time at that shape, scaled by the measured rate ratio.
          one = cost::scaled(fp32 + fast, 0.0);
          one.seconds = us * 1e-6 * pr.per * (1.0 - *fast.seconds / *fp32.seconds);
        } else {
          one = none(fp32.seconds ? fast.cannot_say : fp32.cannot_say);
        }
        s = first ? one : s + one;
        first = false;
      }
    }
    fixes.push_back(fix(std::string("run the FP32 SIMT GEMMs in ") + precision + " on tensor cores", "gemm_kernels", s,
                        "the trace's FP32 SIMT GEMM time per step times (1 - measured " + std::string(precision) +
                            " time / measured fp32 time) at each shape",
                        pr.step_s));
  }
}

// Exposed communication: the measured hidden fraction of it.
void communication_fix(const Pricing& pr, json& fixes) {
  if (!(pr.has_gpu && pr.o["gpu"]["communication"].value("count", 0) > 0)) return;
  const double exposed = per_step(pr.d, {"gpu", "communication", "exposed_us"}).value;
  cost::Estimate s = none(pr.blocked);
  if (pr.blocked.empty()) {
    const auto f = cost::overlap_fraction(pr.terms, Backend::cuda);
    s = f;
    if (f.seconds) s.seconds = exposed * 1e-6 * *f.seconds;
  }
  fixes.push_back(fix("overlap the communication with compute (bucketed all-reduce in backward)", "communication",
                      s, "exposed communication per step times the measured fraction overlap hides", pr.step_s));
}

void loader_fix(const Pricing& pr, json& fixes) {
  if (pr.o["host"]["data_loader"].value("events", 0) > 0)
    fixes.push_back(fix("more loader workers / pinned loader memory", "data_loader",
                        none("the trace does not say the loader's workers or its per-sample cost, which the "
                             "measured loader rates are indexed by"),
                        "", pr.step_s));
}

}  // namespace

void explain_unpriced(json& d) {
  d["pricing"] = {{"priced", false},
                  {"message", "Not priced: give --results RESULTS.json from `gtb run` (every family: the copy, "
                              "sync, launch, matmul and overlap terms come from different ones) on a machine with "
                              "this trace's GPU, and each fix is priced from the records measured there."}};
}

void price_diagnosis(json& d, const json& results, const std::string& label) {
  json p;
  p["priced"] = true;
  p["results"] = label;
  std::string blocked = gpu_mismatch(d, results, p);

  std::vector<cost::Term> terms;
  if (!cost::has_terms(results)) {
    blocked = blocked.empty() ? "the results file has no cost terms (written before terms existed): rerun gtb run"
                              : blocked;
  } else {
    try {
      terms = cost::terms_from_document(results);
    } catch (const std::exception& e) {
      throw std::runtime_error(label + ": " + e.what());
    }
  }
  const auto steps_n = std::max<std::size_t>(1, d.value("steps", json::array()).size());
  const auto step_window = per_step(d, {"gpu", "window_us"});
  const json& o = d["overall"];
  const Pricing pr{d, o, terms, blocked, 1.0 / static_cast<double>(steps_n),
                   std::isfinite(step_window.value) ? step_window.value * 1e-6 : 0, o.contains("gpu")};
  const double step_s = pr.step_s;
  json fixes = json::array();
  copy_fixes(pr, fixes);
  sync_fix(pr, fixes);
  launch_fix(pr, fixes);
  gemm_fixes(pr, fixes);
  communication_fix(pr, fixes);
  loader_fix(pr, fixes);

  std::stable_sort(fixes.begin(), fixes.end(), [](const json& a, const json& b) {
    const bool pa = a["saving_per_step_s"].is_number(), pb = b["saving_per_step_s"].is_number();
    if (pa != pb) return pa;
    return pa && a["saving_per_step_s"].get<double>() > b["saving_per_step_s"].get<double>();
  });
  std::size_t priced = 0;
  for (const auto& f : fixes) priced += f["saving_per_step_s"].is_number();
  p["fixes"] = fixes;
  p["blocked"] = blocked.empty() ? json(nullptr) : json(blocked);
  std::string msg = "Priced with " + label + ": " + std::to_string(priced) + " of " + std::to_string(fixes.size()) +
                    " fixes, ranked by saving per step";
  if (step_s > 0) msg += " (a step's GPU window here: " + std::to_string(step_s * 1e3).substr(0, 6) + " ms)";
  if (!blocked.empty()) msg += ". Nothing priced: " + blocked;
  p["message"] = msg;
  d["pricing"] = p;
}

}  // namespace gtb::diagnose
