// Fibers on ucontext: a stack of their own (mapped, a guard page below), switched on the caller's thread.
#include "harness/runtime/fiber.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

#if defined(__SANITIZE_ADDRESS__)
#define GTB_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTB_FIBER_ASAN 1
#endif
#endif
#ifdef GTB_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace gtb {

struct Fiber::Impl {
  std::function<void()> body;
  void* stack = nullptr;
  std::size_t mapped = 0, usable = 0;
  ucontext_t self{}, caller{};
  bool started = false, done = false;
  std::exception_ptr error;
  Fiber* outer = nullptr;  // the fiber that resumed this one (nested fibers), or nullptr
  // AddressSanitizer's view of the stack switch (its fake stacks, the stacks' bounds).
  void* fake_stack = nullptr;
  const void* caller_bottom = nullptr;
  std::size_t caller_size = 0;
};

namespace {
thread_local Fiber* t_current = nullptr;
thread_local Fiber::Impl* t_starting = nullptr;

void start_switch([[maybe_unused]] void** fake, [[maybe_unused]] const void* bottom, [[maybe_unused]] std::size_t size) {
#ifdef GTB_FIBER_ASAN
  __sanitizer_start_switch_fiber(fake, bottom, size);
#endif
}
void finish_switch([[maybe_unused]] void* fake, [[maybe_unused]] const void** bottom, [[maybe_unused]] std::size_t* size) {
#ifdef GTB_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake, bottom, size);
#endif
}

void trampoline() {
  Fiber::Impl* f = t_starting;
  finish_switch(nullptr, &f->caller_bottom, &f->caller_size);
  try {
    f->body();
  } catch (...) {
    f->error = std::current_exception();
  }
  f->done = true;
  start_switch(nullptr, f->caller_bottom, f->caller_size);  // this stack ends: no fake stack kept
  setcontext(&f->caller);
}
}  // namespace

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes) : impl_(std::make_unique<Impl>()) {
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  impl_->body = std::move(body);
  impl_->usable = (stack_bytes + page - 1) / page * page;
  impl_->mapped = impl_->usable + page;
  void* p = mmap(nullptr, impl_->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("fiber: cannot map a stack");
  impl_->stack = p;
  mprotect(p, page, PROT_NONE);  // a guard page below the stack: an overflow faults, never corrupts
  if (getcontext(&impl_->self) != 0) throw std::runtime_error("fiber: getcontext failed");
  impl_->self.uc_stack.ss_sp = static_cast<char*>(p) + page;
  impl_->self.uc_stack.ss_size = impl_->usable;
  impl_->self.uc_link = nullptr;
  makecontext(&impl_->self, trampoline, 0);
}

Fiber::~Fiber() {
  if (impl_->started && !impl_->done) std::terminate();
  munmap(impl_->stack, impl_->mapped);
}

bool Fiber::finished() const { return impl_->done; }
Fiber* Fiber::current() { return t_current; }

bool Fiber::resume() {
  Impl& f = *impl_;
  if (f.done) return false;
  if (t_current == this) throw std::logic_error("fiber: resumed from its own body");
  f.outer = t_current;
  t_current = this;
  if (!f.started) {
    f.started = true;
    t_starting = &f;
  }
  void* fake = nullptr;
  start_switch(&fake, f.self.uc_stack.ss_sp, f.self.uc_stack.ss_size);
  swapcontext(&f.caller, &f.self);
  finish_switch(fake, nullptr, nullptr);
  t_current = f.outer;
  if (f.done && f.error) {
    std::exception_ptr e = f.error;
    f.error = nullptr;
    std::rethrow_exception(e);
  }
  return !f.done;
}

void Fiber::yield() {
  Fiber* me = t_current;
  if (!me) throw std::logic_error("fiber: yield outside a fiber");
  Impl& f = *me->impl_;
  start_switch(&f.fake_stack, f.caller_bottom, f.caller_size);
  swapcontext(&f.self, &f.caller);
  finish_switch(f.fake_stack, &f.caller_bottom, &f.caller_size);
}

}  // namespace gtb
