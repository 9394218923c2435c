// The verdict's computation: the advice for one step, the reference step, the largest saving, the
// validations a report states (model.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "harness/document/json_read.h"
#include "harness/document/plausibility.h"
#include "harness/document/results.h"
#include "harness/model/model.h"

namespace gtb::cost {

Advice advise(const json& doc, const std::string& source, const StepConfig& c) {
  Advice a;
  a.config = c;
  a.source = source;
  const auto terms = terms_from_document(doc);
  for (const Backend b : {Backend::cpu, Backend::cuda}) {
    a.predictions.push_back(predict(terms, c, b));
    a.fixes.push_back(rank_fixes(terms, c, b, a.predictions.back()));
  }
  a.crossover = crossover_batch(terms, c);
  a.savings = savings_of(doc);
  a.steps = steps_from_document(doc);
  a.machine = {{"cpu", json_read::string_at(doc, {"context", "host", "cpu_model"})},
               {"logical_cpus", json_read::value_at(doc, {"context", "host", "logical_cpus"})},
               {"gpu", json_read::value_at(doc, {"context", "gpu"})},
               {"commit", json_read::string_at(doc, {"context", "build", "git_commit"})},
               {"generated_at", json_read::string_at(doc, {"generated_at"})}};
  return a;
}

SavingsValidation savings_of(const json& doc) {
  // Pairs come from families that evolve on their own: one this version cannot read costs the table
  // a sentence, never the answer.
  try {
    return validate_savings(terms_from_document(doc), steps_from_document(doc), pairs_from_document(doc),
                            records_of(doc));
  } catch (const std::exception& e) {
    SavingsValidation v;
    v.cannot_read = e.what();
    return v;
  }
}

const SavingRow* measured_ab(const SavingsValidation& v, const std::vector<Step>& steps, const Fix& fix,
                             const StepConfig& near) {
  // The same fix changing the same key ("larger_batch" is twice the batch or no micro-batches).
  auto key_of = [](const std::string& change) { return change.substr(0, change.find(' ')); };
  const SavingRow* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const auto& r : v.rows) {
    if (r.pair.fix != fix.id || key_of(r.pair.change) != key_of(fix.change) || r.backend != fix.backend || !r.measured)
      continue;
    const auto s = std::find_if(steps.begin(), steps.end(), [&](const Step& x) { return x.record == r.pair.a; });
    if (s == steps.end()) continue;
    // Distance in log size over the sizes both have; another model kind is farther than any size.
    double d = s->config.value("model", std::string()) == near.model ? 0.0 : 1e6;
    for (const auto& [key, want] : std::map<std::string, double>{
             {"width", near.width}, {"depth", near.depth}, {"batch", near.batch}, {"d_model", near.d_model}}) {
      const double got = s->config.contains(key) && s->config[key].is_number() ? s->config[key].get<double>() : 0;
      if (got > 0 && want > 0) d += std::fabs(std::log(got / want));
    }
    if (d < best_d) best_d = d, best = &r;
  }
  return best;
}

StepConfig reference_step() {
  StepConfig c;
  c.model = "mlp";
  c.width = 1024;
  c.input = 1024;
  c.depth = 4;
  c.batch = 256;
  c.input_bytes_per_sample = 3072;
  c.loss_read_every = 1;
  return c;
}

StepConfig verdict_step(const std::vector<Term>& terms) {
  StepConfig ref = reference_step();
  for (const auto& t : terms)
    if (t.name == term::kLoader && t.usable() && t.where.contains("sample_us") && t.where["sample_us"].is_number()) {
      ref.sample_us = t.where["sample_us"].get<double>();
      ref.workers = 1;
      break;
    }
  return ref;
}

const char* fix_for_part(const std::string& part) {
  static const std::map<std::string, const char*> m = {
      {"loader", "more_workers"}, {"h2d_copy", "pinned_memory"}, {"launch", "cuda_graphs"},
      {"host_sync", "fewer_syncs"}, {"allreduce", "bucket_size"}, {"matmul", "bf16"},
      {"elementwise", "larger_batch"}, {"optimizer", "larger_batch"}, {"redundant_copy", "drop_copy"},
      {"batch_gather", "larger_batch"}, {"dispatch", "compile"}};
  const auto it = m.find(part);
  return it == m.end() ? "" : it->second;
}

LargestSaving largest_saving(const Advice& a, std::size_t i) {
  LargestSaving best;
  double best_share = 0;
  for (const auto& f : a.fixes[i]) {
    const SavingRow* ab = measured_ab(a.savings, a.steps, f, a.config);
    const bool measured = ab && ab->status != "in_noise" && std::fabs(ab->measured->seconds) > ab->measured->noise_s &&
                          ab->measured->step_s > 0;
    const double share = measured ? ab->measured->seconds / ab->measured->step_s
                                  : f.saving_s && *f.saving_s > 0 ? f.saving_fraction : 0.0;
    if (share > best_share) best_share = share, best = {&f, ab};
  }
  return best;
}

ErrorSides error_sides(const Validation& v) {
  // A model whose errors lie on one side misses a term (or mis-measures one).
  ErrorSides s;
  for (const auto& r : v.rows) {
    if (!r.scored()) continue;
    ++s.predicted;
    s.over += *r.error > 0;
    s.under += *r.error < 0;
    // An error the step's own median could move by is no evidence of a side: the prediction is
    // (1 + error) times the measured median, outside [1 - noise, 1 + noise] only beyond it.
    if (!std::isfinite(r.step.noise)) continue;
    ++s.noise_known;
    s.over_noise += *r.error > r.step.noise;
    s.under_noise += *r.error < -r.step.noise;
  }
  return s;
}

std::vector<std::pair<int, Validation>> per_run_validation(const json& doc) {
  std::vector<std::pair<int, Validation>> out;
  const auto it = doc.find("run_findings");
  if (it == doc.end() || !it->is_array() || it->size() < 2) return out;
  for (const auto& r : *it) {
    if (!r.is_object() || !r.contains("findings") || !r["findings"].is_object() || !r.value("run", json()).is_number_integer())
      continue;
    const json one = {{"findings", r["findings"]}};
    try {
      const int run = r["run"].get<int>();
      Validation v = validate(terms_from_document(one), steps_of_run(doc, run, PlausibilityLimits{}.max_spread));
      if (v.median_abs_error && v.worst_abs_error) out.emplace_back(run, std::move(v));
    } catch (const std::exception&) {
      // A run whose findings do not read as terms and steps says nothing here.
    }
  }
  return out.size() >= 2 ? out : decltype(out){};
}

std::vector<Prediction> reference_under_measured(const std::vector<Term>& terms, const StepConfig& ref,
                                                 std::string& measured) {
  measured = measured_framework(terms);
  const std::optional<Framework> f = framework_from_string(measured);
  if (!f || *f == Framework::native) return {};
  StepConfig other = ref;
  other.framework = *f;
  std::vector<Prediction> out;
  for (const Backend b : {Backend::cpu, Backend::cuda}) out.push_back(predict(terms, other, b));
  return out;
}

std::map<std::string, std::string> publisher_of_records(const std::vector<Term>& terms) {
  std::map<std::string, std::string> family_of;
  for (const auto& t : terms)
    for (const auto& r : t.records) family_of.emplace(r, t.family);
  return family_of;
}

}  // namespace gtb::cost
