// The lookups the model prices with (cost_terms.h): each selects the terms of one name, backend and
// selector through find_terms(), the one place a term is found by its name (term_names.h), and reads its
// number at the query (a latency and bandwidth, a table interpolated log-log, a constant).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "harness/document/format.h"
#include "harness/document/json_read.h"
#include "harness/model/cost_terms.h"

namespace gtb::cost {

namespace {

void merge_records(std::vector<std::string>& into, const std::vector<std::string>& from) {
  for (const auto& r : from)
    if (std::find(into.begin(), into.end(), r) == into.end()) into.push_back(r);
}

// A selector value equals a wanted one: strings exactly, numbers numerically.
bool where_matches(const json& where, const std::string& key, const json& want) {
  const auto it = where.find(key);
  if (it == where.end()) return false;
  if (it->is_number() && want.is_number()) return std::fabs(it->get<double>() - want.get<double>()) < 1e-9;
  return *it == want;
}

std::string describe(const std::string& name, Backend b, const std::string& sel) {
  return "no measured " + name + " term on " + to_string(b) + (sel.empty() ? "" : " (" + sel + ")");
}

Estimate cannot(const std::string& why, const std::vector<std::string>& records = {}) {
  Estimate e;
  e.cannot_say = why;
  e.records = records;
  return e;
}

Estimate from_latency_bandwidth(const Term& t, double x) {
  Estimate e;
  if (t.per_second <= 0) return cannot(t.name + ": the fitted rate is not positive", t.records);
  e.seconds = t.latency_s + x / t.per_second;
  e.records = t.records;
  if ((t.x_min > 0 && x < t.x_min) || (t.x_max > 0 && x > t.x_max)) {
    e.outside_measured = true;
    std::ostringstream os;
    os << t.name << " at " << x << " " << (t.x.empty() ? "units" : t.x) << " is outside the measured " << t.x_min
       << ".." << t.x_max << " (the fitted line, not a measured point)";
    e.note = os.str();
  }
  return e;
}

double axis_value(const json& at, const std::string& axis) {
  const auto it = at.find(axis);
  return it != at.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::vector<const Term*> find_terms(const std::vector<Term>& terms, const std::string& name, Backend b,
                                    const std::function<bool(const Term&)>& pick, std::string& reason) {
  std::vector<const Term*> out;
  for (const auto& t : terms) {
    if (t.name != name || t.backend != b || !pick(t)) continue;
    if (t.usable())
      out.push_back(&t);
    else if (reason.empty())
      reason = t.cannot_say;
  }
  return out;
}
Estimate operator+(const Estimate& a, const Estimate& b) {
  Estimate e;
  e.records = a.records;
  merge_records(e.records, b.records);
  e.outside_measured = a.outside_measured || b.outside_measured;
  // A note already said is not said again (a step sums many parts of one kind).
  e.note = a.note.empty() || a.note.find(b.note) != std::string::npos ? (a.note.empty() ? b.note : a.note)
                                                                      : a.note + "; " + b.note;
  if (a.seconds && b.seconds)
    e.seconds = *a.seconds + *b.seconds;
  else
    e.cannot_say = !a.seconds ? a.cannot_say : b.cannot_say;
  return e;
}

Estimate scaled(const Estimate& e, double factor) {
  Estimate out = e;
  if (out.seconds) *out.seconds *= factor;
  return out;
}

std::optional<Interpolated> interpolate(const Term& t, const json& at) {
  if (t.points.empty() || t.axes.empty()) return std::nullopt;
  const std::size_t na = t.axes.size();
  std::vector<double> q(na);
  for (std::size_t a = 0; a < na; ++a) {
    q[a] = axis_value(at, t.axes[a]);
    if (!(q[a] > 0)) return std::nullopt;
  }
  Interpolated out;
  // Outside: beyond the measured range on any axis; the query is then clamped into it.
  std::vector<double> lo(na, std::numeric_limits<double>::infinity()), hi(na, 0);
  for (const auto& p : t.points)
    for (std::size_t a = 0; a < na; ++a) {
      lo[a] = std::min(lo[a], axis_value(p.at, t.axes[a]));
      hi[a] = std::max(hi[a], axis_value(p.at, t.axes[a]));
    }
  for (std::size_t a = 0; a < na; ++a) {
    if (q[a] < lo[a] * (1 - 1e-9) || q[a] > hi[a] * (1 + 1e-9)) out.outside_measured = true;
    q[a] = std::clamp(q[a], lo[a], hi[a]);
  }
  if (na == 1) {
    // Log-log between the two neighbours.
    std::vector<const Point*> pts;
    for (const auto& p : t.points) pts.push_back(&p);
    std::sort(pts.begin(), pts.end(),
              [&](const Point* a, const Point* b) { return axis_value(a->at, t.axes[0]) < axis_value(b->at, t.axes[0]); });
    const Point* below = pts.front();
    const Point* above = pts.back();
    for (const Point* p : pts) {
      const double x = axis_value(p->at, t.axes[0]);
      if (x <= q[0]) below = p;
      if (x >= q[0]) {
        above = p;
        break;
      }
    }
    const double x0 = axis_value(below->at, t.axes[0]), x1 = axis_value(above->at, t.axes[0]);
    if (x1 <= x0 || below->y <= 0 || above->y <= 0) {
      out.y = below->y;
      out.records = {below->record};
    } else {
      const double f = std::log(q[0] / x0) / std::log(x1 / x0);
      out.y = std::exp(std::log(below->y) + f * (std::log(above->y) - std::log(below->y)));
      out.records = {below->record};
      if (above != below) merge_records(out.records, {above->record});
    }
    return out;
  }
  // Several axes with scattered points: inverse-distance weighting in log space over the nearest few;
  // an exact hit is that point.
  std::vector<std::pair<double, const Point*>> d;
  for (const auto& p : t.points) {
    double s = 0;
    for (std::size_t a = 0; a < na; ++a) {
      const double l = std::log(axis_value(p.at, t.axes[a]) / q[a]);
      s += l * l;
    }
    d.emplace_back(std::sqrt(s), &p);
  }
  std::sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (d.front().first < 1e-9 || d.front().second->y <= 0) {
    out.y = d.front().second->y;
    out.records = {d.front().second->record};
    return out;
  }
  const std::size_t k = std::min<std::size_t>(d.size(), na + 1);
  double wsum = 0, lsum = 0;
  for (std::size_t i = 0; i < k; ++i) {
    if (d[i].second->y <= 0) continue;
    const double w = 1.0 / (d[i].first * d[i].first);
    wsum += w;
    lsum += w * std::log(d[i].second->y);
    merge_records(out.records, {d[i].second->record});
  }
  out.y = std::exp(lsum / wsum);
  return out;
}

Estimate copy_seconds(const std::vector<Term>& terms, const std::string& name, Backend b, const std::string& memory,
                      double bytes) {
  std::string reason;
  const auto found = find_terms(
      terms, name, b, [&](const Term& t) { return memory.empty() || where_matches(t.where, "memory", memory); }, reason);
  for (const Term* t : found)
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
  return cannot(reason.empty() ? describe(name, b, memory.empty() ? "" : "memory=" + memory) : reason);
}

namespace {
// A term's orientation: files written before orientations were measured hold A B ("nn") tables.
bool orientation_is(const Term& t, const std::string& orientation) {
  const auto it = t.where.find("orientation");
  if (it == t.where.end()) return orientation == "nn";
  return it->is_string() && it->get<std::string>() == orientation;
}

// The rate of the first usable table of `name` for this precision and orientation; nullopt (with
// the publisher's reason) when none.
std::optional<Estimate> table_matmul(const std::vector<Term>& terms, const std::string& name, Backend b,
                                     const std::string& precision, const std::string& orientation, double m, double n,
                                     double k, double count, std::string& reason) {
  const auto found = find_terms(
      terms, name, b,
      [&](const Term& t) { return where_matches(t.where, "precision", precision) && orientation_is(t, orientation); },
      reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    const auto ip = interpolate(*t, json{{"m", m}, {"n", n}, {"k", k}});
    if (!ip || ip->y <= 0) continue;
    Estimate e;
    e.seconds = 2.0 * m * n * k * count / ip->y;
    e.records = ip->records;
    e.outside_measured = ip->outside_measured;
    if (e.outside_measured) {
      std::ostringstream os;
      os << name << " " << m << "x" << n << "x" << k << " " << orientation << " " << precision
         << " is outside the measured shapes: the nearest measured rate is used";
      e.note = os.str();
    }
    return e;
  }
  return std::nullopt;
}
}  // namespace

namespace {
Estimate matmul_at_precision(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                             double n, double k, const std::string& orientation);

// The measured point of `precision`'s nn table nearest (in log m, n, k) to the query, with the FP32 nn
// rate at that very shape where FP32 was measured there: their ratio is the reduced-precision speedup
// at the nearest shape both were measured at.
struct SpeedupRatio {
  double ratio = 0;
  json at;
  std::vector<std::string> records;
};
std::optional<SpeedupRatio> nearest_speedup(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                            double m, double n, double k, const std::string& name = term::kMatmul) {
  std::string unused;
  const Point* best = nullptr;
  double dist = std::numeric_limits<double>::infinity();
  for (const Term* t : find_terms(
           terms, name, b,
           [&](const Term& x) { return where_matches(x.where, "precision", precision) && orientation_is(x, "nn"); },
           unused)) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    for (const auto& p : t->points) {
      const double d = std::fabs(std::log(axis_value(p.at, "m") / m)) + std::fabs(std::log(axis_value(p.at, "n") / n)) +
                       std::fabs(std::log(axis_value(p.at, "k") / k));
      if (p.y > 0 && d < dist) dist = d, best = &p;
    }
  }
  if (!best) return std::nullopt;
  for (const Term* t : find_terms(
           terms, term::kMatmul, b,
           [&](const Term& x) { return where_matches(x.where, "precision", "fp32") && orientation_is(x, "nn"); },
           unused)) {
    if (t->form != "table" || t->y != "flop_per_s") continue;
    const auto ip = interpolate(*t, best->at);
    if (!ip || ip->outside_measured || ip->y <= 0) continue;
    SpeedupRatio r;
    r.ratio = best->y / ip->y;
    r.at = best->at;
    r.records = ip->records;
    merge_records(r.records, {best->record});
    return r;
  }
  return std::nullopt;
}
}  // namespace

// FP32 from its tables. A reduced precision (tf32, bf16, fp16) from its own tables where they cover the
// shape; elsewhere the FP32 seconds of this shape and orientation divided by the speedup measured at
// the nearest shape both precisions were measured at (the reduced-precision records are library
// shapes, square and large, while FP32 has the step's own sites). Either way no slower than FP32 at
// that shape: a step runs its products as FP32 on rounded operands where that is the faster path (the
// CPU steps do where the CPU has no native BF16).
Estimate matmul_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m, double n,
                        double k, const std::string& orientation, std::string* rate_precision) {
  if (rate_precision) *rate_precision = precision;
  if (precision == "fp32") return matmul_at_precision(terms, b, precision, m, n, k, orientation);
  Estimate own = matmul_at_precision(terms, b, precision, m, n, k, orientation);
  if (!own.seconds) return own;  // no record of this precision: cannot say, never FP32 in its place
  const Estimate fp = matmul_at_precision(terms, b, "fp32", m, n, k, orientation);
  if (!fp.seconds) return own;
  Estimate e = own;
  if (own.outside_measured) {
    if (const auto r = nearest_speedup(terms, b, precision, m, n, k)) {
      e = fp;
      e.seconds = *fp.seconds / r->ratio;
      merge_records(e.records, r->records);
      e.outside_measured = true;
      std::ostringstream os;
      os.precision(3);
      os << precision << " " << m << "x" << n << "x" << k << " " << orientation << " outside its measured shapes: the fp32 "
         << "rate of this shape x the " << precision << "/fp32 speedup " << r->ratio << " measured at "
         << axis_value(r->at, "m") << "x" << axis_value(r->at, "n") << "x" << axis_value(r->at, "k");
      e.note = os.str();
    }
  }
  if (*fp.seconds < *e.seconds) {
    if (rate_precision) *rate_precision = "fp32";
    Estimate faster = fp;
    merge_records(faster.records, e.records);
    faster.outside_measured = fp.outside_measured;
    faster.note = (fp.note.empty() ? "" : fp.note + "; ") + precision +
                  " products run as fp32 on rounded operands: the faster path at this shape";
    return faster;
  }
  return e;
}

namespace {
Estimate matmul_at_precision(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                             double n, double k, const std::string& orientation) {
  std::string reason;
  if (orientation != "nn") {
    if (auto e = table_matmul(terms, term::kMatmul, b, precision, orientation, m, n, k, 1, reason)) return *e;
    reason.clear();
  }
  if (auto e = table_matmul(terms, term::kMatmul, b, precision, "nn", m, n, k, 1, reason)) {
    if (orientation != "nn") {
      // No transposed records (a GPU run, an older file): the A B rate stands in, and says so.
      e->note = (e->note.empty() ? "" : e->note + "; ") + std::string("no ") + orientation +
                " matmul records: priced at the A B rate";
    }
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kMatmul, b, "precision=" + precision) : reason);
}
}  // namespace

