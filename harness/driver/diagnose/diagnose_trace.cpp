// The streaming trace reader: trace_json.h's JSON reader over ISA-L or zlib inflating on its own
// thread, keeping only what gtb uses.
#include "harness/driver/diagnose/diagnose_trace.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>

#include "harness/driver/diagnose/trace_json.h"

namespace gtb::diagnose {

const std::string& Trace::name_of(std::int32_t id) const {
  static const std::string none;
  return id >= 0 && static_cast<std::size_t>(id) < names.size() ? names[static_cast<std::size_t>(id)] : none;
}

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool contains(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

// k equals the literal (the length first: a key is compared with the few of its length only).
template <std::size_t N>
bool is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

HostKind runtime_kind(const std::string& n) {
  if (contains(n, "StreamSynchronize")) return HostKind::stream_sync;
  if (contains(n, "DeviceSynchronize") || contains(n, "CtxSynchronize")) return HostKind::device_sync;
  if (contains(n, "EventSynchronize")) return HostKind::event_sync;
  if (contains(n, "Launch")) return HostKind::launch;
  if (contains(n, "Memcpy") || contains(n, "Memset")) {
    // hipMemcpyWithStream blocks the host like cudaMemcpy does; only the *Async calls return at once.
    if (contains(n, "Async")) return HostKind::launch;
    if (contains(n, "Memset")) return HostKind::launch;
    return HostKind::sync_copy;
  }
  return HostKind::other_runtime;
}

// The keys gtb reads, resolved once per key token (a switch on the length, then one comparison or two):
// the value that follows is dispatched on the enum, not compared with a dozen strings.
enum class Key : std::uint8_t {
  other,
  // the root object's
  trace_events, device_properties, distributed_info,
  // an event's (and a deviceProperties entry's "name")
  ph, cat, name, ts, dur, tid, pid, args,
  // an event's args
  stream, correlation, external_id, bytes, device, size, collective_name, dtype, process_group, in_nelems,
  out_nelems, group_size, input_dims, input_type,
  // distributedInfo's
  backend, rank, world_size,
};

Key root_key(std::string_view k) {
  if (is(k, "traceEvents")) return Key::trace_events;
  if (is(k, "deviceProperties")) return Key::device_properties;
  if (is(k, "distributedInfo")) return Key::distributed_info;
  return Key::other;
}

Key event_key(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (is(k, "ph")) return Key::ph;
      if (is(k, "ts")) return Key::ts;
      break;
    case 3:
      if (is(k, "cat")) return Key::cat;
      if (is(k, "dur")) return Key::dur;
      if (is(k, "tid")) return Key::tid;
      if (is(k, "pid")) return Key::pid;
      break;
    case 4:
      if (is(k, "name")) return Key::name;
      if (is(k, "args")) return Key::args;
      break;
    default: break;
  }
  return Key::other;
}

Key arg_key(std::string_view k) {
  switch (k.size()) {
    case 4: return is(k, "size") ? Key::size : Key::other;
    case 5:
      if (is(k, "bytes")) return Key::bytes;
      if (is(k, "dtype")) return Key::dtype;
      break;
    case 6:
      if (is(k, "stream")) return Key::stream;
      if (is(k, "device")) return Key::device;
      break;
    case 10:
      if (is(k, "Input Dims")) return Key::input_dims;
      if (is(k, "Input type")) return Key::input_type;
      if (is(k, "Group size")) return Key::group_size;
      break;
    case 11:
      if (is(k, "correlation")) return Key::correlation;
      if (is(k, "External id")) return Key::external_id;
      break;
    case 13: return is(k, "In msg nelems") ? Key::in_nelems : Key::other;
    case 14: return is(k, "Out msg nelems") ? Key::out_nelems : Key::other;
    case 15: return is(k, "Collective name") ? Key::collective_name : Key::other;
    case 18: return is(k, "Process Group Name") ? Key::process_group : Key::other;
    default: break;
  }
  return Key::other;
}

Key dist_key(std::string_view k) {
  if (is(k, "backend")) return Key::backend;
  if (is(k, "rank")) return Key::rank;
  if (is(k, "world_size")) return Key::world_size;
  return Key::other;
}

// An event's category as gtb reads it ("cat"; Kineto's names and the legacy export's). `none`: no
// category, or an empty one (the legacy export writes CPU operators without one).
enum class Cat : std::uint8_t { none, kernel, memcpy, memset, sync, runtime, cpu, python_function, other };

Cat category(std::string_view c) {
  switch (c.size()) {
    case 0: return Cat::none;
    case 6:
      if (is(c, "kernel") || is(c, "Kernel")) return Cat::kernel;
      if (is(c, "cpu_op")) return Cat::cpu;
      if (is(c, "Memcpy")) return Cat::memcpy;
      if (is(c, "Memset")) return Cat::memset;
      if (is(c, "Driver")) return Cat::runtime;
      break;
    case 7: return is(c, "Runtime") ? Cat::runtime : Cat::other;
    case 8: return is(c, "Operator") ? Cat::cpu : Cat::other;
    case 9: return is(c, "cuda_sync") ? Cat::sync : Cat::other;
    case 10:
      if (is(c, "gpu_memcpy")) return Cat::memcpy;
      if (is(c, "gpu_memset")) return Cat::memset;
      break;
    case 11: return is(c, "cuda_driver") ? Cat::runtime : Cat::other;
    case 12: return is(c, "cuda_runtime") ? Cat::runtime : Cat::other;
    case 15:
      if (is(c, "user_annotation")) return Cat::cpu;
      if (is(c, "python_function")) return Cat::python_function;
      break;
    default: break;
  }
  return Cat::other;
}

// The SAX handler: a small state machine over the depth of the document. Depth 1 is the root object,
// 2 the traceEvents array, 3 one event, 4 its args, 5+ inside args' arrays ("Input Dims").
class Handler {
 public:
  explicit Handler(Trace& t) : t_(t) {}

