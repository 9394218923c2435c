// The vectorize family's findings for the report and plots: the launch-bound threshold, the
// speedups of each kernel style over the plain loop, and the rates against the measured ceiling.
#include <algorithm>
#include <map>
#include <set>

#include "bench/vectorize/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
namespace fx = gtb::findings;
namespace vz = gtb::vectorize;

void launch_bound(const std::vector<gtb::Record>& recs, const vz::Findings& found, fx::Family& f) {
  auto& s = f.section("launch_bound", "Launch-bound threshold and CUDA Graph gain");
  // Graph over one launch per step >= 2 means launches take at least half of the time.
  std::map<std::string, std::vector<std::pair<double, double>>> by;  // workload -> (n, speedup)
  if (const auto* rows = found.rows("graph_over_launch_loop"))
    for (const auto& row : *rows)
      if (row.params.contains("n")) by[row.workload].push_back({row.params.at("n").get<double>(), row.speedup});
  auto& t = s.table("launch_bound", {{"workload"}, {"launch-bound (graph >= 2x) up to n", "", Hint::count},
                                     {"best CUDA Graph gain", "", Hint::ratio}});
  for (auto& [wl, pts] : by) {
    std::sort(pts.begin(), pts.end());
    double bound = -1, best = 0;
    for (const auto& [n, sp] : pts) {
      if (sp >= 2.0) bound = n;
      best = std::max(best, sp);
    }
    t.rows.push_back({wl, bound >= 0 ? json(bound) : json("not launch-bound at any measured n"), best});
  }
  if (t.rows.empty())
    s.not_measured = fx::any_number(recs, gtb::Backend::cuda) ? "no graph and launch-loop pair ran"
                                                              : "no GPU record: " + fx::why_none(recs, gtb::Backend::cuda);
}

void speedups(const std::vector<gtb::Record>& recs, const vz::Findings& found, fx::Family& f) {
  auto& s = f.section("speedups", "Speedups");
  // Rows built on a suspect record carry the doubt.
  std::set<std::string> doubt;
  for (const auto& r : recs)
    if (!r.suspect.empty()) doubt.insert(r.workload + " " + fx::params_text(r.params));
  const std::pair<const char*, const char*> all[] = {
      {"vec4_over_scalar", "GPU float4 over scalar kernel"},
      {"vec4_over_launch_loop", "GPU one kernel over a launch per step"},
      {"fused_over_unfused", "GPU fused over unfused kernels"},
      {"thrust_over_vec4", "Thrust over the hand kernel"},
      {"autovec_over_scalar", "CPU auto-vectorized over scalar"},
      {"openmp_over_scalar", "CPU OpenMP over scalar"}};
  auto& t = s.table("speedups", {{"speedup"}, {"lowest", "", Hint::ratio}, {"highest", "", Hint::ratio}, {"highest at"},
                                 {"cases", "", Hint::count}, {"on suspect numbers", "", Hint::count}});
  for (const auto& [key, label] : all) {
    const auto* rows = found.rows(key);
    if (!rows) {
      t.rows.push_back({label, nullptr, nullptr, "not measured", 0, 0});
      continue;
    }
    std::vector<std::pair<double, std::string>> v;
    int doubtful = 0;
    for (const auto& row : *rows) {
      v.push_back({row.speedup, row.workload + " " + fx::params_text(row.params)});
      doubtful += doubt.count(v.back().second) ? 1 : 0;
    }
    if (v.empty()) {
      t.rows.push_back({label, nullptr, nullptr, "not measured", 0, 0});
      continue;
    }
    std::sort(v.begin(), v.end());
    t.rows.push_back({label, v.front().first, v.back().first, v.back().second, v.size(), doubtful});
  }
  auto& g = s.figure("vectorize_bars", "Loops vs vectorized code against the measured ceiling");
  g.kind = "bar";
  g.x = {"variant"};
  g.series = {"workload", "variant", "options.chunk"};
  g.panels = {"backend"};
  g.largest = "params.n";
  // The hand-off pass prices a step's update for the cost model; its sizes stop inside the caches,
  // so its bar would stand beside a memory ceiling it is not measured against.
  g.where = {{"workload!", "handoff"}};
  g.ceiling_line = true;
  g.ylabel = "GB/s (bytes read + written)";
}

const bool kFindings = gtb::add_family_findings<vz::Findings>(
    "vectorize", "Loops, vectorization and launches", 30, vz::compute_findings, vz::to_json,
    [](const std::vector<gtb::Record>& recs, const vz::Findings& found, fx::Family& f) {
      launch_bound(recs, found, f);
      speedups(recs, found, f);
    });
// The records each speed-up divides are measured as pairs (alternating rounds).
const bool kPairs = gtb::add_pairs("vectorize", vz::compared_pairs);

}  // namespace
