// gtb advise RESULTS.json: the predicted step time of a user's training configuration on the CPU and
// the GPU, split into measured cost terms, with the known fixes ranked by predicted saving.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "harness/model/model.h"
#include "harness/document/results.h"
#include "harness/driver/commands.h"
#include "harness/driver/common/render_verdict.h"
#include "harness/runtime/process.h"

namespace gtb::driver {

namespace {

const char* kUsage =
    "usage: gtb advise RESULTS.json [--config FILE.json] [options] [--format text|markdown|json] [--out FILE]\n"
    "                  [--plot DIR]\n"
    "  predicts a training step from the cost terms measured in RESULTS.json, on the CPU and the GPU,\n"
    "  and ranks the known fixes by predicted saving. Options override the keys of --config:\n"
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
    "  a bad or incomplete configuration exits 2 naming the key; docs/advise.md explains the model\n";

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

}  // namespace

int cmd_advise(int argc, char** argv) {
  std::string in, config_path, format = "text", out, plot_dir;
  json flags = json::object();
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i], value;
      const bool has_eq = a.rfind("--", 0) == 0 && a.find('=') != std::string::npos;
      if (has_eq) value = a.substr(a.find('=') + 1), a = a.substr(0, a.find('='));
      auto take = [&]() -> std::string {
        if (has_eq) return value;
        if (i + 1 >= argc) throw Usage(a + ": needs a value");
        return argv[++i];
      };
      if (a == "-h" || a == "--help") {
        std::fputs(kUsage, stdout);
        return kExitOk;
      }
      if (a == "--config") { config_path = take(); continue; }
      if (a == "--format") { format = take(); continue; }
      if (a == "--out") { out = take(); continue; }
      if (a == "--plot") { plot_dir = take(); continue; }
      bool known = false;
      for (const Flag& f : kFlags) {
        if (a != f.flag) continue;
        known = true;
        if (f.kind == Kind::flag) {
          if (has_eq && value != "true" && value != "false") throw Usage(a + ": true or false, got '" + value + "'");
          flags[f.key] = !has_eq || value == "true";
        } else if (f.kind == Kind::text) {
          flags[f.key] = take();
        } else {
          flags[f.key] = number_value(a, take(), f.kind, f.scale);
        }
      }
      if (known) continue;
      if (!a.empty() && a[0] == '-') throw Usage("unknown option " + a);
      if (!in.empty()) throw Usage("one results file only (got " + a + " too)");
      in = a;
    }
    if (in.empty()) throw Usage("a results file is required");
    if (format != "text" && format != "markdown" && format != "json")
      throw Usage("--format: text, markdown or json, got '" + format + "'");
  } catch (const Usage& e) {
    std::fprintf(stderr, "gtb advise: %s\n%s", e.what(), kUsage);
    return kExitBadInput;
  }
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
    const std::string text = format == "json"       ? aj.dump(1) + "\n"
                             : format == "markdown" ? verdict::render_markdown(a)
                                                    : verdict::render_text(a);
    if (out.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
    else write_file_atomic(out, text);
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
