//===- ExitReport.h - profiles printed when the process exits ---*- C++ -*-===//
//
// Part of gnnc's runtime (internal). The runtime's profiles
// (GNNC_CUDA_PROFILE, GNNC_DENSE_PROFILE) are asked for in the environment
// and print their tables at exit.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_EXITREPORT_H
#define GNNC_RUNTIME_EXITREPORT_H

#include <cstdlib>
#include <cstring>

namespace gnnc {
/// Whether `variable` asks for a profile (set, not empty, not "0"); if so,
/// `state()`'s report() runs at exit. The state is constructed first, so
/// that it is destroyed after the report.
template <auto &state> bool reportAtExitIfAsked(const char *variable) {
  const char *setting = std::getenv(variable);
  if (!setting || !*setting || std::strcmp(setting, "0") == 0)
    return false;
  state();
  std::atexit([] { state().report(); });
  return true;
}
} // namespace gnnc

#endif // GNNC_RUNTIME_EXITREPORT_H