  bool null() { return scalar(Value{}); }
  bool boolean(bool) { return scalar(Value{}); }
  // A number as written (trace_json.h's json_number converts it when it is kept).
  bool number(std::string_view text) {
    Value x;
    x.is_number = true;
    x.text = text;
    return scalar(x);
  }
  bool string(std::string_view v) {
    Value x;
    x.is_string = true;
    x.text = v;
    return scalar(x);
  }

  bool start_object() {
    ++depth_;
    if (depth_ == 1) root_is_object_ = true;
    if (depth_ == 3 && in_events_) {
      ev_.reset();
      in_event_ = true;
    } else if (depth_ == 3 && in_devices_) {
      device_obj_ = true;
    } else if (depth_ == 4 && in_event_ && key_ == Key::args) {
      in_args_ = true;
    } else if (depth_ == 2 && top_key_ == Key::distributed_info) {
      in_dist_ = true;
    }
    return true;
  }
  bool end_object() {
    if (depth_ == 3 && in_event_) {
      finish_event();
      in_event_ = false;
    } else if (depth_ == 3) {
      device_obj_ = false;
    } else if (depth_ == 4) {
      in_args_ = false;
    } else if (depth_ == 2) {
      in_dist_ = false;
    }
    --depth_;
    return true;
  }
  bool start_array() {
    ++depth_;
    if (depth_ == 1) {
      // The Chrome trace "JSON Array Format" (the profiler's legacy export): the root is the event
      // array itself. Read one level deeper, as if it were {"traceEvents": [...]}.
      root_is_object_ = array_root_ = true;
      top_key_ = Key::trace_events;
      ++depth_;
    }
    if (depth_ == 2 && top_key_ == Key::trace_events) {
      in_events_ = true;
      t_.has_trace_events = true;
    } else if (depth_ == 2 && top_key_ == Key::device_properties) {
      in_devices_ = true;
    } else if (depth_ == 5 && in_args_ && arg_key_ == Key::input_dims) {
      in_dims_ = true;
      ev_.dims.clear();
    } else if (depth_ == 6 && in_dims_) {
      ev_.dims.open();
    } else if (depth_ == 5 && in_args_ && arg_key_ == Key::input_type) {
      in_types_ = true;
    }
    return true;
  }
  bool end_array() {
    if (depth_ == 2) in_events_ = in_devices_ = false;
    if (depth_ == 5) in_dims_ = in_types_ = false;
    --depth_;
    if (depth_ == 1 && array_root_) --depth_;
    return true;
  }
  bool key(std::string_view k) {
    if (depth_ == 3) key_ = event_key(k);
    else if (depth_ == 4 && in_args_) arg_key_ = arg_key(k);
    else if (depth_ == 1) top_key_ = root_key(k);
    else if (depth_ == 2 && in_dist_) dist_key_ = dist_key(k);
    return true;
  }
  bool root_is_object() const { return root_is_object_; }

