//===- Tape.cpp - per-iteration storage of compiled loops -----------------===//
//
// Part of gnnc's runtime. A tape is a stack of dense copies; a pop hands
// the copy itself to the compiled code, which frees it like any buffer it
// allocated, so each kept value is copied once.
//
//===----------------------------------------------------------------------===//

#include "gnnc/tape.h"
#include "gnnc/cuda.h"
#include "gnnc/memory.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {
/// What compiled code passes for a memref of rank `rank`.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t dims[]; // sizes[rank], then strides[rank]
};

struct Entry {
  void *buffer;
  int64_t rank, elementBytes, bytes;
  int64_t sizes[GNN_TAPE_MAX_RANK];
};

void copyHost(void *to, const void *from, size_t bytes) {
  std::memcpy(to, from, bytes);
}

/// Copies the strided elements of dims [d, rank) from `from` into the dense
/// `to`, which advances past them.
void gather(char *&to, const char *from, int64_t d, int64_t rank,
            const int64_t *sizes, const int64_t *strides, int64_t bytes) {
  if (d == rank) {
    std::memcpy(to, from, bytes);
    to += bytes;
    return;
  }
  if (d == rank - 1 && strides[d] == 1) {
    std::memcpy(to, from, sizes[d] * bytes);
    to += sizes[d] * bytes;
    return;
  }
  for (int64_t i = 0; i < sizes[d]; ++i)
    gather(to, from + i * strides[d] * bytes, d + 1, rank, sizes, strides,
           bytes);
}
} // namespace

struct gnn_rt_tape {
  gnn_rt_context *context;
  void *(*alloc)(size_t);
  void (*free)(void *);
  /// Copies dense bytes between buffers of this tape's memory.
  void (*copy)(void *, const void *, size_t);
  std::vector<Entry> entries;
  int64_t bytes = 0;
  /// The most bytes (buffers and entries) the tape may keep
  /// (gnn_rt_context_tape_budget), and whether a push passed it: then the
  /// tape keeps nothing more.
  int64_t budget = INT64_MAX;
  bool overBudget = false;
  /// A push found no memory for its value.
  bool lostValue = false;
  /// Copies are queued on the thread's stream after its kernels, so the
  /// host gathers a value that is not dense only after waiting for them.
  bool queued = false;
};

static void *hostAlloc(size_t bytes) { return gnn_rt_alloc(bytes); }

static void cudaCopy(void *to, const void *from, size_t bytes) {
  // A failed copy is reported into the process-wide context by the CUDA
  // runtime.
  (void)gnn_cuda_copy(to, from, bytes);
}

static gnn_rt_tape *makeTape(gnn_rt_context *context, void *(*alloc)(size_t),
                             void (*free)(void *),
                             void (*copy)(void *, const void *, size_t)) {
  auto *tape = new (std::nothrow) gnn_rt_tape;
  if (!tape) {
    gnn_rt_context_report(context, "out of memory for a loop's tape");
    return nullptr;
  }
  tape->context = context;
  tape->budget = gnn_rt_context_tape_budget(context);
  tape->alloc = alloc;
  tape->free = free;
  tape->copy = copy;
  return tape;
}

gnn_rt_tape *gnn_rt_tape_create(gnn_rt_context *context) {
  return makeTape(context, hostAlloc, gnn_rt_free, copyHost);
}

gnn_rt_tape *gnn_cuda_tape_create(gnn_rt_context *context) {
  return makeTape(context, gnn_cuda_alloc, gnn_cuda_free, cudaCopy);
}

static void cudaCopyQueued(void *to, const void *from, size_t bytes) {
  (void)gnn_cuda_copy_queued(to, from, bytes);
}

gnn_rt_tape *gnn_cuda_tape_create_queued(gnn_rt_context *context) {
  gnn_rt_tape *tape =
      makeTape(context, gnn_cuda_alloc, gnn_cuda_free, cudaCopyQueued);
  if (tape)
    tape->queued = true;
  return tape;
}

void gnn_rt_tape_free(gnn_rt_tape *tape) {
  if (!tape)
    return;
  for (const Entry &e : tape->entries)
    tape->free(e.buffer);
  delete tape;
}

