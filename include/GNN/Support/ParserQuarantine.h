//===- ParserQuarantine.h - freed memory kept while MLIR parses -*- C++ -*-===//
//
// Part of gnnc (no MLIR). MLIR 19's parser writes into operations it has
// already freed when a parse fails after a use before its definition was
// resolved to a value inside a region that the failure then destroys
// (`%u = arith.addf %v, %v` above a region that defines `%v` and then has an
// error): the destroyed region's values are still on the outer op's use
// lists. Those writes land in malloc's free lists, and a later allocation
// aborts ("malloc(): unsorted double linked list corrupted") or, inside a
// crash handler, hangs. The tools parse user text inside a
// ParserQuarantine: memory that the parsing thread frees is kept until the
// guard ends, so the stale writes land in memory the process still owns,
// which goes back to malloc once the parser has let go of it.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_PARSERQUARANTINE_H
#define GNN_SUPPORT_PARSERQUARANTINE_H

#include <cstddef>

namespace mlir::gnn {

/// While alive, `free` on this thread keeps the memory instead of returning
/// it to malloc (other threads are not affected). Guards nest; the
/// outermost one returns what was kept when it ends or is released.
class ParserQuarantine {
public:
  ParserQuarantine();
  ~ParserQuarantine();
  ParserQuarantine(const ParserQuarantine &) = delete;
  ParserQuarantine &operator=(const ParserQuarantine &) = delete;

  /// Ends this guard now (once the parser is done with its memory); the
  /// destructor then does nothing.
  void release();

  /// Blocks kept on this thread so far (for tests).
  static size_t keptBlocks();

  /// False in builds whose allocator is AddressSanitizer's: it defines
  /// `free` itself and keeps freed memory from reuse for a while, and the
  /// guard does nothing.
  static bool keepsMemory();

private:
  bool active = true;
};

} // namespace mlir::gnn

#endif // GNN_SUPPORT_PARSERQUARANTINE_H