Estimate matmul_autocast_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                                 double n, double k, const std::string& orientation) {
  std::string reason;
  for (const std::string& o : {orientation, std::string("nn")}) {
    auto e = table_matmul(terms, term::kMatmulAutocast, b, precision, o, m, n, k, 1, reason);
    if (!e) continue;
    // Outside its shapes (the small and skinny sites): the FP32 seconds of this shape over the
    // speedup measured at the nearest autocast point, as matmul_seconds does for the library shapes.
    const Estimate fp = matmul_at_precision(terms, b, "fp32", m, n, k, orientation);
    const auto r = e->outside_measured && fp.seconds ? nearest_speedup(terms, b, precision, m, n, k, term::kMatmulAutocast)
                                                     : std::nullopt;
    if (r) {
      std::ostringstream os;
      os.precision(3);
      os << "the fp32 rate of this shape x the " << precision << " autocast/fp32 speedup " << r->ratio
         << " measured at the nearest autocast shape";
      *e = scaled(fp, 1.0 / r->ratio);
      merge_records(e->records, r->records);
      e->outside_measured = true;
      e->note = os.str();
    }
    if (o != orientation) e->note = (e->note.empty() ? "" : e->note + "; ") + "no " + orientation +
                                    " matmul_autocast records: priced at the A B rate";
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kMatmulAutocast, b, "precision=" + precision) : reason);
}

