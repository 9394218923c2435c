// A PyTorch profiler (Kineto) Chrome-trace, read in one streaming pass into the few compact facts
// `gtb diagnose` needs: GPU activity, the host calls that launch or wait for it, and profiler steps.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace gtb::diagnose {

// A malformed or unreadable trace: the message names the byte offset in the (decompressed) JSON.
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class GpuKind : std::uint8_t { kernel, memcpy, memset, sync };

// One GPU-timeline event (cat kernel, gpu_memcpy, gpu_memset, cuda_sync); times in microseconds as
// the trace writes them. Names are interned: a trace repeats a few thousand names millions of times.
struct GpuEvent {
  double ts = 0, dur = 0;
  double bytes = -1;             // -1: the event carries no byte count
  std::int64_t correlation = -1;
  std::int64_t external_id = -1;
  std::int32_t name = -1;        // index into Trace::names
  std::int32_t stream = -1;
  std::int32_t device = -1;
  std::int32_t collective = -1;  // index into Trace::collectives (a communication kernel's arguments)
  GpuKind kind = GpuKind::kernel;
};

// The arguments PyTorch writes on a communication kernel (NCCL, RCCL, gloo) or a host library's
// collective (gloo:all_reduce's "Input Dims" and "Input type" in PyTorch 2.x): which collective, how many
// elements of which type, among how many ranks. -1: the trace did not say.
struct CollectiveArgs {
  std::int32_t name = -1;           // "Collective name" (allreduce, broadcast, ...), interned
  std::int32_t dtype = -1;          // "dtype" (Float, BFloat16, ...), interned
  std::int32_t process_group = -1;  // "Process Group Name", interned
  double in_elements = -1, out_elements = -1;  // "In msg nelems", "Out msg nelems"
  std::int64_t group_size = -1;                // "Group size"
};

enum class HostKind : std::uint8_t {
  launch,         // puts work on a stream (kernel launch, async copy or memset)
  stream_sync,    // cudaStreamSynchronize and kin
  device_sync,
  event_sync,
  sync_copy,      // a copy call that returns only when the copy is done (cudaMemcpy, hipMemcpyWithStream)
  scalar_read,    // aten::item / aten::_local_scalar_dense: a device scalar read back by the host
  data_loader,    // a DataLoader iteration on the host
  collective,     // a collective run by a host communication library (gloo:all_reduce, ...): CPU jobs
  other_runtime,
};

// One host-side event gtb keeps (a runtime call or a CPU op of interest).
struct HostEvent {
  double ts = 0, dur = 0;
  std::int64_t correlation = -1;
  std::int32_t name = -1;
  std::int64_t tid = -1;
  std::int32_t collective = -1;  // a host collective's arguments: index into Trace::collectives
  HostKind kind = HostKind::other_runtime;
};

struct Step {
  std::string name;  // "ProfilerStep#N"
  double ts = 0, dur = 0;
};

// A matmul-like CPU op's shape (from "Input Dims" where the trace recorded shapes): m x k times k x n.
struct MatmulShape {
  double m = 0, n = 0, k = 0;
};

struct Trace {
  std::vector<std::string> names;
  std::vector<GpuEvent> gpu;
  std::vector<HostEvent> host;
  std::vector<Step> steps;
  std::vector<CollectiveArgs> collectives;  // GpuEvent::collective and HostEvent::collective index this
  // Every CPU operator (cpu_op, user_annotation, and the category-less events of the profiler's legacy
  // export): name, start, duration, thread. `gtb diagnose --diff` tallies them by name per step.
  std::vector<HostEvent> cpu_ops;
  std::unordered_map<std::int64_t, MatmulShape> matmul_shapes;  // by External id
  std::vector<std::string> device_names;                        // deviceProperties[].name
  std::string distributed_backend;                              // distributedInfo.backend
  std::optional<std::int64_t> rank, world_size;
  bool has_trace_events = false;
  std::uint64_t events_seen = 0;      // every object in traceEvents
  std::uint64_t bytes_read = 0;       // decompressed JSON bytes
  std::uint64_t runtime_calls = 0;    // cuda_runtime / cuda_driver events of any name
  std::uint64_t missing_fields = 0;   // kept events lacking ts or dur (dropped)
  bool gpu_events_lack_stream = false;
  bool amd_runtime = false;           // hip* runtime names

  const std::string& name_of(std::int32_t id) const;
};

// Reads a trace, gzipped or plain (inflated on a thread of its own: trace_json.h), in one pass with
// memory bounded by the events gtb keeps (a few tens of bytes each), not by the file. Throws TraceError.
Trace read_trace(const std::string& path);
// The same from a string already in memory (tests).
Trace read_trace_text(const std::string& json_text);

}  // namespace gtb::diagnose
