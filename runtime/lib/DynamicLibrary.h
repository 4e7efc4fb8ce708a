//===- DynamicLibrary.h - libraries opened at run time ----------*- C++ -*-===//
//
// Part of gnnc's runtime. The CUDA driver, cuBLAS and OpenBLAS are opened
// with dlopen (the same binaries run where they are missing, and OpenBLAS
// is told its kernels before it loads): opening the first of several
// sonames and binding entry points by name.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_DYNAMICLIBRARY_H
#define GNNC_RUNTIME_DYNAMICLIBRARY_H

#include <dlfcn.h>
#include <initializer_list>

namespace gnnc {
/// The first of `names` that dlopen opens (locally, all symbols bound now),
/// or null.
inline void *openFirst(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return library;
  return nullptr;
}

/// Binds entry points of `library` to function pointers, remembering the
/// first required one it lacks.
class Symbols {
public:
  explicit Symbols(void *library) : library(library) {}

  /// Binds `fn` to `name`; false (and `fn` null) if the library lacks it.
  template <typename Fn> bool bind(const char *name, Fn &fn) {
    fn = reinterpret_cast<Fn>(dlsym(library, name));
    return fn != nullptr;
  }
  /// Binds a required entry point (none after the first one missing).
  template <typename Fn> void need(const char *name, Fn &fn) {
    if (!firstMissing && !bind(name, fn))
      firstMissing = name;
  }
  /// The first required entry point the library lacks, or null.
  const char *missing() const { return firstMissing; }

private:
  void *library;
  const char *firstMissing = nullptr;
};
} // namespace gnnc

#endif // GNNC_RUNTIME_DYNAMICLIBRARY_H