Estimate matmul_batched_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision, double m,
                                double n, double k, const std::string& orientation, double count) {
  std::string reason;
  if (auto e = table_matmul(terms, term::kMatmulBatched, b, precision, orientation, m, n, k, count, reason)) return *e;
  // A reduced precision without batched records of its own: the FP32 batched rate, times the ratio of
  // the two precisions' single-product prices at this shape (see matmul_seconds).
  if (precision != "fp32") {
    std::string unused;
    const auto fpb = table_matmul(terms, term::kMatmulBatched, b, "fp32", orientation, m, n, k, count, unused);
    const Estimate own = matmul_seconds(terms, b, precision, m, n, k, orientation);
    const Estimate fp = matmul_seconds(terms, b, "fp32", m, n, k, orientation);
    if (fpb && own.seconds && fp.seconds && *fp.seconds > 0) {
      Estimate e = scaled(*fpb, *own.seconds / *fp.seconds);
      merge_records(e.records, own.records);
      e.outside_measured = fpb->outside_measured || own.outside_measured;
      e.note = "the fp32 batched rate x the " + precision + "/fp32 price ratio of one product of this shape";
      return e;
    }
    if (!own.seconds) return own;
  }
  // No batched records: each product at the single-GEMM rate of its shape.
  Estimate e = scaled(matmul_seconds(terms, b, precision, m, n, k, orientation), count);
  if (e.seconds) e.note = (e.note.empty() ? "" : e.note + "; ") + std::string("no batched matmul records: each product priced alone");
  return e;
}