 private:
  struct Value {
    bool is_string = false, is_number = false;
    std::string_view text;  // the string, or the number as written
    double num() const { return json_number(text); }
  };
  // "Input Dims" ([[256, 4096], [4096], []]): the numbers of all its lists in one vector and where each
  // list ends, so an event's dims cost no allocation once the vectors have grown.
  struct Dims {
    std::vector<double> values;
    std::vector<std::uint32_t> ends;
    void clear() { values.clear(), ends.clear(); }
    void open() { ends.push_back(static_cast<std::uint32_t>(values.size())); }
    void add(double v) {
      values.push_back(v);
      ++ends.back();
    }
    std::size_t size() const { return ends.size(); }
    std::size_t size(std::size_t i) const { return ends[i] - begin(i); }
    std::size_t begin(std::size_t i) const { return i == 0 ? 0 : ends[i - 1]; }
    double at(std::size_t i, std::size_t j) const { return values[begin(i) + j]; }
    double back(std::size_t i) const { return values[ends[i] - 1]; }
    double prod_but_last(std::size_t i) const {
      double p = 1;
      for (std::size_t j = begin(i); j + 1 < ends[i]; ++j) p *= values[j];
      return p;
    }
  };
  struct Event {
    bool ph_x = false;  // "ph": "X", a complete event
    Cat cat = Cat::none;
    std::string name, size_text, collective, dtype, process_group;
    std::string first_input_type;  // "Input type"'s first entry ("float"): a host collective's dtype
    double in_elements = -1, out_elements = -1;
    std::int64_t group_size = -1;
    double ts = NAN, dur = NAN, bytes = -1;
    std::int64_t tid = -1, correlation = -1, external_id = -1;
    std::int32_t stream = -1, device = -1, pid_num = -1;
    bool has_stream = false;
    Dims dims;
    // Every field as a fresh event has it, the strings and vectors keeping their memory.
    void reset() {
      ph_x = false;
      cat = Cat::none;
      name.clear(), size_text.clear(), collective.clear(), dtype.clear(), process_group.clear();
      first_input_type.clear();
      in_elements = out_elements = -1;
      group_size = -1;
      ts = dur = NAN;
      bytes = -1;
      tid = correlation = external_id = -1;
      stream = device = pid_num = -1;
      has_stream = false;
      dims.clear();
    }
  };

  static std::int64_t as_int(const Value& v) {
    if (v.is_number) return static_cast<std::int64_t>(v.num());
    if (v.is_string) {
      // AMD traces write some ids as strings ("0x0", "2560").
      try {
        return static_cast<std::int64_t>(std::stoll(std::string(v.text), nullptr, 0));
      } catch (...) {
        return -1;
      }
    }
    return -1;
  }

