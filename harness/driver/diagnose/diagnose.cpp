// gtb diagnose TRACE [--results RESULTS.json]: the symptoms of a PyTorch profiler trace, priced with gtb's records;
// a whole job (one trace per rank), or two traces side by side (--diff).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/flags.h"
#include "harness/driver/diagnose/diagnose_job.h"
#include "harness/driver/diagnose/diagnose_price.h"
#include "harness/driver/common/diagnose_render.h"
#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {
constexpr const char* kUsage =
    "usage: gtb diagnose TRACE [--results RESULTS.json] [--format text|markdown|json] [--out FILE] [--plot DIR]\n"
    "       gtb diagnose DIR | TRACE TRACE... [options]     a whole job: one trace per rank\n"
    "       gtb diagnose --diff BEFORE AFTER [options]       two traces side by side\n"
    "  TRACE    a PyTorch profiler trace (Chrome-trace JSON, plain or gzipped)\n"
    "  DIR      a folder of traces (*.json, *.json.gz), one per rank: the rank from the trace's\n"
    "           distributedInfo, else rank-N in the file name; read concurrently (--jobs N threads,\n"
    "           default: the cores)\n"
    "  --results  a gtb results file from the same kind of machine: prices each fix from its records\n"
    "  --format   text (default), markdown or json (the json is what `gtb report --diagnosis` reads)\n"
    "  --out      write there (atomically) instead of stdout\n"
    "  --plot DIR also draw one step's GPU timeline by cause: DIR/diagnose_timeline.png (matplotlib;\n"
    "             GTB_PYTHON picks the Python) and DIR/diagnosis.json beside it; for a job, each rank's\n"
    "             step by cause (DIR/diagnose_job.png); for --diff, before/after per category\n"
    "             (DIR/diagnose_diff.png)\n"
    "  --jobs N   read a job's traces N at a time (default: the cores)\n"
    "exit 0 on a diagnosis, 2 on bad usage or a malformed trace (the message names the file and the\n"
    "byte offset; nothing is written)\n";

// The figure: plots/diagnose_plot.py of the source tree, on the diagnosis written beside it.
int draw(const json& d, const std::string& dir) {
  const std::string script = std::string(GTB_SOURCE_DIR) + "/plots/diagnose_plot.py";
  const std::string data = dir + "/diagnosis.json";
  const char* py = std::getenv("GTB_PYTHON");
  ProcessSpec mk;
  mk.program = "mkdir";
  mk.args = {"-p", dir};
  mk.search_path = true;
  if (!gtb::run_process(mk).started()) return kExitBadInput;
  write_file_atomic(data, d.dump(1) + "\n");
  ProcessSpec spec;
  spec.program = py && *py ? py : "python3";
  spec.args = {script, data, "--out", dir};
  spec.search_path = true;
  std::fflush(stdout);
  const ProcessResult r = gtb::run_process(spec);
  if (!r.started() || r.signal != 0 || r.exit_code != 0) {
    std::fprintf(stderr, "gtb diagnose: the timeline figure was not drawn (%s %s)\n", spec.program.c_str(), script.c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// The traces of a job: the files named, or a folder's *.json / *.json.gz, sorted.
std::vector<std::string> job_files(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> in;
      for (const auto& e : fs::directory_iterator(a, ec)) {
        const std::string n = e.path().filename().string();
        const bool trace = n.size() > 5 && (n.rfind(".json") == n.size() - 5 || (n.size() > 8 && n.rfind(".json.gz") == n.size() - 8));
        if (e.is_regular_file() && trace) in.push_back(e.path().string());
      }
      std::sort(in.begin(), in.end());
      if (in.empty()) throw std::runtime_error(a + ": no traces (*.json, *.json.gz) in the folder");
      out.insert(out.end(), in.begin(), in.end());
    } else {
      out.push_back(a);
    }
  }
  return out;
}

// Reads every rank's trace, `threads` at a time; each thread holds one trace at a time and keeps only its
// diagnosis and communication calls. Throws the first failing file's error (in file order), naming it.
std::vector<diagnose::RankInput> read_ranks(const std::vector<std::string>& files, unsigned threads) {
  std::vector<diagnose::RankInput> ranks(files.size());
  std::vector<std::string> errors(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      try {
        const auto t = diagnose::read_trace(files[i]);
        auto& r = ranks[i];
        r.file = base_name(files[i]);
        r.diagnosis = diagnose::diagnose_trace(t, r.file);
        r.diagnosis.erase("timeline");
        r.calls = diagnose::communication_calls(t);
        if (t.rank) {
          r.rank = *t.rank;
          r.rank_from = "distributedInfo";
        } else if (const auto fr = diagnose::rank_from_file_name(r.file)) {
          r.rank = *fr;
          r.rank_from = "file name";
        } else {
          errors[i] = "no rank: the trace has no distributedInfo.rank and its file name no rank-N";
        }
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(files.size())));
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  for (std::size_t i = 0; i < files.size(); ++i)
    if (!errors[i].empty()) throw std::runtime_error(files[i] + ": " + errors[i]);
  std::map<std::int64_t, std::string> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto [it, fresh] = seen.emplace(ranks[i].rank, files[i]);
    if (!fresh)
      throw std::runtime_error(files[i] + ": rank " + std::to_string(ranks[i].rank) + " again (also " + it->second + ")");
  }
  std::sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return ranks;
}

}  // namespace

