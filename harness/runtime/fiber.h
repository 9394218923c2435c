// A function run on a stack of its own, on the calling thread, that hands control back to its caller
// and is resumed later: how the harness keeps the cases of a declared pair set up at once and takes
// their samples in turns (docs/harness.md). Everything stays on one thread, so what a case ties to its
// thread (OpenMP's team, the CUDA device current on it, MPI's main thread, the denormal mode) is the
// same for every side.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>

namespace gtb {

class Fiber {
 public:
  explicit Fiber(std::function<void()> body, std::size_t stack_bytes = std::size_t(64) << 20);
  ~Fiber();  // the body must have finished (a suspended body's frames are never unwound): std::terminate otherwise
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the body until it yields or returns: true while it is suspended, false once it has returned.
  // An exception escaping the body is rethrown here.
  bool resume();
  bool finished() const;
  // Inside a body: back to the resume() that ran it (std::logic_error outside one).
  static void yield();
  // The fiber whose body is running on this thread, or nullptr.
  static Fiber* current();

  struct Impl;  // fiber.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gtb
