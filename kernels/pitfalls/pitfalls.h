// The pitfalls family's step-level habits (a loss read every k steps, redundant copies) shared by
// the CPU and GPU step loops and the registrations.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/common/names.h"

namespace gtb::pitfalls {

// What a training loop does besides the step itself, once per step.
// batch: the same batch copied to where the step runs (`.to(device)` inside the loop; pageable
// host memory, as from a DataLoader without pin_memory). batch_pinned: the same from pinned memory
// (GPU only). activation: the first hidden activation copied back to host memory (`print(tensor)`).
// weights: the weights copied from a host copy to where the step runs (a model moved every step).
GTB_NAMED_ENUM(Copy, kCopyNames, none, batch, batch_pinned, activation, weights);
inline constexpr Copy kCopies[] = {Copy::none, Copy::batch, Copy::batch_pinned, Copy::activation, Copy::weights};

inline Copy copy_from_string(const std::string& s) { return parse_name(kCopyNames, s, "copy"); }

// The loss read: every `every` steps the mean loss comes back to the host (`loss.item()`); 0 never.
// "never" is the clean loop: on the GPU, steps are queued and only the end of a sample waits.
inline std::string sync_variant(int every) { return every == 0 ? "never" : "every_" + std::to_string(every); }
inline int sync_every_from_string(const std::string& s) {
  if (s == "never") return 0;
  if (s.rfind("every_", 0) == 0) {
    const std::string k = s.substr(6);
    if (!k.empty() && k.size() < 7 && k.find_first_not_of("0123456789") == std::string::npos && std::stoi(k) > 0)
      return std::stoi(k);
  }
  throw std::invalid_argument("bad loss-read variant '" + s + "' (never or every_<k>, k >= 1)");
}

// Steps in one timed repetition of a GPU step loop: a multiple of every loss-read interval, so each
// repetition holds the same reads, and the sample's closing synchronisation is one in 100 steps.
inline constexpr std::int64_t kGpuStepsPerRep = 100;

}  // namespace gtb::pitfalls
