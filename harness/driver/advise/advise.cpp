// gtb advise RESULTS.json: the predicted step time of a user's training configuration on the CPU and
// the GPU, split into measured cost terms, with the known fixes ranked by predicted saving.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/model/model.h"
#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/cli11.h"
#include "harness/driver/common/output.h"
#include "harness/driver/common/render_verdict.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {

// What --help shows after CLI11's list of flags: the step's options by group.
const char* kSteps =
    "The step's options override the keys of --config:\n"
    "  model      --model mlp|transformer|generic\n"
    "             mlp: --width N --depth N [--input N] [--classes N]\n"
    "             transformer: --layers N --d-model N --heads N --seq-len N [--attention materialised|fused]\n"
    "             generic: --params N --flops-per-sample N [--kernels-per-step N]\n"
    "  step       --batch N [--precision fp32|tf32|bf16|fp16] [--optimizer sgd|adam|adamw] [--activation relu|gelu]\n"
    "             [--micro-batches N] [--cuda-graph]\n"
    "  input      [--input-bytes BYTES_PER_SAMPLE] [--host-memory pageable|pinned] [--workers N]\n"
    "             [--sample-us MICROSECONDS_PER_SAMPLE]\n"
    "  habits     [--loss-read-every N] [--redundant-copy batch|activation|weights]\n"
    "  ranks      [--gpus N] [--bucket-mb MIB] [--overlap]\n"
    "  cpu        [--core-share F]  the share of this CPU's cores the step gets (default 1)\n"
    "  framework  [--framework native|pytorch-eager|pytorch-compiled|pytorch-graph]  what runs the step (default:\n"
    "             the one RESULTS.json measured, native where none): PyTorch's host time per operator is added\n"
    "  a bad or incomplete configuration exits 2 naming the key; docs/advise.md explains the model";

enum class Kind { integer, number, text, flag };
struct Flag {
  const char* flag;
  const char* key;
  Kind kind;
  double scale = 1;
};
const Flag kFlags[] = {{"--model", "model", Kind::text},
                       {"--width", "width", Kind::integer},
                       {"--depth", "depth", Kind::integer},
                       {"--input", "input", Kind::integer},
                       {"--classes", "classes", Kind::integer},
                       {"--layers", "layers", Kind::integer},
                       {"--d-model", "d_model", Kind::integer},
                       {"--heads", "heads", Kind::integer},
                       {"--seq-len", "seq_len", Kind::integer},
                       {"--attention", "attention", Kind::text},
                       {"--params", "params", Kind::number},
                       {"--flops-per-sample", "flops_per_sample", Kind::number},
                       {"--kernels-per-step", "kernels_per_step", Kind::number},
                       {"--batch", "batch", Kind::integer},
                       {"--precision", "precision", Kind::text},
                       {"--optimizer", "optimizer", Kind::text},
                       {"--activation", "activation", Kind::text},
                       {"--input-bytes", "input_bytes_per_sample", Kind::number},
                       {"--host-memory", "host_memory", Kind::text},
                       {"--workers", "workers", Kind::integer},
                       {"--sample-us", "sample_us", Kind::number},
                       {"--loss-read-every", "loss_read_every", Kind::integer},
                       {"--gpus", "gpus", Kind::integer},
                       {"--bucket-mb", "bucket_bytes", Kind::number, 1048576.0},
                       {"--overlap", "overlap", Kind::flag},
                       {"--micro-batches", "micro_batches", Kind::integer},
                       {"--cuda-graph", "cuda_graph", Kind::flag},
                       {"--core-share", "core_share", Kind::number},
                       {"--redundant-copy", "redundant_copy", Kind::text},
                       {"--framework", cost::kFrameworkKey, Kind::text}};

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

json number_value(const std::string& flag, const std::string& v, Kind kind, double scale) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno) throw Usage(flag + ": not a number: '" + v + "'");
  if (kind == Kind::integer) {
    if (d != static_cast<double>(static_cast<long long>(d))) throw Usage(flag + ": not a whole number: '" + v + "'");
    return static_cast<long long>(d);
  }
  return d * scale;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Usage("--config: cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int plot(const json& advice, const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  const std::string data = dir + "/advise.json", png = dir + "/advise_breakdown.png";
  write_file_atomic(data, advice.dump(1) + "\n");
  const char* py = std::getenv("GTB_PYTHON");
  ProcessSpec spec;
  spec.program = py && *py ? py : "python3";
  spec.args = {std::string(GTB_SOURCE_DIR) + "/plots/advise_plot.py", data, png};
  spec.search_path = true;
  const ProcessResult r = run_process(spec);
  if (!r.started() || r.signal != 0 || r.exit_code != 0) {
    std::fprintf(stderr, "gtb advise: the figure could not be drawn (python3 with matplotlib is needed)\n");
    return kExitBadInput;
  }
  std::fprintf(stderr, "gtb advise: %s written\n", png.c_str());
  return kExitOk;
}

