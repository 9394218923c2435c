// The ceilings family's findings: the measured ceilings other families report percent of.
#include "bench/ceilings/findings.h"
#include "gtb/findings.h"
#include "gtb/gtb.h"

namespace {

using gtb::findings::Hint;
namespace cl = gtb::ceilings;

void sections(const std::vector<gtb::Record>& recs, const cl::Findings& found, gtb::findings::Family& f) {
  auto& s = f.section("ceilings", "Ceilings");
  auto& t = s.table("ceilings", {{"ceiling"}, {"value", "", Hint::number}, {"unit"}});
  for (const auto& [name, value] : found.measured()) t.rows.push_back({name, value, gtb::ceiling_unit(name)});
  if (t.rows.empty()) {
    s.tables.clear();
    s.not_measured = "every ceilings record lacks a number (" + gtb::findings::why_none(recs, gtb::Backend::cpu) + ")";
  } else {
    s.say("Other families report percent of these (GB = 10^9 bytes). Host bandwidth ceilings count only sizes well "
          "above the last-level cache; the FMA ceiling is the most the CPU's cores compute in FP32.");
  }
  if (!gtb::findings::any_number(recs, gtb::Backend::cuda))
    s.say("No device ceiling: " + gtb::findings::why_none(recs, gtb::Backend::cuda) + ".");
  auto& g = s.figure("ceilings_stream", "Streaming bandwidth vs array size (copy reads one array and writes one; triad reads two, writes one)");
  g.where = {{"workload", {"stream_copy", "stream_triad"}}};
  g.x = {"params.bytes"};
  g.series = {"backend", "variant", "options.stores"};
  g.panels = {"workload"};
  g.logx = 2;
  // params.bytes is one array's size, not the bytes moved: a copy moves two such arrays, a triad three.
  g.xlabel = "size of one array (bytes)";
  g.ylabel = "GB/s (10^9 bytes/s)";
}

const bool kFindings = gtb::add_family_findings<cl::Findings>("ceilings", "Measured ceilings", 10, cl::compute_findings,
                                                              cl::to_json, sections);

}  // namespace