  bool scalar(const Value& v) {
    if (array_root_ && in_events_ && depth_ == 2)
      throw TraceError("not a profiler trace: the root array holds a value that is not an event object");
    if (in_event_ && depth_ == 3) {
      switch (key_) {
        case Key::ph:
          if (v.is_string) ev_.ph_x = is(v.text, "X");
          break;
        case Key::cat:
          if (v.is_string) ev_.cat = category(v.text);
          break;
        case Key::name:
          if (v.is_string) ev_.name = v.text;
          break;
        case Key::ts:
          if (v.is_number) ev_.ts = v.num();
          break;
        case Key::dur:
          if (v.is_number) ev_.dur = v.num();
          break;
        case Key::tid: ev_.tid = as_int(v); break;
        case Key::pid: ev_.pid_num = static_cast<std::int32_t>(as_int(v)); break;
        default: break;
      }
      return true;
    }
    if (in_dims_ && depth_ == 6 && v.is_number) {
      ev_.dims.add(v.num());
      return true;
    }
    if (in_types_ && depth_ == 5) {
      if (v.is_string && ev_.first_input_type.empty()) ev_.first_input_type = v.text;
      return true;
    }
    if (in_args_ && depth_ == 4) {
      switch (arg_key_) {
        case Key::stream:
          ev_.stream = static_cast<std::int32_t>(as_int(v));
          ev_.has_stream = true;
          break;
        case Key::correlation: ev_.correlation = as_int(v); break;
        case Key::external_id: ev_.external_id = as_int(v); break;
        case Key::bytes:
          if (v.is_number) ev_.bytes = v.num();
          break;
        case Key::device: ev_.device = static_cast<std::int32_t>(as_int(v)); break;
        case Key::size:
          if (v.is_string) ev_.size_text = v.text;
          else if (v.is_number) ev_.size_text = std::to_string(static_cast<long long>(v.num()));
          break;
        case Key::collective_name:
          if (v.is_string) ev_.collective = v.text;
          break;
        case Key::dtype:
          if (v.is_string) ev_.dtype = v.text;
          break;
        case Key::process_group:
          if (v.is_string) ev_.process_group = v.text;
          break;
        case Key::in_nelems:
          if (v.is_number) ev_.in_elements = v.num();
          break;
        case Key::out_nelems:
          if (v.is_number) ev_.out_elements = v.num();
          break;
        case Key::group_size: ev_.group_size = as_int(v); break;
        default: break;
      }
    } else if (device_obj_ && depth_ == 3 && v.is_string && key_ == Key::name) {
      t_.device_names.emplace_back(v.text);
    } else if (in_dist_ && depth_ == 2) {
      if (dist_key_ == Key::backend && v.is_string) t_.distributed_backend = v.text;
      else if (dist_key_ == Key::rank && v.is_number) t_.rank = static_cast<std::int64_t>(v.num());
      else if (dist_key_ == Key::world_size && v.is_number) t_.world_size = static_cast<std::int64_t>(v.num());
    }
    return true;
  }

  std::int32_t intern(const std::string& n) {
    auto it = ids_.find(n);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<std::int32_t>(t_.names.size());
    t_.names.push_back(n);
    ids_.emplace(n, id);
    return id;
  }