// The command line of gtb advise: the step's options as given (flags, and the text of the others).
struct Options {
  std::string in, config_path, format = "text", out, plot_dir;
  json flags = json::object();
  std::vector<std::pair<const Flag*, std::string>> values;
};

// Parses; an exit code when the command ends here (--help, bad usage).
std::optional<int> parse_options(int argc, char** argv, Options& o) {
  CLI::App app{"Predicts a training step from the cost terms measured in RESULTS.json, on the CPU and the GPU, and "
               "ranks the known fixes by predicted saving.",
               "gtb advise"};
  app.footer(kSteps);
  app.add_option("results", o.in, "The results file")->required()->type_name("RESULTS.json");
  app.add_option("--config", o.config_path, "The step as one JSON object of keys")->type_name("FILE.json");
  add_format_option(app, o.format);
  app.add_option("--out", o.out, "Write there (atomically) instead of stdout")->type_name("FILE");
  app.add_option("--plot", o.plot_dir, "Also draw the answer into DIR")->type_name("DIR");
  for (const Flag& f : kFlags) {
    if (f.kind == Kind::flag)
      app.add_flag_function(f.flag, [&o, &f](std::int64_t n) { o.flags[f.key] = n > 0; })->group("Step");
    else
      app.add_option_function<std::string>(f.flag, [&o, &f](const std::string& v) { o.values.emplace_back(&f, v); })
          ->group("Step");
  }
  if (const auto rc = parse_cli(app, argc, argv, "gtb advise")) return rc;
  try {
    for (const auto& [f, v] : o.values)
      o.flags[f->key] = f->kind == Kind::text ? json(v) : number_value(f->flag, v, f->kind, f->scale);
  } catch (const Usage& e) {
    std::fprintf(stderr, "gtb advise: %s\n", e.what());
    return kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace

int cmd_advise(int argc, char** argv) {
  Options o;
  if (const auto rc = parse_options(argc, argv, o)) return *rc;
  const std::string &in = o.in, &config_path = o.config_path, &format = o.format, &out = o.out, &plot_dir = o.plot_dir;
  const json& flags = o.flags;
  try {
    json cfg = json::object();
    if (!config_path.empty()) {
      try {
        cfg = json::parse(read_text(config_path));
      } catch (const json::parse_error& e) {
        throw Usage("--config " + config_path + ": not JSON (" + e.what() + ")");
      }
      if (!cfg.is_object()) throw Usage("--config " + config_path + ": must hold one JSON object of keys");
    }
    for (auto& [k, v] : flags.items()) cfg[k] = v;
    const json doc = load_document(in);
    if (!cost::has_terms(doc))
      throw Usage(in + " holds no cost terms: it was written by an older gtb. Rerun `gtb run` with this version, "
                       "then ask again.");
    // What runs the step, unless asked: what the file measured.
    if (!cfg.contains(cost::kFrameworkKey))
      cfg[cost::kFrameworkKey] = cost::measured_framework(cost::terms_from_document(doc));
    cost::StepConfig c;
    try {
      c = cost::config_from_json(cfg);
    } catch (const cost::ConfigError& e) {
      throw Usage(std::string("configuration: ") + e.what());
    }
    const cost::Advice a = cost::advise(doc, in, c);
    const json aj = verdict::to_json(a);
    write_document(render(*parse_format(format), {[&] { return verdict::render_text(a); },
                                                  [&] { return verdict::render_markdown(a); },
                                                  [&] { return aj.dump(1) + "\n"; }}),
                   out);
    if (!plot_dir.empty()) return plot(aj, plot_dir);
    return kExitOk;
  } catch (const Usage& e) {
    std::fprintf(stderr, "gtb advise: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gtb advise: %s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gtb::driver