void gnn_rt_tape_push(gnn_rt_tape *tape, int64_t rank, const void *descriptor,
                      int64_t element_bytes) {
  // Creation failed (reported), or compiled code passed a rank beyond any
  // tape type's.
  if (!tape || rank < 0 || rank > GNN_TAPE_MAX_RANK)
    return;
  const auto *d = static_cast<const Descriptor *>(descriptor);
  Entry e{};
  e.rank = rank;
  e.elementBytes = element_bytes;
  const int64_t *sizes = d->dims, *strides = d->dims + rank;
  // Dense row-major buffers (the usual case) are one copy.
  bool dense = true;
  int64_t count = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    e.sizes[i] = sizes[i];
    if (sizes[i] != 1 && strides[i] != count)
      dense = false;
    count *= sizes[i];
  }
  e.bytes = count * element_bytes;
  // A loop that runs too long for its backward (its trip count from the
  // inputs) fails here, before its tape takes the memory the rest of the
  // program needs. (Each entry counts with its bookkeeping: a loop of
  // empty pushes grows too.)
  if (tape->overBudget)
    return;
  int64_t kept = tape->bytes + int64_t(tape->entries.size() * sizeof(Entry));
  if (e.bytes > tape->budget - kept - int64_t(sizeof(Entry))) {
    tape->overBudget = true;
    char message[256];
    std::snprintf(message, sizeof message,
                  "the backward of a loop needs more than its budget of "
                  "%lld bytes after keeping %lld values of its iterations; "
                  "the loop runs too long to differentiate",
                  static_cast<long long>(tape->budget),
                  static_cast<long long>(tape->entries.size()));
    gnn_rt_context_report(tape->context, message);
    return;
  }
  // A block for empty buffers too, so that every entry owns one.
  e.buffer = tape->alloc(e.bytes ? e.bytes : 1);
  if (!e.buffer) {
    // The pop that misses it reports too; the first report wins.
    char message[128];
    std::snprintf(message, sizeof message,
                  "out of memory keeping %lld bytes of a loop's iteration "
                  "for its backward",
                  static_cast<long long>(e.bytes));
    gnn_rt_context_report(tape->context, message);
    tape->lostValue = true;
    return;
  }
  const char *from = d->aligned + d->offset * element_bytes;
  if (count == 0) {
    // Nothing to copy.
  } else if (dense) {
    tape->copy(e.buffer, from, e.bytes);
  } else {
    // Unified memory is readable from the host, once the kernels that
    // write it are done.
    if (tape->queued)
      gnn_cuda_wait_for_launches();
    char *to = static_cast<char *>(e.buffer);
    gather(to, from, 0, rank, sizes, strides, element_bytes);
  }
  try {
    tape->entries.push_back(e);
  } catch (const std::bad_alloc &) {
    tape->free(e.buffer);
    gnn_rt_context_report(tape->context, "out of memory for a loop's tape");
    return;
  }
  tape->bytes += e.bytes;
}

/// Fills `d` (of rank `rank`) with zeros of the static sizes `want` (0
/// where dynamic), from the tape's memory.
static void popZeros(Descriptor *d, gnn_rt_tape *tape, int64_t rank,
                     const int64_t *want, int64_t bytes) {
  int64_t elements = 1;
  for (int64_t i = 0; i < rank; ++i)
    elements *= want[i] >= 0 ? want[i] : 0;
  size_t size = elements > 0 && bytes > 0 ? size_t(elements * bytes) : 1;
  void *buffer = tape ? tape->alloc(size) : gnn_rt_alloc(size);
  if (buffer)
    std::memset(buffer, 0, size);
  else if (tape)
    gnn_rt_context_report(tape->context, "out of memory popping a tape");
  d->allocated = d->aligned = static_cast<char *>(buffer);
  d->offset = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d->dims[i] = want[i] >= 0 ? want[i] : 0;
    d->dims[rank + i] = stride;
    stride *= d->dims[i];
  }
}

/// Why the last entry of `tape` cannot be popped as a value of rank `rank`,
/// `bytes`-byte elements and sizes `want` (-1: dynamic); empty if it can.
static std::string popMismatch(const gnn_rt_tape *tape, int64_t rank,
                               int64_t bytes, const int64_t *want) {
  char message[200];
  if (tape->entries.empty())
    return "gnn.tape_pop: the tape is empty (a program pops more values than "
           "it pushed)";
  const Entry &e = tape->entries.back();
  if (e.rank != rank || e.elementBytes != bytes) {
    std::snprintf(message, sizeof message,
                  "gnn.tape_pop: a value of rank %lld with %lld-byte "
                  "elements was pushed last, not one of rank %lld with "
                  "%lld-byte elements",
                  static_cast<long long>(e.rank),
                  static_cast<long long>(e.elementBytes),
                  static_cast<long long>(rank), static_cast<long long>(bytes));
    return message;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (want[i] >= 0 && want[i] != e.sizes[i]) {
      std::snprintf(message, sizeof message,
                    "gnn.tape_pop: the value pushed last has size %lld in "
                    "dimension %lld, the popped type %lld",
                    static_cast<long long>(e.sizes[i]),
                    static_cast<long long>(i), static_cast<long long>(want[i]));
      return message;
    }
  return "";
}

void gnn_rt_tape_pop(void *result, gnn_rt_tape *tape, int64_t rank,
                     int64_t element_bytes, const gnn_tape_shape *shape) {
  auto *d = static_cast<Descriptor *>(result);
  if (rank < 0 || rank > GNN_TAPE_MAX_RANK)
    rank = 0;
  int64_t want[GNN_TAPE_MAX_RANK];
  for (int64_t i = 0; i < rank; ++i)
    want[i] = shape && i < shape->sizes[0]
                  ? shape->aligned[shape->offset + i * shape->strides[0]]
                  : -1;
  std::string mismatch =
      tape ? popMismatch(tape, rank, element_bytes, want) : "no tape";
  if (!mismatch.empty()) {
    if (tape)
      gnn_rt_context_report(tape->context, mismatch.c_str());
    popZeros(d, tape, rank, want, element_bytes);
    return;
  }
  Entry e = tape->entries.back();
  tape->entries.pop_back();
  tape->bytes -= e.bytes;
  d->allocated = d->aligned = static_cast<char *>(e.buffer);
  d->offset = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    d->dims[i] = e.sizes[i];
    d->dims[rank + i] = stride;
    stride *= e.sizes[i];
  }
}

int64_t gnn_rt_tape_size(const gnn_rt_tape *tape) {
  return tape ? static_cast<int64_t>(tape->entries.size()) : 0;
}

int64_t gnn_rt_tape_bytes(const gnn_rt_tape *tape) {
  return tape ? tape->bytes : 0;
}

extern "C" int32_t gnn_rt_tape_refused(const gnn_rt_tape *tape) {
  return !tape || tape->overBudget || tape->lostValue;
}