int cmd_diagnose(int argc, char** argv) {
  std::vector<std::string> traces;
  std::string results, format = "text", out, plot, jobs_text;
  bool diff = false;
  for (int i = 1; i < argc; ++i) {
    FlagArg arg(argc, argv, i);
    const std::string a = arg.text();
    auto value = [&](const std::string& flag, std::string& dst) {
      if (!arg.is(flag)) return false;
      dst = arg.value(flag);
      return true;
    };
    try {
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return kExitOk;
      }
      if (a == "--diff") {
        diff = true;
        continue;
      }
      if (value("--results", results) || value("--format", format) || value("--out", out) || value("--plot", plot) ||
          value("--jobs", jobs_text))
        continue;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: %s\n%s", e.what(), kUsage);
      return kExitBadInput;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "gtb diagnose: unknown option %s\n%s", a.c_str(), kUsage);
      return kExitBadInput;
    }
    traces.push_back(a);
  }
  if (traces.empty()) {
    std::fprintf(stderr, "gtb diagnose: no trace given\n%s", kUsage);
    return kExitBadInput;
  }
  if (diff && traces.size() != 2) {
    std::fprintf(stderr, "gtb diagnose: --diff takes two traces, BEFORE and AFTER (got %zu)\n", traces.size());
    return kExitBadInput;
  }
  if (format != "text" && format != "markdown" && format != "json") {
    std::fprintf(stderr, "gtb diagnose: --format must be text, markdown or json (got '%s')\n", format.c_str());
    return kExitBadInput;
  }
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (!jobs_text.empty()) {
    try {
      const long n = std::stol(jobs_text);
      if (n < 1 || n > 1024) throw std::out_of_range("range");
      threads = static_cast<unsigned>(n);
    } catch (const std::exception&) {
      std::fprintf(stderr, "gtb diagnose: --jobs must be a whole number from 1 to 1024 (got '%s')\n", jobs_text.c_str());
      return kExitBadInput;
    }
  }
  json results_doc;
  if (!results.empty()) {
    try {
      results_doc = load_document(results);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: --results %s: %s\n", results.c_str(), e.what());
      return kExitBadInput;
    }
  }
  std::error_code ec;
  const bool job = !diff && (traces.size() > 1 || std::filesystem::is_directory(traces[0], ec));
  json d;
  std::string text;
  if (diff) {
    json ds[2];
    std::vector<diagnose::NameTally> names[2];
    for (int k = 0; k < 2; ++k) {
      try {
        const auto t = diagnose::read_trace(traces[static_cast<std::size_t>(k)]);
        ds[k] = diagnose::diagnose_trace(t, base_name(traces[static_cast<std::size_t>(k)]));
        names[k] = diagnose::name_tallies(t);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gtb diagnose: %s: %s\n", traces[static_cast<std::size_t>(k)].c_str(), e.what());
        return kExitBadInput;
      }
    }
    d = diagnose::diagnose_diff(ds[0], names[0], ds[1], names[1]);
    text = format == "json" ? d.dump(1) + "\n" : format == "markdown" ? diagnose::render_diff_markdown(d) : diagnose::render_diff_text(d);
  } else if (job) {
    try {
      const auto ranks = read_ranks(job_files(traces), threads);
      d = diagnose::diagnose_job(ranks, results.empty() ? nullptr : &results_doc, base_name(results));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: %s\n", e.what());
      return kExitBadInput;
    }
    text = format == "json" ? d.dump(1) + "\n" : format == "markdown" ? diagnose::render_job_markdown(d) : diagnose::render_job_text(d);
  } else {
    const std::string& trace = traces[0];
    try {
      const auto t = diagnose::read_trace(trace);
      d = diagnose::diagnose_trace(t, base_name(trace));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: %s: %s\n", trace.c_str(), e.what());
      return kExitBadInput;
    }
    try {
      if (!results.empty()) diagnose::price_diagnosis(d, results_doc, base_name(results));
      else diagnose::explain_unpriced(d);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gtb diagnose: --results %s\n", e.what());
      return kExitBadInput;
    }
    text = format == "json"       ? d.dump(1) + "\n"
           : format == "markdown" ? diagnose::render_markdown(d)
                                  : diagnose::render_text(d);
  }
  try {
    if (out.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
    else write_file_atomic(out, text);
    if (!out.empty()) std::fprintf(stderr, "gtb diagnose: %s written\n", out.c_str());
    if (!plot.empty()) return draw(d, plot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb diagnose: %s\n", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gtb::driver