namespace {
// A fraction table's value at `at` (the share in the estimate's number, the table's records), or none.
std::optional<Estimate> fraction_at(const Term& t, const json& at) {
  const auto ip = interpolate(t, at);
  if (!ip || !(ip->y > 0)) return std::nullopt;
  Estimate e;
  e.seconds = ip->y;  // a fraction, carried in the estimate's number
  e.records = t.records;
  e.outside_measured = ip->outside_measured;
  return e;
}
}  // namespace

namespace {
// The first of a precision's fraction tables `name` of backend `b` that gives a value where `at_of`
// places the query (nullopt: the table does not apply), or why none does.
Estimate first_fraction(const std::vector<Term>& terms, const std::string& name, Backend b, const std::string& precision,
                        const std::function<std::optional<json>(const Term&)>& at_of) {
  std::string reason;
  const auto found = find_terms(
      terms, name, b, [&](const Term& t) { return where_matches(t.where, "precision", precision); }, reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "fraction") continue;
    if (const auto at = at_of(*t))
      if (auto e = fraction_at(*t, *at)) return *e;
  }
  return cannot(reason.empty() ? describe(name, b, "precision=" + precision) : reason);
}
}  // namespace

Estimate matmul_in_step_fraction(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                 double working_set_bytes, double gemm_flop) {
  return first_fraction(terms, term::kMatmulInStep, b, precision, [&](const Term& t) -> std::optional<json> {
    // Over one GEMM's FLOPs (this gtb's sequence records), or over the step's working set (older files).
    const std::string axis = t.axes.empty() ? "bytes" : t.axes[0];
    const double at = axis == "flop" ? gemm_flop : working_set_bytes;
    if (!(at > 0)) return std::nullopt;
    return json{{axis, at}};
  });
}

