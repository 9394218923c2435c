// gtb diagnose TRACE [--results RESULTS.json]: the symptoms of a PyTorch profiler trace, priced with gtb's records;
// a whole job (one trace per rank), or two traces side by side (--diff).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/output.h"
#include "harness/driver/diagnose/diagnose_job.h"
#include "harness/driver/diagnose/diagnose_price.h"
#include "harness/driver/common/diagnose_render.h"
#include "harness/driver/diagnose/diagnose_symptoms.h"
#include "harness/driver/diagnose/diagnose_trace.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {
// What --help shows after CLI11's list of flags.
constexpr const char* kFooter =
    "  gtb diagnose TRACE [options]                   one trace\n"
    "  gtb diagnose DIR | TRACE TRACE... [options]    a whole job: one trace per rank\n"
    "  gtb diagnose --diff BEFORE AFTER [options]     two traces side by side\n"
    "TRACE: a PyTorch profiler trace (Chrome-trace JSON, plain or gzipped). DIR: a folder of traces\n"
    "(*.json, *.json.gz), one per rank: the rank from the trace's distributedInfo, else rank-N in the\n"
    "file name; read concurrently (--jobs N threads, default: the cores).\n"
    "--plot DIR draws one step's GPU timeline by cause: DIR/diagnose_timeline.png (matplotlib;\n"
    "GTB_PYTHON picks the Python) and DIR/diagnosis.json beside it; for a job, each rank's step by\n"
    "cause (DIR/diagnose_job.png); for --diff, before/after per category (DIR/diagnose_diff.png).\n"
    "exit 0 on a diagnosis, 2 on bad usage or a malformed trace (the message names the file and the\n"
    "byte offset; nothing is written)";

// The command line of gtb diagnose.
struct Options {
  std::vector<std::string> traces;
  std::string results, format = "text", out, plot;
  unsigned jobs = 0;  // 0: the cores
  bool diff = false;
};

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


// The options from the command line; an exit code when the command ends there (--help, bad usage).
std::optional<int> parse_options(int argc, char** argv, Options& o) {
  CLI::App app{"The symptoms of a PyTorch profiler trace, priced with a gtb results file.", "gtb diagnose"};
  app.footer(kFooter);
  app.add_option("traces", o.traces, "Trace files, or a folder of one trace per rank")->required()->type_name("TRACE...");
  app.add_flag("--diff", o.diff, "Two traces side by side: BEFORE AFTER");
  app.add_option("--results", o.results, "A gtb results file from the same kind of machine: prices each fix");
  add_format_option(app, o.format, "(the json is what `gtb report --diagnosis` reads)");
  app.add_option("--out", o.out, "Write there (atomically) instead of stdout");
  app.add_option("--plot", o.plot, "Also draw the diagnosis into DIR (see below)")->type_name("DIR");
  app.add_option("--jobs", o.jobs, "Read a job's traces N at a time (default: the cores)")->check(CLI::Range(1, 1024));
  if (const auto rc = parse_cli(app, argc, argv, "gtb diagnose")) return rc;
  if (o.diff && o.traces.size() != 2) {
    std::fprintf(stderr, "gtb diagnose: --diff takes two traces, BEFORE and AFTER (got %zu)\n", o.traces.size());
    return kExitBadInput;
  }
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  return std::nullopt;
}

// A diagnosis: its document and how it renders.
struct Diagnosis {
  json doc;
  std::string (*text)(const json&);
  std::string (*markdown)(const json&);
};

Diagnosis diagnose_two(const Options& o) {
  json ds[2];
  std::vector<diagnose::NameTally> names[2];
  for (std::size_t k = 0; k < 2; ++k) {
    try {
      const auto t = diagnose::read_trace(o.traces[k]);
      ds[k] = diagnose::diagnose_trace(t, base_name(o.traces[k]));
      names[k] = diagnose::name_tallies(t);
    } catch (const std::exception& e) {
      throw std::runtime_error(o.traces[k] + ": " + e.what());
    }
  }
  return {diagnose::diagnose_diff(ds[0], names[0], ds[1], names[1]), &diagnose::render_diff_text,
          [](const json& d) { return diagnose::render_diff_markdown(d); }};
}

Diagnosis diagnose_ranks(const Options& o, const json* results) {
  const auto ranks = read_ranks(job_files(o.traces), o.jobs);
  return {diagnose::diagnose_job(ranks, results, base_name(o.results)), &diagnose::render_job_text,
          [](const json& d) { return diagnose::render_job_markdown(d); }};
}

Diagnosis diagnose_one(const Options& o, const json* results) {
  const std::string& trace = o.traces[0];
  json d;
  try {
    d = diagnose::diagnose_trace(diagnose::read_trace(trace), base_name(trace), o.jobs);
  } catch (const std::exception& e) {
    throw std::runtime_error(trace + ": " + e.what());
  }
  try {
    if (results) diagnose::price_diagnosis(d, *results, base_name(o.results));
    else diagnose::explain_unpriced(d);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--results ") + e.what());
  }
  return {std::move(d), &diagnose::render_text, [](const json& x) { return diagnose::render_markdown(x); }};
}

}  // namespace

int cmd_diagnose(int argc, char** argv) {
  Options o;
  if (const auto rc = parse_options(argc, argv, o)) return *rc;
  try {
    json results_doc;
    if (!o.results.empty()) {
      try {
        results_doc = load_document(o.results);
      } catch (const std::exception& e) {
        throw std::runtime_error("--results " + o.results + ": " + e.what());
      }
    }
    const json* results = o.results.empty() ? nullptr : &results_doc;
    std::error_code ec;
    const bool job = !o.diff && (o.traces.size() > 1 || std::filesystem::is_directory(o.traces[0], ec));
    const Diagnosis d = o.diff ? diagnose_two(o) : job ? diagnose_ranks(o, results) : diagnose_one(o, results);
    const std::string text = render(*parse_format(o.format), {[&] { return d.text(d.doc); }, [&] { return d.markdown(d.doc); },
                                                             [&] { return d.doc.dump(1) + "\n"; }});
    if (write_document(text, o.out)) std::fprintf(stderr, "gtb diagnose: %s written\n", o.out.c_str());
    if (!o.plot.empty()) return draw(d.doc, o.plot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb diagnose: %s\n", e.what());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gtb::driver