  void finish_event() {
    ++t_.events_seen;
    if (!ev_.ph_x) return;
    const Cat c = ev_.cat;
    const bool gpu = c == Cat::kernel || c == Cat::memcpy || c == Cat::memset || c == Cat::sync;
    const bool runtime = c == Cat::runtime;
    // The legacy export writes CPU operators without a category.
    const bool cpu = c == Cat::cpu || c == Cat::python_function || c == Cat::none;
    if (!gpu && !runtime && !cpu) return;
    if (std::isnan(ev_.ts) || std::isnan(ev_.dur)) {
      ++t_.missing_fields;
      return;
    }
    if (gpu) {
      GpuEvent g;
      g.ts = ev_.ts;
      g.dur = ev_.dur;
      g.bytes = ev_.bytes;
      g.correlation = ev_.correlation;
      g.external_id = ev_.external_id;
      g.name = intern(ev_.name);
      if (!ev_.has_stream) t_.gpu_events_lack_stream = true;
      g.stream = ev_.has_stream ? ev_.stream : (ev_.tid >= 0 ? static_cast<std::int32_t>(ev_.tid) : -1);
      g.device = ev_.device >= 0 ? ev_.device : ev_.pid_num;
      g.kind = c == Cat::memcpy ? GpuKind::memcpy : c == Cat::memset ? GpuKind::memset : c == Cat::sync ? GpuKind::sync : GpuKind::kernel;
      if (!ev_.collective.empty()) {
        CollectiveArgs a;
        a.name = intern(ev_.collective);
        if (!ev_.dtype.empty()) a.dtype = intern(ev_.dtype);
        if (!ev_.process_group.empty()) a.process_group = intern(ev_.process_group);
        a.in_elements = ev_.in_elements;
        a.out_elements = ev_.out_elements;
        a.group_size = ev_.group_size;
        g.collective = static_cast<std::int32_t>(t_.collectives.size());
        t_.collectives.push_back(a);
      }
      t_.gpu.push_back(g);
      return;
    }
    if (runtime) {
      ++t_.runtime_calls;
      if (starts_with(ev_.name, "hip")) t_.amd_runtime = true;
      const HostKind k = runtime_kind(ev_.name);
      if (k == HostKind::other_runtime) return;
      push_host(k, ev_.correlation);
      if (!ev_.size_text.empty() && ev_.correlation >= 0) {
        try {
          runtime_sizes_[ev_.correlation] = std::stod(ev_.size_text);
        } catch (...) {
        }
      }
      return;
    }
    // CPU side: steps, scalar reads, the data loader, host collectives, matmul shapes; every operator
    // (python_function events aside: they are the Python stack, not operators) by name.
    if (starts_with(ev_.name, "ProfilerStep#")) {
      t_.steps.push_back(Step{ev_.name, ev_.ts, ev_.dur});
      return;
    }
    if (c != Cat::python_function) {
      HostEvent op;
      op.ts = ev_.ts;
      op.dur = ev_.dur;
      op.name = intern(ev_.name);
      op.tid = ev_.tid;
      op.kind = HostKind::other_runtime;
      t_.cpu_ops.push_back(op);
    }
    HostKind k = HostKind::other_runtime;
    if (ev_.name == "aten::item" || ev_.name == "aten::_local_scalar_dense") k = HostKind::scalar_read;
    else if (contains(ev_.name, "DataLoader")) k = HostKind::data_loader;
    else if (starts_with(ev_.name, "gloo:") || starts_with(ev_.name, "mpi:") || starts_with(ev_.name, "ucc:"))
      k = HostKind::collective;
    if (k != HostKind::other_runtime) {
      push_host(k, -1);
      if (k == HostKind::collective) host_collective_args(t_.host.back());
      return;
    }
    if (ev_.external_id >= 0 && ev_.dims.size() > 0) record_shape();
  }

  // The event being read as a host event of kind `k` (a CPU op has no correlation: -1).
  void push_host(HostKind k, std::int64_t correlation) {
    HostEvent h;
    h.ts = ev_.ts;
    h.dur = ev_.dur;
    h.correlation = correlation;
    h.name = intern(ev_.name);
    h.tid = ev_.tid;
    h.kind = k;
    t_.host.push_back(h);
  }

