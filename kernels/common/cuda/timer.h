// Device timing a kernel needs while it sets itself up (e.g. calibrating a kernel's length), handed
// in by the caller so that kernels never time themselves with the harness's machinery.
#pragma once

#include <cstdint>
#include <functional>

#include <cuda_runtime_api.h>

namespace gtb::cuda {

// Device seconds of `reps` calls of enqueue(stream). may_hold: the work never waits for the host,
// so the stream may be held behind a blocking kernel while it is queued; ops_per_rep: operations
// (kernels, copies, event waits) one call queues. The harness's event_timer() is one.
using DeviceTimer = std::function<double(cudaStream_t stream, std::int64_t reps, bool may_hold,
                                         std::int64_t ops_per_rep, const std::function<void(cudaStream_t)>& enqueue)>;

}  // namespace gtb::cuda
