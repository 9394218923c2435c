// Pricing: each symptom's fix through the cost-term lookups (harness/document/cost_terms.h), per step.
#include "harness/driver/diagnose/diagnose_price.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "harness/document/cost_terms.h"
#include "harness/document/json_read.h"
#include "harness/driver/diagnose/diagnose_render.h"

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

  // A GPU price is justified only from records of the GPU the trace ran on.
  std::string blocked;
  if (results_gpu.empty()) blocked = "the results have no GPU records (" + gpu_reason + ")";
  else if (trace_gpu.empty()) blocked = "the trace does not name its GPU (no deviceProperties), so records of " +
                                        results_gpu + " cannot be said to apply";
  else if (normalized(trace_gpu) != normalized(results_gpu))
    blocked = "the results were measured on " + results_gpu + ", the trace ran on " + trace_gpu +
              ": another GPU's records do not price this one";
  p["same_gpu"] = blocked.empty();

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
  const double per = 1.0 / static_cast<double>(steps_n);
  const auto step_window = per_step(d, {"gpu", "window_us"});
  const double step_s = std::isfinite(step_window.value) ? step_window.value * 1e-6 : 0;
  const json& o = d["overall"];
  json fixes = json::array();
  const bool has_gpu = o.contains("gpu");

  // Pageable copies -> pinned, at each copy's size.
  if (has_gpu)
    for (const auto& cp : o["gpu"]["copies"]) {
      if (cp.value("memory", "") != "pageable") continue;
      const std::string dir = cp.value("direction", "");
      const std::string term = dir == "HtoD" ? "h2d_copy" : dir == "DtoH" ? "d2h_copy" : "";
      if (term.empty()) continue;
      cost::Estimate s;
      bool first = true;
      if (!blocked.empty()) s = none(blocked);
      else if (cp.value("bytes_unknown", 0) > 0) s = none("some of these copies carry no byte count");
      else
        for (const auto& sz : cp["sizes"]) {
          const double b = sz["bytes"].get<double>(), n = sz["count"].get<double>();
          const auto one = minus(cost::copy_seconds(terms, term, Backend::cuda, "pageable", b),
                                 cost::copy_seconds(terms, term, Backend::cuda, "pinned", b));
          s = first ? cost::scaled(one, n * per) : s + cost::scaled(one, n * per);
          first = false;
        }
      fixes.push_back(fix("pin the host memory of the " + dir + " copies", "copy_" + dir + "_pageable", s,
                          "each pageable copy's measured " + term + " time at its size minus the pinned one, "
                          "times the copies per step", step_s));
    }

  // Syncs and scalar reads: each one the measured cost of a host read of a device scalar in a step.
  {
    const double syncs = per_step(d, {"host", "syncs", "total"}).value;
    const double reads = per_step(d, {"host", "scalar_reads", "count"}).value;
    const double n = std::max(std::isfinite(syncs) ? syncs : 0.0, std::isfinite(reads) ? reads : 0.0);
    if (n > 0) {
      const auto s = blocked.empty() ? cost::scaled(cost::host_sync_seconds(terms, Backend::cuda), n) : none(blocked);
      fixes.push_back(fix("remove the per-step syncs and item() reads (read the loss every N steps)", "syncs", s,
                          "syncs per step (the larger of sync calls and item() reads) times the measured cost "
                          "of one host read of a device scalar",
                          step_s));
    }
  }

  // Launch-bound kernels: eager launch minus graph launch, per short kernel.
  if (has_gpu) {
    const double n = per_step(d, {"gpu", "kernels", "shorter_than_launch"}).value;
    if (std::isfinite(n) && n > 0) {
      const auto s = blocked.empty() ? cost::scaled(minus(cost::launch_seconds(terms, "eager"),
                                                          cost::launch_seconds(terms, "graph")),
                                                    n)
                                     : none(blocked);
      fixes.push_back(fix("capture the short kernels in a CUDA graph (or fuse them)", "kernels", s,
                          "kernels shorter than a launch per step times (measured eager launch - graph launch)",
                          step_s));
    }
  }

  // FP32 SIMT GEMMs -> TF32 / BF16 tensor cores at the trace's shapes.
  if (has_gpu) {
    const auto& simt = o["gpu"]["gemm_kernels"]["simt_fp32"];
    if (simt.value("count", 0) > 0) {
      for (const char* precision : {"tf32", "bf16"}) {
        cost::Estimate s;
        if (!blocked.empty()) s = none(blocked);
        else if (simt["shapes"].empty())
          s = none("the trace recorded no shapes for its FP32 SIMT GEMM kernels (record_shapes off, or the "
                   "kernels do not link to an aten::mm-like op by External id)");
        else {
          bool first = true;
          for (const auto& sh : simt["shapes"]) {
            const double m = sh["m"].get<double>(), n = sh["n"].get<double>(), k = sh["k"].get<double>(), us = sh["us"].get<double>();
            const auto fp32 = cost::matmul_seconds(terms, Backend::cuda, "fp32", m, n, k);
            const auto fast = cost::matmul_seconds(terms, Backend::cuda, precision, m, n, k);
            cost::Estimate one;
            if (fp32.seconds && fast.seconds && *fp32.seconds > 0) {
              // The trace's own time at that shape, scaled by the measured rate ratio.
              one = cost::scaled(fp32 + fast, 0.0);
              one.seconds = us * 1e-6 * per * (1.0 - *fast.seconds / *fp32.seconds);
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
                            step_s));
      }
    }
  }

  // Exposed communication: the measured hidden fraction of it.
  if (has_gpu && o["gpu"]["communication"].value("count", 0) > 0) {
    const double exposed = per_step(d, {"gpu", "communication", "exposed_us"}).value;
    cost::Estimate s = none(blocked);
    if (blocked.empty()) {
      const auto f = cost::overlap_fraction(terms, Backend::cuda);
      s = f;
      if (f.seconds) s.seconds = exposed * 1e-6 * *f.seconds;
    }
    fixes.push_back(fix("overlap the communication with compute (bucketed all-reduce in backward)", "communication",
                        s, "exposed communication per step times the measured fraction overlap hides", step_s));
  }
  if (o["host"]["data_loader"].value("events", 0) > 0)
    fixes.push_back(fix("more loader workers / pinned loader memory", "data_loader",
                        none("the trace does not say the loader's workers or its per-sample cost, which the "
                             "measured loader rates are indexed by"),
                        "", step_s));

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