  // A host library's collective (gloo:all_reduce): its size from its arguments where the trace has
  // them. PyTorch 2.x writes the gloo call's tensor as "Input Dims" [[n]] and "Input type" ["float"]
  // (1.13's legacy export writes no arguments); a record_param_comms-style "In msg nelems" / "dtype"
  // wins where present.
  void host_collective_args(HostEvent& h) {
    CollectiveArgs a;
    a.name = intern(ev_.collective.empty() ? ev_.name.substr(ev_.name.find(':') + 1) : ev_.collective);
    const std::string& dtype = ev_.dtype.empty() ? ev_.first_input_type : ev_.dtype;
    if (!dtype.empty()) a.dtype = intern(dtype);
    if (ev_.in_elements >= 0) {
      a.in_elements = ev_.in_elements;
      a.out_elements = ev_.out_elements;
    } else if (ev_.dims.size() == 1) {
      double n = 1;
      for (double x : ev_.dims.values) n *= x;
      a.in_elements = a.out_elements = n;
    }
    a.group_size = ev_.group_size;
    if (a.dtype < 0 && a.in_elements < 0 && a.group_size < 0) return;
    h.collective = static_cast<std::int32_t>(t_.collectives.size());
    t_.collectives.push_back(a);
  }

  void record_shape() {
    const std::string& n = ev_.name;
    const Dims& d = ev_.dims;
    MatmulShape s;
    if ((n == "aten::mm" || n == "aten::matmul") && d.size() >= 2 && d.size(0) >= 2 && d.size(1) >= 2) {
      s = {d.prod_but_last(0), d.back(1), d.back(0)};
    } else if (n == "aten::addmm" && d.size() >= 3 && d.size(1) == 2 && d.size(2) == 2) {
      s = {d.at(1, 0), d.at(2, 1), d.at(1, 1)};
    } else if (n == "aten::bmm" && d.size() >= 2 && d.size(0) == 3 && d.size(1) == 3) {
      s = {d.at(0, 0) * d.at(0, 1), d.at(1, 2), d.at(0, 2)};
    } else if (n == "aten::linear" && d.size() >= 2 && d.size(0) > 0 && d.size(1) == 2) {
      s = {d.prod_but_last(0), d.at(1, 0), d.at(1, 1)};
    } else {
      return;
    }
    if (s.m > 0 && s.n > 0 && s.k > 0) t_.matmul_shapes[ev_.external_id] = s;
  }

 public:
  // Copies whose GPU event lacks a byte count get the size from their runtime call (AMD traces).
  void fill_sizes() {
    if (runtime_sizes_.empty()) return;
    for (auto& g : t_.gpu) {
      if (g.kind != GpuKind::memcpy || g.bytes >= 0) continue;
      auto it = runtime_sizes_.find(g.correlation);
      if (it != runtime_sizes_.end()) g.bytes = it->second;
    }
  }

 private:
  Trace& t_;
  Event ev_;
  int depth_ = 0;
  bool root_is_object_ = false, in_events_ = false, in_event_ = false, in_args_ = false, in_dims_ = false;
  bool in_types_ = false;
  bool in_devices_ = false, device_obj_ = false, in_dist_ = false, array_root_ = false;
  Key top_key_ = Key::other, key_ = Key::other, arg_key_ = Key::other, dist_key_ = Key::other;
  std::unordered_map<std::string, std::int32_t> ids_;
  std::unordered_map<std::int64_t, double> runtime_sizes_;
};

void finish(Trace& t, Handler& h, std::uint64_t bytes) {
  t.bytes_read = bytes;
  if (!h.root_is_object())
    throw TraceError("not a profiler trace: the JSON at byte 0 is not an object with a traceEvents array");
  if (!t.has_trace_events)
    throw TraceError("not a profiler trace: no traceEvents array in the top-level object (read " +
                     std::to_string(bytes) + " bytes)");
  h.fill_sizes();
}

}  // namespace

Trace read_trace(const std::string& path) {
  Trace t;
  Handler h(t);
  const auto src = open_trace_file(path);
  const std::uint64_t bytes = JsonReader(*src).parse(h);
  finish(t, h, bytes);
  return t;
}

Trace read_trace_text(const std::string& json_text) {
  Trace t;
  Handler h(t);
  const auto src = text_source(json_text);
  const std::uint64_t bytes = JsonReader(*src).parse(h);
  finish(t, h, bytes);
  return t;
}

}  // namespace gtb::diagnose
