// The pitfalls family's findings for the report and plots: each habit's cost per step, where it
// stops dominating, each build's slowdown against the project's default build.
#include <algorithm>

#include "bench/pitfalls/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::json;
using gtb::findings::Hint;
using gtb::findings::or_null;
namespace pf = gtb::pitfalls;

void sections(const std::vector<gtb::Record>& recs, const pf::Findings& found, gtb::findings::Family& f) {
  const std::string gpu_note = gtb::findings::none_note(recs, gtb::Backend::cuda, "GPU records: ", ".");
  auto& habits = f.section("habits", "Habits in the training loop (times in us per step)");
  auto& t = habits.table("steps", {{"backend"}, {"habit"}, {"width", "", Hint::count}, {"batch", "", Hint::count},
                                   {"clean step", "us", Hint::duration}, {"with the habit", "us", Hint::duration},
                                   {"extra", "us", Hint::duration}, {"per read", "us", Hint::duration},
                                   {"of the clean step", "", Hint::percent}});
  for (const auto& r : found.steps) {
    // A habit cannot make a step faster: a negative cost is run-to-run noise, and says so.
    const bool noise = r.extra_us < 0;
    t.rows.push_back({r.backend, r.pitfall + " " + r.variant, r.width, r.batch, r.clean_us, r.step_us,
                      noise ? json("within noise") : json(r.extra_us), or_null(r.us_per_read),
                      noise ? json("within noise") : json(r.pct_of_clean)});
  }
  if (std::any_of(found.steps.begin(), found.steps.end(), [](const pf::Step& s) { return s.paired_runs > 0; }))
    habits.say("Over several runs, \"extra\" is the median of the costs each run measured (the habit's step and "
               "the clean one paired by run); the two steps' medians beside it can be further apart where the "
               "machine's speed changed between runs.");
  if (std::any_of(found.steps.begin(), found.steps.end(), [](const pf::Step& s) { return s.paired_rounds > 0; }))
    habits.say("Where the habit's step and the clean one were measured as a pair (in alternating rounds), "
               "\"extra\" is the median of the rounds' own costs: both steps met the same moments of the machine.");
  if (t.rows.empty()) habits.not_measured = "no habit and clean step of the same model ran" + (gpu_note.empty() ? "" : "; " + gpu_note);
  auto& g = habits.figure("pitfalls_steps", "Cost of a habit per training step against the clean loop");
  g.source = "steps";
  g.x = {"width"};
  g.y = "of the clean step";
  g.series = {"habit", "batch"};
  g.panels = {"backend"};
  g.logx = 2;
  g.xlabel = "model width";
  g.ylabel = "extra time, % of the clean step";
  g.hlines = {{100, "dominates (costs the clean step again)"}};

  auto& dom = f.section("dominance", "Where a habit dominates");
  dom.say("A habit dominates where it costs at least the clean step itself (the step takes twice as long).");
  auto& d = dom.table("dominance", {{"backend"}, {"habit"}, {"batch", "", Hint::count}, {"dominates up to width", "", Hint::count},
                                    {"stops dominating at width", "", Hint::count}, {"under 10% from width", "", Hint::count}});
  for (const auto& r : found.dominance) {
    const auto width_text = [](std::int64_t w) { return gtb::findings::format(double(w), Hint::count, ""); };
    const std::string measured = r.widths.empty()       ? std::string("no width")
                                 : r.widths.size() == 1 ? "width " + width_text(r.widths.front())
                                                        : "widths " + width_text(r.widths.front()) + " to " +
                                                              width_text(r.widths.back());
    // Each cell states a fact of the widths measured: a habit that never dominated has no width where
    // it stops dominating.
    json dominates, stops, under10;
    if (r.dominates_up_to_width) {
      dominates = *r.dominates_up_to_width;
      stops = r.stops_dominating_at_width ? json(*r.stops_dominating_at_width) : json("dominates at every width measured");
    } else {
      dominates = json("never (" + measured + ")");
      stops = json("-");
    }
    under10 = r.under_10pct_from_width ? json(*r.under_10pct_from_width) : json("not within the widths measured");
    d.rows.push_back({r.backend, r.pitfall + " " + r.variant, r.batch, dominates, stops, under10});
  }
  if (d.rows.empty()) dom.not_measured = "no habit ran at several widths";

  auto& b = f.section("builds", "Build flags against the project's default build");
  auto& bt = b.table("builds", {{"backend"}, {"workload"}, {"n", "", Hint::count}, {"build"}, {"against"},
                                {"time", "us", Hint::duration}, {"time ratio", "", Hint::ratio},
                                {"ratio low", "", Hint::ratio}, {"ratio high", "", Hint::ratio},
                                {"error", "", Hint::number}, {"default's error", "", Hint::number}});
  for (const auto& r : found.builds) {
    if (r.variant == r.baseline) continue;
    const std::string& v = r.variant;
    bt.rows.push_back({r.backend, r.workload, r.n, v + (v == "O3_isa" && r.isa ? " (" + r.isa->get<std::string>() + ")" : ""),
                       r.baseline, r.time_us, r.slowdown, or_null(r.slowdown_q1), or_null(r.slowdown_q3),
                       r.rel_norm_err, r.baseline_rel_norm_err});
  }
  if (bt.rows.empty()) {
    b.not_measured = "no build variant and its default ran" + (gpu_note.empty() ? "" : "; " + gpu_note);
  } else {
    b.say("Time of this build over the default build's (above 1: slower), with a conservative spread (its quartiles "
          "over the default's opposite quartiles); error = relative norm against float64.");
    if (!gpu_note.empty()) b.say(gpu_note);
  }
  auto& gb = b.figure("pitfalls_builds", "Build flags: slowdown against the project's default build");
  gb.kind = "bar";
  gb.source = "builds";
  gb.x = {"build"};
  gb.y = "time ratio";
  gb.series = {"workload", "build"};
  gb.panels = {"backend"};
  gb.largest = "n";
  gb.err_low = "ratio low";
  gb.err_high = "ratio high";
  gb.logy = true;
  gb.ylabel = "time / time of the default build";
  gb.hlines = {{1, "default build"}};
}

const bool kFindings = gtb::add_family_findings<pf::Findings>("pitfalls", "Code-level pitfalls", 70, pf::compute_findings,
                                                              pf::to_json, sections);

}  // namespace
