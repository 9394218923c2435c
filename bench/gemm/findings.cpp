// Family-level GEMM results: percent of the run's best, speedups over FP32, library choice, alignment.
#include "bench/gemm/findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_shapes.h"
#include "kernels/common/precision.h"

namespace gtb::gemm {

namespace {

struct Key {
  std::int64_t m, n, k;
  bool operator<(const Key& o) const { return std::tie(m, n, k) < std::tie(o.m, o.n, o.k); }
};

struct Point {
  const Record* rec = nullptr;
  double tflops = 0;
};

std::string opt(const Record& r, const char* name, const char* dflt) {
  return r.options.contains(name) && r.options[name].is_string() ? r.options[name].get<std::string>() : dflt;
}

Dims to_shape(const Key& s) { return Dims{s.m, s.n, s.k}; }
// A shape's m, n and k, then `more` in its order.
json shape_json(const Dims& s, const json& more = json::object()) {
  json j{{"m", s.m}, {"n", s.n}, {"k", s.k}};
  j.update(more);
  return j;
}

}  // namespace

namespace {
std::string precision_of(const Record& r) {
  for (const json* j : {&r.params, &r.options})
    if (j->contains("precision") && (*j)["precision"].is_string()) return (*j)["precision"].get<std::string>();
  return "fp32";
}

std::string orientation_of(const Record& r) { return opt(r, "orientation", "nn"); }

// Which records a matmul table of `term` takes: "matmul" the libraries' shapes and the steps' own
// sites with operands in the GEMM's precision already; "matmul_autocast" the BF16 step sites run the
// way the CPU steps run them (step_shapes variant plan: FP32 operands rounded as they enter the
// product, the rounding included in the time); "matmul_batched" many small products at once.
bool matmul_record_of(const std::string& term, const Record& r, const std::string& orient) {
  if (term == cost::term::kMatmulBatched) return r.workload == "batched";
  const bool rounding = r.workload == "step_shapes" && r.variant == "plan";
  if (term == cost::term::kMatmulAutocast) return rounding;
  return !rounding && (r.workload == "step_shapes" || (r.workload == "gemm" && orient == "nn"));
}

// One matmul table per backend, precision and orientation. The libraries' shapes are all A B
// ("nn"); the step shapes add the step's own sites, the transposed ones (weight gradient "tn",
// input gradient "nt") in tables of their own. "batched" is a workload of many small GEMMs at once,
// one per thread, as attention runs one per sample and head: its own term, matmul_batched. The
// BF16 sites measured with their operands' rounding are their own term, matmul_autocast: a step
// priced from them has no separate operand casts (docs/advise.md).
void matmul_terms(const std::vector<Record>& records, Findings& f) {
  for (const Backend be : {Backend::cpu, Backend::cuda})
    for (const Precision step_precision : kTrainPrecisions)
      for (const std::string term : {cost::term::kMatmul, cost::term::kMatmulBatched, cost::term::kMatmulAutocast})
        for (const std::string orient : {"nn", "tn", "nt"}) {
          const bool batched = term == cost::term::kMatmulBatched;
          // A training step at bf16 or fp16 runs its GEMMs with FP32 accumulation.
          const std::string prec = to_string(step_precision), gemm_prec = to_string(gemm_precision(step_precision));
          auto pick = [&](const Record& r) {
            return matmul_record_of(term, r, orient) && orientation_of(r) == orient && precision_of(r) == gemm_prec &&
                   opt(r, "l2", "warm") != "cold" && r.params.contains("m") && r.params.contains("n") &&
                   r.params.contains("k");
          };
          // A transposed, batched or autocast table only where such records exist: elsewhere the
          // model prices those GEMMs at the nn rate (or the plain matmul rate) and says so.
          if ((term != cost::term::kMatmul || orient != "nn") &&
              std::none_of(records.begin(), records.end(), [&](const Record& r) { return r.backend == be && pick(r); }))
            continue;
          f.terms.push_back(cost::table_term(
              term, be, json{{"precision", prec}, {"orientation", orient}},
              {"m", "n", "k"}, "flop_per_s", records, pick,
              [](const Record& r) { return json{{"m", r.params["m"]}, {"n", r.params["n"]}, {"k", r.params["k"]}}; },
              [](const Record& r) {
                // A batched record's repetition is `count` GEMMs: its rate is the batch's FLOP/s.
                const double flop = 2.0 * r.params.value("count", 1.0) * r.params["m"].get<double>() *
                                    r.params["n"].get<double>() * r.params["k"].get<double>();
                return r.stats->median > 0 ? flop / r.stats->median : 0.0;
              },
              gemm_prec + " GEMM"));
          cost::Term& t = f.terms.back();
          if (t.usable()) {
            // Which library was fastest at each shape, so a reader can see the rate is not one library's.
            t.where["library"] = "fastest verified per shape";
            t.note = batched ? "per GEMM, many of one shape at once (one per thread); warm caches"
                             : "warm caches; the rate of a shape between measured ones is interpolated log-log";
            if (term == cost::term::kMatmulAutocast)
              t.note += "; FP32 operands rounded to " + gemm_prec + " as they enter the product, the rounding included";
          }
        }
}

// passes_in_step and update_in_step: the share of the back-to-back rate a step's elementwise passes
// and its optimizer update keep inside it, from the sequence records of one precision and size: the
// paired record's own shares (each call inside the step against the same call repeated at once:
// pass_hot_over_in_step, update_hot_over_in_step), or in files without one the passes' record's
// seconds for them alone (pass_s, update_s: run back to back on what they wrote last) / the
// chain's timed inside the step (pass_s_in_step, update_s_in_step), by the bytes they
// move per step (pass_bytes, update_bytes). The update's bytes are the parameters' whatever the rows,
// while what the step's GEMMs and passes stream through the caches between two updates grows with
// them: update_in_step is a table over bytes and the step's rows (the records' `rows`). Sizes that
// give the same point (passes of the same bytes) are one point, the mean of their shares.
struct SequenceRecords {
  const Record *chain = nullptr, *passes = nullptr, *hot = nullptr, *cold = nullptr, *paired = nullptr;
};
using SequencesByPrecision = std::map<std::string, std::map<std::string, SequenceRecords>>;

void pass_in_step_terms(const std::map<std::string, SequencesByPrecision>& by_threads, Findings& f) {
  struct Kind {
    const char *name, *alone, *inside, *bytes, *what, *paired;
  };
  for (const Kind k : {Kind{cost::term::kPassesInStep, "pass_s", "pass_s_in_step", "pass_bytes", "elementwise passes",
                            "pass_hot_over_in_step"},
                       Kind{cost::term::kUpdateInStep, "update_s", "update_s_in_step", "update_bytes", "optimizer update",
                            "update_hot_over_in_step"}})
    for (const auto& [threads, by] : by_threads)
    for (const Precision step_precision : {Precision::fp32, Precision::bf16}) {
      const std::string gemm_prec = to_string(gemm_precision(step_precision));
      const auto sequences = by.find(gemm_prec);
      if (sequences == by.end()) continue;
      const bool by_rows = std::string(k.name) == cost::term::kUpdateInStep;
      // (bytes, rows: 0 where the table is over bytes alone) -> shares
      std::map<std::pair<double, double>, std::vector<std::pair<double, std::vector<std::string>>>> at;
      auto point = [&](const Record& r, double bytes) {
        return std::make_pair(bytes, by_rows ? r.params.value("rows", 0.0) : 0.0);
      };
      for (const auto& [key, tr] : sequences->second) {
        // The paired record's own share, its in-step and hot calls a moment apart, where there is one.
        if (tr.paired) {
          const auto share = tr.paired->counters.find(k.paired);
          const auto bytes = tr.paired->counters.find(k.bytes);
          if (share != tr.paired->counters.end() && bytes != tr.paired->counters.end() && share->second.value > 0 &&
              bytes->second.value > 0) {
            at[point(*tr.paired, bytes->second.value)].push_back({share->second.value, {tr.paired->id}});
            continue;
          }
        }
        if (!tr.chain || !tr.passes) continue;
        const auto alone = tr.passes->counters.find(k.alone);
        const auto inside = tr.chain->counters.find(k.inside);
        const auto bytes = tr.chain->counters.find(k.bytes);
        if (alone == tr.passes->counters.end() || inside == tr.chain->counters.end() || bytes == tr.chain->counters.end())
          continue;  // an older file: its sequences timed only their GEMMs
        if (!(alone->second.value > 0 && inside->second.value > 0 && bytes->second.value > 0)) continue;
        at[point(*tr.chain, bytes->second.value)].push_back(
            {alone->second.value / inside->second.value, {tr.chain->id, tr.passes->id}});
      }
      if (at.empty()) continue;
      // A table over rows needs every point's rows (records of an older sequence without them: bytes alone).
      const bool rows_axis = by_rows && std::all_of(at.begin(), at.end(), [](const auto& e) { return e.first.second > 0; });
      if (by_rows && !rows_axis) {
        decltype(at) merged;
        for (auto& [key, shares] : at) {
          auto& into = merged[{key.first, 0.0}];
          into.insert(into.end(), shares.begin(), shares.end());
        }
        at = std::move(merged);
      }
      cost::Term t;
      t.name = k.name;
      t.backend = Backend::cpu;
      t.where = json{{"precision", to_string(step_precision)}, {"threads", threads}};
      t.form = "table";
      t.axes = rows_axis ? std::vector<std::string>{"bytes", "rows"} : std::vector<std::string>{"bytes"};
      t.y = "fraction";
      for (const auto& [key, shares] : at) {
        double sum = 0;
        for (const auto& [share, ids] : shares) {
          sum += share;
          t.records.insert(t.records.end(), ids.begin(), ids.end());
        }
        json where_at = {{"bytes", key.first}};
        if (rows_axis) where_at["rows"] = key.second;
        t.points.push_back({where_at, sum / double(shares.size()), shares.front().second.front()});
      }
      t.note = std::string("the ") + k.what + "' hot seconds (each call repeated at once, " + k.paired +
               "; files without paired records: " + k.alone + ", alone) / inside the step (" + k.inside +
               "): the share of the back-to-back rate a step's " + k.what + " keep, by the bytes they move per step" +
               (rows_axis ? " and the step's rows" : "") +
               (threads == "one" ? ", the step on one thread" : ", the step on all threads");
      f.terms.push_back(std::move(t));
    }
}

// matmul_from_memory: the share of the back-to-back rate GEMMs keep when every cache was emptied
// before each call (their operands come from memory, as in a step whose working set outgrows the
// caches): the cold record's hot / cold seconds of the same calls, each cold call paired with the
// same call right after it (hot_over_cold), by one GEMM's FLOPs, the steps on all threads. The
// term applies above the last-level cache the cold records emptied (x_min, bytes of a step's working
// set); a file without cold records (older gtb) publishes none.
void matmul_from_memory_terms(const SequencesByPrecision& by, Findings& f) {
  for (const Precision step_precision : {Precision::fp32, Precision::bf16}) {
    const auto sequences = by.find(to_string(gemm_precision(step_precision)));
    if (sequences == by.end()) continue;
    cost::Term t;
    t.name = cost::term::kMatmulFromMemory;
    t.backend = Backend::cpu;
    t.where = json{{"precision", to_string(step_precision)}};
    t.form = "table";
    t.axes = {"flop"};
    t.y = "fraction";
    t.x = "working_set_bytes";
    for (const auto& [key, tr] : sequences->second) {
      if (!tr.cold) continue;
      const auto share = tr.cold->counters.find("hot_over_cold");
      const auto llc = tr.cold->counters.find("last_level_cache_bytes");
      if (share == tr.cold->counters.end() || !(share->second.value > 0)) continue;
      if (llc == tr.cold->counters.end() || !(llc->second.value > 0)) continue;  // nothing said where it applies
      const double rows = tr.cold->params.value("rows", 0.0), width = tr.cold->params.value("width", 0.0);
      if (!(rows > 0 && width > 0)) continue;
      t.x_min = std::max(t.x_min, llc->second.value);
      t.points.push_back({json{{"flop", 2.0 * rows * width * width}}, share->second.value, tr.cold->id});
      t.records.push_back(tr.cold->id);
    }
    if (t.points.empty()) continue;
    t.note = "hot / cold (every cache emptied before each call) seconds of a step's GEMMs, each call paired with "
             "itself again right after (hot_over_cold): the share of the "
             "back-to-back GEMM rate GEMMs keep with their operands in memory, by a GEMM's FLOPs; for a step whose "
             "working set is above the last-level cache (x_min bytes)";
    f.terms.push_back(std::move(t));
  }
}

// matmul_one_thread: the rate of a GEMM run on one thread inside a step (a step in rows mode runs
// each thread's rows through every layer, its products one single-threaded call each, with no
// parallel region per product), from the one-thread sequence records: the chain's GEMM seconds timed
// inside it (gemm_s_in_step) over its 3 x layers - 1 calls of 2 x rows x width^2 FLOPs each. FP32
// only: the rows mode is the FP32 MLP step's.
void matmul_one_thread_terms(const std::map<std::string, SequencesByPrecision>& by_threads, Findings& f) {
  const auto one = by_threads.find("one");
  if (one == by_threads.end()) return;
  const auto sequences = one->second.find(to_string(gemm_precision(Precision::fp32)));
  if (sequences == one->second.end()) return;
  cost::Term t;
  t.name = cost::term::kMatmulOneThread;
  t.backend = Backend::cpu;
  t.where = json{{"precision", to_string(Precision::fp32)}};
  t.form = "table";
  t.axes = {"flop"};
  t.y = "flop_per_s";
  for (const auto& [key, tr] : sequences->second) {
    if (!tr.chain) continue;
    const auto inside = tr.chain->counters.find("gemm_s_in_step");
    const double rows = tr.chain->params.value("rows", 0.0), width = tr.chain->params.value("width", 0.0);
    const double calls = 3.0 * tr.chain->params.value("layers", 0.0) - 1.0;
    if (inside == tr.chain->counters.end() || !(inside->second.value > 0) || !(rows > 0 && width > 0 && calls > 0))
      continue;
    const double flop = 2.0 * rows * width * width;
    t.points.push_back({json{{"flop", flop}}, flop * calls / inside->second.value, tr.chain->id});
    t.records.push_back(tr.chain->id);
  }
  if (t.points.empty()) return;
  t.note = "one-thread step sequence: its GEMM calls timed inside the step (gemm_s_in_step) over their FLOPs, by "
           "one GEMM's FLOPs: the rate of a product a thread runs alone inside a step (rows mode)";
  f.terms.push_back(std::move(t));
}

// matmul_in_step: the share of the back-to-back rate a step's GEMMs keep, from the sequence records
// of one precision and size: the paired record's gemm_hot_over_in_step (each call inside the step
// against the same call repeated at once), or in files without one hot / the chain's GEMM seconds
// timed inside it (gemm_s_in_step; in older files chain - passes), by the FLOPs of one of the
// chain's GEMMs. Where a size has several records of one mode, the fastest stands for it.
void matmul_in_step_terms(const std::vector<Record>& records, Findings& f) {
  // threads (all, one; older files: all) -> precision -> rows,width,layers -> records
  std::map<std::string, SequencesByPrecision> by_threads;
  bool any = false;
  for (const Record& r : records) {
    if (r.workload != "sequence" || r.backend != Backend::cpu) continue;
    any = true;
    if (!gtb::usable(r) || !r.stats || !(r.stats->median > 0)) continue;
    const std::string key = r.params.dump();
    SequenceRecords& t = by_threads[opt(r, "threads", "all")][precision_of(r)][key];
    const std::string mode = opt(r, "mode", "");
    if (mode != "chain" && mode != "passes" && mode != "hot" && mode != "cold" && mode != "paired") continue;
    const Record*& slot = mode == "chain"    ? t.chain
                          : mode == "passes" ? t.passes
                          : mode == "hot"    ? t.hot
                          : mode == "cold"   ? t.cold
                                             : t.paired;
    if (!slot || r.stats->median < slot->stats->median) slot = &r;
  }
  if (!any) return;
  auto& by = by_threads["all"];  // the GEMMs' share: the steps on all threads
  for (const Precision step_precision : {Precision::fp32, Precision::bf16}) {
    const std::string prec = to_string(step_precision), gemm_prec = to_string(gemm_precision(step_precision));
    cost::Term t;
    t.name = cost::term::kMatmulInStep;
    t.backend = Backend::cpu;
    t.where = json{{"precision", prec}};
    t.form = "table";
    t.axes = {"flop"};
    t.y = "fraction";
    for (const auto& [key, tr] : by[gemm_prec]) {
      // The point's place: one of the chain's GEMMs (rows x width x width, every GEMM of the chain the
      // same FLOPs): the smaller a product, the more of it goes to fetching what the step's passes
      // wrote (one table over the step's working set, as older gtb wrote it, let a step of small
      // GEMMs borrow the share of a large chain).
      const Record* sized = tr.paired ? tr.paired : tr.chain;
      if (!sized) continue;
      const double flop = 2.0 * sized->params.value("rows", 0.0) * sized->params.value("width", 0.0) *
                          sized->params.value("width", 0.0);
      // The paired record's own share (each GEMM call repeated hot a moment after its in-step run).
      if (tr.paired) {
        const auto share = tr.paired->counters.find("gemm_hot_over_in_step");
        if (share != tr.paired->counters.end() && share->second.value > 0 && flop > 0) {
          t.points.push_back({json{{"flop", flop}}, share->second.value, tr.paired->id});
          t.records.push_back(tr.paired->id);
          continue;
        }
      }
      if (!tr.chain || !tr.hot) continue;
      // The step's GEMM calls timed inside it where the chain record has them; otherwise (older
      // files) the chain less its passes run alone.
      const auto timed = tr.chain->counters.find("gemm_s_in_step");
      const bool inside = timed != tr.chain->counters.end();
      if (!inside && !tr.passes) continue;
      const double in_step = inside ? timed->second.value : tr.chain->stats->median - tr.passes->stats->median;
      if (!(in_step > 0 && flop > 0)) continue;
      t.points.push_back({json{{"flop", flop}}, tr.hot->stats->median / in_step, tr.chain->id});
      t.records.push_back(tr.chain->id);
      if (!inside) t.records.push_back(tr.passes->id);
      t.records.push_back(tr.hot->id);
    }
    if (t.points.empty()) {
      f.terms.push_back(cost::cannot_say_term(
          cost::term::kMatmulInStep, Backend::cpu, t.where, "table",
          cost::reason_none(records, Backend::cpu,
                            [&](const Record& r) { return r.workload == "sequence" && precision_of(r) == gemm_prec; },
                            gemm_prec + " GEMM sequence")));
      continue;
    }
    t.note = "each GEMM call hot (repeated at once, gemm_hot_over_in_step; files without paired records: the hot "
             "record) / inside the step (older files: chain - passes): the share of the back-to-back GEMM rate a "
             "step's GEMMs keep, by a GEMM's FLOPs";
    f.terms.push_back(std::move(t));
  }
  matmul_from_memory_terms(by, f);
  matmul_one_thread_terms(by_threads, f);
  pass_in_step_terms(by_threads, f);
}
}  // namespace

Findings compute_findings(const std::vector<Record>& records) {
  Findings f;
  if (!records.empty()) matmul_terms(records, f);  // nothing ran: nothing to offer, not "cannot say"
  matmul_in_step_terms(records, f);
  // best[backend][precision][l2][shape] = fastest ok record over the libraries (variants).
  std::map<std::string, std::map<std::string, std::map<std::string, std::map<Key, Point>>>> best;
  // by_variant[precision][l2][shape][variant] for the cuBLAS vs cuBLASLt table.
  std::map<std::string, std::map<std::string, std::map<Key, std::map<std::string, double>>>> by_variant;
  for (const Record& r : records) {
    if (r.workload != "gemm" || r.status != Status::ok || !r.value) continue;
    if (!r.params.contains("m") || !r.params.contains("n") || !r.params.contains("k")) continue;
    const Key s{r.params["m"].get<std::int64_t>(), r.params["n"].get<std::int64_t>(), r.params["k"].get<std::int64_t>()};
    const std::string be = to_string(r.backend), prec = opt(r, "precision", "fp32"), l2 = opt(r, "l2", "warm");
    Point& p = best[be][prec][l2][s];
    if (*r.value > p.tflops) p = Point{&r, *r.value};
    if (r.backend == Backend::cuda) by_variant[prec][l2][s][r.variant] = *r.value;
  }

  // Percent of the run's best rate per backend and precision (warm and cold alike: the best is the
  // ceiling this run showed for that precision).
  for (const auto& [be, precs] : best)
    for (const auto& [prec, l2s] : precs) {
      Point top;
      for (const auto& [l2, shapes] : l2s)
        for (const auto& [s, p] : shapes)
          if (p.tflops > top.tflops) top = p;
      if (!top.rec) continue;
      f.best_rate.push_back({be, prec,
                             Dims{top.rec->params["m"].get<std::int64_t>(), top.rec->params["n"].get<std::int64_t>(),
                                   top.rec->params["k"].get<std::int64_t>()},
                             top.tflops, top.rec->variant, opt(*top.rec, "l2", "warm")});
      for (const Record& r : records)
        if (r.workload == "gemm" && r.status == Status::ok && r.value && to_string(r.backend) == be &&
            opt(r, "precision", "fp32") == prec)
          f.pct_of_best.emplace_back(r.id, 100.0 * *r.value / top.tflops);
    }

  // Speedup over FP32 and operand memory saved, per backend and shape class, warm caches.
  for (const auto& [be, precs] : best) {
    const auto fp32 = precs.find("fp32");
    if (fp32 == precs.end() || !fp32->second.count("warm")) continue;
    const auto& base = fp32->second.at("warm");
    for (const auto& [prec, l2s] : precs) {
      if (prec == "fp32" || !l2s.count("warm")) continue;
      const Precision p = precision_from_string(prec);
      std::map<std::string, std::vector<double>> ratios;
      std::map<std::string, double> bytes_p, bytes_32;
      for (const auto& [s, pt] : l2s.at("warm")) {
        const auto b = base.find(s);
        if (b == base.end() || b->second.tflops <= 0) continue;
        std::string cls = shape_class(s.m, s.n, s.k);
        if (cls.empty()) cls = "other";
        ratios[cls].push_back(pt.tflops / b->second.tflops);
        bytes_p[cls] += operand_bytes(p, s.m, s.n, s.k);
        bytes_32[cls] += operand_bytes(Precision::fp32, s.m, s.n, s.k);
      }
      for (auto& [cls, v] : ratios) {
        std::sort(v.begin(), v.end());
        double logsum = 0;
        for (double x : v) logsum += std::log(x);
        f.speedup_over_fp32.push_back({be, cls, prec, v.size(), std::exp(logsum / double(v.size())), v.front(),
                                       v.back(), bytes_32[cls], bytes_p[cls],
                                       100.0 * (1.0 - bytes_p[cls] / bytes_32[cls])});
      }
    }
  }

  // cuBLAS (cublasGemmEx) vs cuBLASLt (heuristic, workspace): which was faster per shape.
  for (const auto& [prec, l2s] : by_variant)
    for (const auto& [l2, shapes] : l2s)
      for (const auto& [s, vars] : shapes) {
        if (vars.size() < 2) continue;
        LibraryChoice e{to_shape(s), prec, l2, {}, ""};
        double top = 0;
        for (const auto& [v, t] : vars) {
          e.tflops.emplace_back(v, t);
          if (t > top) top = t, e.faster = v;
        }
        f.library_choice.push_back(std::move(e));
      }

  // GPU vs CPU at the same precision (the harness's comparisons pair any precision with the best CPU).
  const auto cpu = best.find("cpu"), gpu = best.find("cuda");
  if (cpu != best.end() && gpu != best.end())
    for (const auto& [prec, l2s] : gpu->second) {
      const auto cp = cpu->second.find(prec);
      if (cp == cpu->second.end() || !cp->second.count("warm") || !l2s.count("warm")) continue;
      for (const auto& [s, g] : l2s.at("warm")) {
        const auto c = cp->second.at("warm").find(s);
        if (c == cp->second.at("warm").end() || c->second.tflops <= 0) continue;
        f.gpu_vs_cpu_same_precision.push_back(
            {to_shape(s), prec, g.tflops, c->second.tflops, g.tflops / c->second.tflops});
      }
    }

  // Misaligned shapes against their neighbour with every dimension rounded to a multiple of 64.
  auto round64 = [](std::int64_t x) { return std::max<std::int64_t>(64, (x + 32) / 64 * 64); };
  for (const auto& [be, precs] : best)
    for (const auto& [prec, l2s] : precs) {
      if (!l2s.count("warm")) continue;
      const auto& shapes = l2s.at("warm");
      for (const auto& [s, pt] : shapes) {
        const Key a{round64(s.m), round64(s.n), round64(s.k)};
        if (a.m == s.m && a.n == s.n && a.k == s.k) continue;
        if (shape_class(s.m, s.n, s.k) != "alignment") continue;
        const auto ap = shapes.find(a);
        if (ap == shapes.end() || ap->second.tflops <= 0) continue;
        f.alignment.push_back(
            {to_shape(s), be, prec, to_shape(a), pt.tflops, ap->second.tflops, pt.tflops / ap->second.tflops});
      }
    }
  return f;
}

GTB_JSON_WRITE(SpeedupOverFp32, shapes, geomean, min, max, operand_bytes_fp32, operand_bytes, memory_saved_pct)

void to_json(const Findings& found, json& f) {
  cost::write_evidence(f, found.terms, {});
  for (const auto& b : found.best_rate)
    f["best_rate"][b.backend][b.precision] =
        shape_json(b.shape, {{"tflops", b.tflops}, {"variant", b.variant}, {"l2", b.l2}});
  for (const auto& [id, pct] : found.pct_of_best) f["pct_of_best"][id] = pct;
  for (const auto& s : found.speedup_over_fp32) f["speedup_over_fp32"][s.backend][s.shape_class][s.precision] = s;
  for (const auto& c : found.library_choice) {
    json e = shape_json(c.shape, {{"precision", c.precision}, {"l2", c.l2}});
    for (const auto& [v, t] : c.tflops) e[v + "_tflops"] = t;
    e["faster"] = c.faster;
    f["library_choice"].push_back(e);
  }
  for (const auto& g : found.gpu_vs_cpu_same_precision)
    f["gpu_vs_cpu_same_precision"].push_back(shape_json(g.shape, {{"precision", g.precision},
                                                                  {"gpu_tflops", g.gpu_tflops},
                                                                  {"cpu_tflops", g.cpu_tflops},
                                                                  {"gpu_over_cpu", g.gpu_over_cpu}}));
  for (const auto& a : found.alignment)
    f["alignment"].push_back(shape_json(a.shape, {{"backend", a.backend},
                                                  {"precision", a.precision},
                                                  {"aligned", shape_json(a.aligned)},
                                                  {"tflops", a.tflops},
                                                  {"aligned_tflops", a.aligned_tflops},
                                                  {"ratio", a.ratio}}));
}

}  // namespace gtb::gemm
