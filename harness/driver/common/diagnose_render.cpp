// Text and Markdown renderings of a diagnosis; presentation only (every number is in the JSON).
#include "harness/driver/common/diagnose_render.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace gtb::diagnose {


std::string format_number(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
// Durations in microseconds as the trace has them, shown in us below a millisecond.
std::string format_us(double us) {
  if (!std::isfinite(us)) return "n/a";
  if (std::fabs(us) >= 1e6) return format_number("%.3g s", us / 1e6);
  if (std::fabs(us) >= 1000) return format_number("%.3g ms", us / 1000);
  return format_number("%.3g us", us);
}
std::string format_share(double f) { return std::isfinite(f) ? format_number("%.1f%%", 100 * f) : "n/a"; }

namespace {

std::string fmt(const char* f, double v) { return format_number(f, v); }
std::string dur(double us) { return format_us(us); }
// Decimal units (GB = 1e9 bytes), as the GB/s beside them.
std::string bytes(double b) {
  if (!std::isfinite(b)) return "n/a";
  if (b >= 1e9) return fmt("%.3g GB", b / 1e9);
  if (b >= 1e6) return fmt("%.3g MB", b / 1e6);
  if (b >= 1e3) return fmt("%.3g kB", b / 1e3);
  return fmt("%.0f B", b);
}
std::string pct(double f) { return format_share(f); }
std::string plural(double n, const std::string& one, const std::string& many);
std::string count(double n) { return std::fabs(n - std::round(n)) < 1e-9 ? fmt("%.0f", n) : fmt("%.1f", n); }

std::string plural(double n, const std::string& one, const std::string& many) {
  return count(n) + " " + (std::fabs(n - 1) < 1e-9 ? one : many);
}

double at(const json& j, const std::vector<std::string>& path) {
  const json* c = &j;
  for (const auto& k : path) {
    if (!c->is_object() || !c->contains(k)) return NAN;
    c = &(*c)[k];
  }
  return c->is_number() ? c->get<double>() : NAN;
}

std::string ex_text(const json& examples) {
  if (!examples.is_array() || examples.empty()) return "";
  const auto& e = examples[0];
  return "; first at ts " + fmt("%.0f", e.value("ts_us", 0.0)) + " us (correlation " +
         std::to_string(e.value("correlation", -1LL)) + ")";
}

}  // namespace

PerStep per_step(const json& d, const std::vector<std::string>& path) {
  const auto& steps = d.value("steps", json::array());
  double sum = 0;
  int n = 0;
  for (const auto& s : steps) {
    const double v = at(s, path);
    if (std::isfinite(v)) sum += v, ++n;
  }
  if (n > 0) return {sum / n, n == 1 ? "in the one step" : "per step (mean of " + std::to_string(n) + ")"};
  return {at(d.value("overall", json::object()), path), "in the trace"};
}

namespace {

// GPU idle time by cause, the streams, the split of busy time.
void gpu_time_lines(const json& d, const json& o, std::vector<SymptomLine>& out) {
  const auto win = per_step(d, {"gpu", "window_us"});
  const auto idle = per_step(d, {"gpu", "idle_us"});
  const auto hl = per_step(d, {"gpu", "idle_by_cause", "host_launch_us"});
  const auto sy = per_step(d, {"gpu", "idle_by_cause", "sync_us"});
  const auto ot = per_step(d, {"gpu", "idle_by_cause", "other_us"});
  out.push_back({"gpu_idle", "GPU idle",
                 pct(idle.value / win.value) + " of the GPU window, " + dur(idle.value) + " of " + dur(win.value) +
                     " " + idle.per + "; waiting for the host to launch " + dur(hl.value) + ", after a sync " +
                     dur(sy.value) + ", other " + dur(ot.value) + " (whole trace: " +
                     pct(at(o, {"gpu", "idle_us"}) / at(o, {"gpu", "window_us"})) + " idle)",
                 "kernel, gpu_memcpy and gpu_memset events on " +
                     plural(static_cast<double>(o["gpu"].value("streams", json::array()).size()), "stream", "streams") +
                     "; launch times from the runtime calls of the same correlation id"});
  std::string st;
  for (const auto& s : o["gpu"].value("streams", json::array())) {
    if (!st.empty()) st += "; ";
    st += "stream " + std::to_string(s.value("stream", -1)) + " busy " + dur(s.value("busy_us", 0.0)) +
          ", idle " + dur(s.value("idle_us", 0.0));
    const double cp = at(s, {"idle_by_cause", "copy_us"});
    if (cp > 0) st += " (" + dur(cp) + " of it while another stream copied)";
  }
  out.push_back({"streams", "streams", st + " (whole trace)", "GPU events grouped by their stream id"});
  const auto c = per_step(d, {"gpu", "split", "compute_us"});
  const auto cm = per_step(d, {"gpu", "split", "communication_us"});
  const auto m = per_step(d, {"gpu", "split", "memory_us"});
  out.push_back({"split", "time split",
                 "compute " + dur(c.value) + ", communication " + dur(cm.value) + ", memory (copies, memsets) " +
                     dur(m.value) + " " + c.per,
                 "kernel names (communication: nccl/rccl), gpu_memcpy and gpu_memset events"});
}

// Copies by direction and memory kind, and memsets.
void copy_lines(const json& d, const json& o, std::vector<SymptomLine>& out) {
  for (const auto& cp : o["gpu"].value("copies", json::array())) {
    const double n = cp.value("count", 0.0);
    const auto& b = cp["bytes"];
    const double steps = std::max<double>(1.0, static_cast<double>(d.value("steps", json::array()).size()));
    const bool per = d.value("steps", json::array()).size() > 0;
    std::string text = count(n / steps) + (per ? " per step" : " in the trace");
    text += ", " + (b.is_number() ? bytes(b.get<double>() / steps) : std::string("bytes not in the trace"));
    text += ", " + dur(cp.value("us", 0.0) / steps);
    if (cp["gbps"].is_number()) text += ", " + fmt("%.3g GB/s", cp["gbps"].get<double>());
    text += " (whole trace: " + plural(n, "copy", "copies") + (b.is_number() ? ", " + bytes(b.get<double>()) : "") + ")";
    out.push_back({"copy_" + cp.value("direction", "") + "_" + cp.value("memory", ""),
                   "copies " + cp.value("direction", "") + " " + cp.value("memory", ""), text,
                   "gpu_memcpy '" + cp.value("event_name", "") + "'" + ex_text(cp.value("examples", json::array()))});
  }
  const auto ms = at(o, {"gpu", "memsets", "count"});
  if (ms > 0)
    out.push_back({"memsets", "memsets",
                   count(ms) + " in the trace, " + bytes(at(o, {"gpu", "memsets", "bytes"})) + ", " +
                       dur(at(o, {"gpu", "memsets", "us"})),
                   "gpu_memset events"});
}

// The host's synchronisations and scalar reads.
void sync_lines(const json& d, const json& o, std::vector<SymptomLine>& out) {
  const auto total = per_step(d, {"host", "syncs", "total"});
  const auto pd = per_step(d, {"host", "syncs", "pageable_d2h_copies"});
  const auto blocked = per_step(d, {"host", "syncs", "host_blocked_us"});
  std::string names;
  const json by_name = o["host"]["syncs"].value("by_name", json::object());
  for (const auto& [n, c] : by_name.items())
    names += (names.empty() ? "" : ", ") + n + " " + std::to_string(c.get<long long>());
  out.push_back({"syncs", "synchronisations",
                 plural(total.value, "sync call", "sync calls") + " " + total.per + " (host blocked " +
                     dur(blocked.value) + "), " + plural(pd.value, "device-to-pageable copy", "device-to-pageable copies") +
                     " (synchronous)",
                 names.empty() ? "no sync runtime calls in the trace" : "cuda_runtime calls, whole trace: " + names});
  const auto item = per_step(d, {"host", "scalar_reads", "count"});
  out.push_back({"scalar_reads", "scalar reads", plural(item.value, "item()-style read", "item()-style reads") + " " + item.per,
                 "cpu_op aten::item / aten::_local_scalar_dense"});
}

// The kernels, the GEMM kernels by kind, the communication kernels.
void kernel_lines(const json& d, const json& o, std::vector<SymptomLine>& out) {
  const auto n = per_step(d, {"gpu", "kernels", "count"});
  const auto p50 = per_step(d, {"gpu", "kernels", "p50_us"});
  const auto p90 = per_step(d, {"gpu", "kernels", "p90_us"});
  const auto sh = per_step(d, {"gpu", "kernels", "shorter_than_launch"});
  const double launch = at(o, {"gpu", "kernels", "launch_us"});
  std::string t = count(n.value) + " kernels " + n.per + ", median " + dur(p50.value) + ", p90 " + dur(p90.value) +
                  ", max " + dur(at(o, {"gpu", "kernels", "max_us"}));
  if (std::isfinite(launch))
    t += "; " + count(sh.value) + " (" + pct(sh.value / n.value) + ") shorter than a launch (" + dur(launch) +
         ", the median launch call here)";
  out.push_back({"kernels", "kernels", t, "kernel events; cudaLaunchKernel-type runtime calls for the launch time"});
  const auto& g = o["gpu"]["gemm_kernels"];
  std::string gt = pct(at(g, {"share_of_kernel_time"})) + " of kernel time (" + dur(at(g, {"us"})) +
                   " in the trace): tensor-core " + count(at(g, {"tensor_core", "count"})) + " kernels, " +
                   dur(at(g, {"tensor_core", "us"}));
  std::string prec;
  const json precisions = g["tensor_core"].value("precision", json::object());
  for (const auto& [k, v] : precisions.items())
    prec += (prec.empty() ? "" : ", ") + k + " " + std::to_string(v.get<long long>());
  if (!prec.empty()) gt += " (" + prec + ")";
  gt += "; FP32 SIMT " + count(at(g, {"simt_fp32", "count"})) + " kernels, " + dur(at(g, {"simt_fp32", "us"}));
  if (at(g, {"simt_fp64", "count"}) > 0) gt += "; FP64 " + count(at(g, {"simt_fp64", "count"}));
  if (at(g, {"unknown", "count"}) > 0)
    gt += "; unclassified " + count(at(g, {"unknown", "count"})) + " (" + dur(at(g, {"unknown", "us"})) + ")";
  out.push_back({"gemm_kernels", "GEMM", gt,
                 "kernel names (rule below)" + ex_text(g["simt_fp32"].value("examples", json::array()))});
  const auto& cm = o["gpu"]["communication"];
  if (at(cm, {"count"}) > 0) {
    const auto ex = per_step(d, {"gpu", "communication", "exposed_us"});
    out.push_back({"communication", "communication",
                   count(at(cm, {"count"})) + " kernels, " + dur(at(cm, {"union_us"})) + " in the trace, " +
                       pct(at(cm, {"overlap_share"})) + " overlapped with compute; exposed " + dur(ex.value) + " " +
                       ex.per,
                   "kernel names containing nccl/rccl" + ex_text(cm.value("examples", json::array()))});
  } else {
    out.push_back({"communication", "communication", "no communication kernels", "kernel names"});
  }
}

void loader_line(const json& d, const json& o, std::vector<SymptomLine>& out) {
  const auto ev = at(o, {"host", "data_loader", "events"});
  if (ev > 0) {
    const auto l = per_step(d, {"host", "data_loader", "us"});
    const auto st = per_step(d, {"host_us"});
    std::string t = dur(l.value) + " " + l.per + " in DataLoader iteration on the host";
    if (std::isfinite(st.value) && st.value > 0) t += " (" + pct(l.value / st.value) + " of the host step)";
    out.push_back({"data_loader", "data loader", t, "cpu_op/user_annotation names containing DataLoader"});
  }
}

}  // namespace

std::vector<SymptomLine> symptom_lines(const json& d) {
  std::vector<SymptomLine> out;
  const json& o = d.value("overall", json::object());
  const bool gpu = o.contains("gpu");
  if (gpu) {
    gpu_time_lines(d, o, out);
    copy_lines(d, o, out);
  }
  sync_lines(d, o, out);
  if (gpu) kernel_lines(d, o, out);
  loader_line(d, o, out);
  return out;
}

namespace {

std::string trace_title(const json& d) {
  const auto& t = d["trace"];
  std::string dev = "no GPU";
  if (!t["devices"].empty()) dev = t["devices"][0].get<std::string>();
  else if (t.value("vendor", "none") != "none") dev = "GPU not named in the trace";
  const int steps = t.value("steps", 0);
  return t.value("file", "") + ": " + dev + ", " + std::to_string(steps) + (steps == 1 ? " profiler step, " : " profiler steps, ") +
         std::to_string(t.value("events", 0ULL)) + " events";
}

void pricing_lines(const json& d, std::vector<std::string>& lines, bool md) {
  const json& p = d.value("pricing", json::object());
  if (p.empty()) return;
  if (!p.value("priced", false)) {
    lines.push_back(p.value("message", ""));
    return;
  }
  lines.push_back(p.value("message", ""));
  const std::string blocked = p["blocked"].is_string() ? p["blocked"].get<std::string>() : "";
  std::string would;
  int rank = 1;
  for (const auto& f : p.value("fixes", json::array())) {
    std::string l;
    if (f["saving_per_step_s"].is_number()) {
      l = std::to_string(rank++) + ". " + f.value("fix", "") + ": saves " +
          dur(f["saving_per_step_s"].get<double>() * 1e6) + " per step";
      if (f["share_of_step"].is_number()) l += " (" + pct(f["share_of_step"].get<double>()) + " of the step)";
      if (f.value("outside_measured", false)) l += " [outside the measured range: clamped]";
      std::string rec;
      for (const auto& r : f.value("records", json::array())) rec += (rec.empty() ? "" : ", ") + r.get<std::string>();
      l += "; " + f.value("how", "") + (rec.empty() ? "" : " (records: " + rec + ")");
    } else if (!blocked.empty() && f.value("cannot_say", "") == blocked) {
      would += (would.empty() ? "" : "; ") + f.value("fix", "");
      continue;
    } else {
      l = std::string(md ? "- " : "   - ") + f.value("fix", "") + ": cannot say: " + f.value("cannot_say", "");
    }
    lines.push_back(l);
  }
  if (!would.empty()) lines.push_back("Fixes the trace's symptoms call for, unpriced: " + would + ".");
}

// The two lists both renderings end with, each under its heading when not empty: what the trace
// cannot say, and what fixing each symptom saves.
void closing_lists(std::ostringstream& o, const json& d, bool md) {
  const auto& cs = d.value("cannot_say", json::array());
  if (!cs.empty()) {
    o << (md ? "\n**Cannot say:**\n\n" : "\n  cannot say:\n");
    for (const auto& c : cs) o << (md ? "- " : "    ") << c.value("symptom", "") << ": " << c.value("why", "") << "\n";
  }
  std::vector<std::string> pl;
  pricing_lines(d, pl, md);
  if (!pl.empty()) {
    o << (md ? "\n**What fixing it saves:**\n\n" : "\n  what fixing it saves:\n");
    for (const auto& l : pl) o << (md ? "" : "    ") << l << "\n";
  }
}

}  // namespace

std::string render_text(const json& d) {
  std::ostringstream o;
  o << "gtb diagnose " << trace_title(d) << "\n\n";
  std::size_t w = 0;
  const auto lines = symptom_lines(d);
  for (const auto& l : lines) w = std::max(w, l.label.size());
  for (const auto& l : lines) {
    o << "  " << l.label << std::string(w + 2 - l.label.size(), ' ') << l.text << "\n";
    o << "  " << std::string(w + 2, ' ') << "from: " << l.from << "\n";
  }
  const auto& steps = d.value("steps", json::array());
  if (!steps.empty() && d["overall"].contains("gpu")) {
    o << "\n  per step: GPU window, idle (host launch / sync / other), kernels, syncs, item()\n";
    for (const auto& s : steps) {
      o << "    " << s.value("name", "");
      if (s.contains("gpu")) {
        const auto& g = s["gpu"];
        o << "  " << dur(g.value("window_us", 0.0)) << ", idle " << dur(g.value("idle_us", 0.0)) << " ("
          << dur(at(g, {"idle_by_cause", "host_launch_us"})) << " / " << dur(at(g, {"idle_by_cause", "sync_us"}))
          << " / " << dur(at(g, {"idle_by_cause", "other_us"})) << "), " << count(at(g, {"kernels", "count"}))
          << " kernels";
      } else {
        o << "  no GPU events";
      }
      o << ", " << count(at(s, {"host", "syncs", "total"})) << " syncs, " << count(at(s, {"host", "scalar_reads", "count"}))
        << " item()\n";
    }
  }
  closing_lists(o, d, false);
  o << "\n  rules: see the \"rules\" of --format json, or docs/diagnose.md\n";
  return o.str();
}

std::string render_markdown(const json& d, int level) {
  const std::string h(static_cast<std::size_t>(level), '#');
  std::ostringstream o;
  o << h << " Diagnosis of " << trace_title(d) << "\n\n";
  o << "| symptom | numbers | from the events |\n| --- | --- | --- |\n";
  auto cell = [](std::string s) {
    for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
  };
  for (const auto& l : symptom_lines(d)) o << "| " << l.label << " | " << cell(l.text) << " | " << cell(l.from) << " |\n";
  const auto& steps = d.value("steps", json::array());
  if (!steps.empty() && d["overall"].contains("gpu")) {
    o << "\n| step | GPU window | idle | host launch | sync | other | kernels | syncs | item() |\n"
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& s : steps) {
      if (!s.contains("gpu")) continue;
      const auto& g = s["gpu"];
      o << "| " << s.value("name", "") << " | " << dur(g.value("window_us", 0.0)) << " | " << dur(g.value("idle_us", 0.0))
        << " | " << dur(at(g, {"idle_by_cause", "host_launch_us"})) << " | " << dur(at(g, {"idle_by_cause", "sync_us"}))
        << " | " << dur(at(g, {"idle_by_cause", "other_us"})) << " | " << count(at(g, {"kernels", "count"})) << " | "
        << count(at(s, {"host", "syncs", "total"})) << " | " << count(at(s, {"host", "scalar_reads", "count"})) << " |\n";
    }
  }
  closing_lists(o, d, true);
  o << "\n<details><summary>Rules</summary>\n\n";
  const json rules = d.value("rules", json::object());
  for (const auto& [k, v] : rules.items()) o << "- **" << k << "**: " << v.get<std::string>() << "\n";
  o << "\n</details>\n";
  return o.str();
}

}  // namespace gtb::diagnose