Estimate matmul_from_memory_fraction(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                     double working_set_bytes, double gemm_flop) {
  return first_fraction(terms, term::kMatmulFromMemory, b, precision, [&](const Term& t) -> std::optional<json> {
    // Over one GEMM's FLOPs, for a step whose working set is above the cache the term was measured past.
    if (t.axes != std::vector<std::string>{"flop"} || !(t.x_min > 0 && working_set_bytes > t.x_min && gemm_flop > 0))
      return std::nullopt;
    return json{{"flop", gemm_flop}};
  });
}

Estimate pass_in_step_fraction(const std::vector<Term>& terms, Backend b, const std::string& name,
                               const std::string& precision, const std::string& threads, double bytes, double rows) {
  std::string reason;
  const auto found = find_terms(
      terms, name, b,
      [&](const Term& t) {
        return where_matches(t.where, "precision", precision) && t.where.value("threads", "all") == threads;
      },
      reason);
  for (const Term* t : found) {
    if (t->form != "table" || t->y != "fraction" || !(bytes > 0)) continue;
    if (t->axes == std::vector<std::string>{"bytes"}) {
      if (auto e = fraction_at(*t, json{{"bytes", bytes}})) return *e;
    } else if (t->axes == std::vector<std::string>{"bytes", "rows"} && rows > 0) {
      if (auto e = fraction_at(*t, json{{"bytes", bytes}, {"rows", rows}})) return *e;
    }
  }
  return cannot(reason.empty() ? describe(name, b, "precision=" + precision + " threads=" + threads) : reason);
}

namespace {
Estimate constant_seconds(const std::vector<Term>& terms, const std::string& name, Backend b,
                          const std::function<bool(const Term&)>& ok, const std::string& sel) {
  std::string reason;
  for (const Term* t : find_terms(terms, name, b, ok, reason))
    if (t->form == "constant" && std::isfinite(t->value)) {
      Estimate e;
      e.seconds = t->value;
      e.records = t->records;
      e.note = t->note;
      return e;
    }
  return cannot(reason.empty() ? describe(name, b, sel) : reason);
}
}  // namespace

Estimate constant_value(const std::vector<Term>& terms, const std::string& name, Backend b) {
  return constant_seconds(terms, name, b, [](const Term&) { return true; }, "");
}

Estimate launch_seconds(const std::vector<Term>& terms, const std::string& mode) {
  return constant_seconds(terms, term::kLaunch, Backend::cuda,
                          [&](const Term& t) { return where_matches(t.where, "mode", mode); }, "mode=" + mode);
}

Estimate host_sync_seconds(const std::vector<Term>& terms, Backend b) {
  return constant_seconds(terms, term::kHostSync, b, [](const Term&) { return true; }, "");
}

Estimate overlap_fraction(const std::vector<Term>& terms, Backend b) {
  return constant_seconds(terms, term::kCommOverlap, b, [](const Term&) { return true; }, "");
}

Estimate allreduce_seconds(const std::vector<Term>& terms, Backend b, int ranks, double bytes) {
  if (ranks <= 1) {
    Estimate e;
    e.seconds = 0.0;
    return e;
  }
  std::string reason;
  const auto found = find_terms(
      terms, term::kAllreduce, b, [&](const Term& t) { return where_matches(t.where, "ranks", ranks); }, reason);
  for (const Term* t : found)
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
  return cannot(reason.empty() ? describe(term::kAllreduce, b, "ranks=" + std::to_string(ranks)) : reason);
}

namespace {
// `amount` (bytes, logits) at the rate a table term in unit `y` gives at it (along `axis` where the
// term names no axis), or none when the term is no such table or has no positive rate there.
std::optional<Estimate> seconds_at_rate(const Term& t, const std::string& y, const std::string& axis, double amount) {
  if (t.form != "table" || t.y != y) return std::nullopt;
  const auto ip = interpolate(t, json{{t.axes.empty() ? axis : t.axes[0], amount}});
  if (!ip || ip->y <= 0) return std::nullopt;
  Estimate e;
  e.seconds = amount / ip->y;
  e.records = ip->records;
  e.outside_measured = ip->outside_measured;
  return e;
}
}  // namespace

