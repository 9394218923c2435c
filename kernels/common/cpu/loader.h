// A library loaded at run time (dlopen) and its functions bound by name through the handle, as
// oneMKL (mkl.cpp) and oneDNN 3 (dnnl3.cpp) are: the first failure is kept as the reason the
// library cannot be used, and every later step does nothing.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gtb::cpu {

struct LoadedLibrary {
  void* handle = nullptr;
  std::string reason;  // "" while the library can be used
  std::string label;   // "oneMKL": what the reasons call it
  const char* path = "";

  // dlopen(path, flags); false (and the reason) when it did not load.
  bool open(std::string what, const char* file, int flags) {
    label = std::move(what), path = file;
    handle = dlopen(path, flags);
    if (handle) return true;
    const char* err = dlerror();
    reason = label + " did not load: " + (err ? err : path);
    return false;
  }
  // One function of the library by its name.
  template <class F>
  void bind(F& fn, const char* name) {
    if (!reason.empty()) return;
    fn = reinterpret_cast<F>(dlsym(handle, name));
    if (!fn) reason = label + " (" + path + ") has no " + name;
  }
};

}  // namespace gtb::cpu