Estimate stream_seconds(const std::vector<Term>& terms, Backend b, double bytes, const std::string& op) {
  std::string reason;
  // A plain pass uses the terms without an op; a GELU pass those measured computing one.
  auto ok = [&](const Term& t) { return op.empty() ? !t.where.contains("op") : where_matches(t.where, "op", op); };
  // Several publishers may measure streaming over different sizes (large arrays only, or cache-sized
  // ones too): the table whose sizes cover the pass, else the one whose sizes come nearest (in log).
  std::vector<const Term*> found = find_terms(terms, term::kStreamBandwidth, b, ok, reason);
  auto distance = [&](const Term* t) {
    if (t->form != "table" || t->points.empty()) return t->form == "latency_bandwidth" ? 0.0 : 1e300;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& p : t->points) {
      const double x = axis_value(p.at, t->axes.empty() ? "bytes" : t->axes[0]);
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (!(bytes > 0) || !(lo > 0)) return 1e300;
    return bytes < lo ? std::log(lo / bytes) : bytes > hi ? std::log(bytes / hi) : 0.0;
  };
  std::stable_sort(found.begin(), found.end(), [&](const Term* x, const Term* y) { return distance(x) < distance(y); });
  for (const Term* t : found) {
    if (t->form == "latency_bandwidth") return from_latency_bandwidth(*t, bytes);
    auto e = seconds_at_rate(*t, "bytes_per_s", "bytes", bytes);
    if (!e) continue;
    if (e->outside_measured) e->note = "streaming work outside the measured sizes: the nearest measured rate is used";
    return *e;
  }
  return cannot(reason.empty() ? describe(term::kStreamBandwidth, b, op.empty() ? "" : "op=" + op) : reason);
}

Estimate softmax_xent_seconds(const std::vector<Term>& terms, Backend b, const std::string& threads, double logits) {
  std::string reason;
  const auto found =
      find_terms(terms, term::kSoftmaxXent, b, [&](const Term& t) { return where_matches(t.where, "threads", threads); }, reason);
  for (const Term* t : found)
    if (auto e = seconds_at_rate(*t, "logits_per_s", "logits", logits)) return *e;
  return cannot(reason.empty() ? describe(term::kSoftmaxXent, b, "threads=" + threads) : reason);
}

Estimate matmul_one_thread_seconds(const std::vector<Term>& terms, Backend b, const std::string& precision,
                                   double flop) {
  std::string reason;
  const auto found = find_terms(
      terms, term::kMatmulOneThread, b, [&](const Term& t) { return where_matches(t.where, "precision", precision); },
      reason);
  for (const Term* t : found)
    if (auto e = seconds_at_rate(*t, "flop_per_s", "flop", flop)) return *e;
  return cannot(reason.empty() ? describe(term::kMatmulOneThread, b, "precision=" + precision) : reason);
}

Estimate loader_seconds(const std::vector<Term>& terms, Backend b, int workers, double sample_us, double batch) {
  std::string reason;
  const auto found = find_terms(terms, term::kLoader, b, [](const Term& t) { return t.form == "table"; }, reason);
  // The loader measured at the per-sample cost nearest (in log) to the one asked for.
  const Term* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const Term* t : found) {
    const double us = json_read::number_at(t->where, {"sample_us"});
    const double d = std::isfinite(us) && us > 0 && sample_us > 0 ? std::fabs(std::log(us / sample_us)) : 1e9;
    if (d < best_d) best_d = d, best = t;
  }
  if (!best) return cannot(reason.empty() ? describe(term::kLoader, b, "") : reason);
  const auto ip = interpolate(*best, json{{best->axes.empty() ? "workers" : best->axes[0], workers}});
  if (!ip || ip->y <= 0) return cannot("the loader term has no positive rate", best->records);
  Estimate e;
  const double measured_us = json_read::number_at(best->where, {"sample_us"});
  double rate = ip->y;
  // Scaled to the asked per-sample cost: the loader's rate is bound by preprocessing work per worker.
  if (std::isfinite(measured_us) && measured_us > 0 && sample_us > 0 && best_d > 1e-9) {
    rate *= measured_us / sample_us;
    e.note = "loader measured at " + std::to_string(static_cast<long>(measured_us)) +
             " us per sample, scaled to the asked cost";
    e.outside_measured = true;
  }
  e.seconds = batch / rate;
  e.records = ip->records;
  e.outside_measured = e.outside_measured || ip->outside_measured;
  return e;
}

}  // namespace gtb::cost
