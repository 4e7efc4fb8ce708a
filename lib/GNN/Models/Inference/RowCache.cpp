//===- RowCache.cpp - a decoder k/v cache ---------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "RowCache.h"
#include "GNN/Runner/UnifiedMemory.h"

#include <cstring>

using namespace mlir::gnn;
using namespace mlir::gnn::detail;
using llvm::Error;
using llvm::Expected;

std::vector<int64_t> RowCache::shapeOf(int64_t rows) const {
  std::vector<int64_t> shape = {rows};
  shape.insert(shape.end(), rowShape.begin(), rowShape.end());
  return shape;
}

Expected<HostTensor> RowCache::zeroedStorage(int64_t rows) const {
  if (unified)
    return unifiedZeros(DType::F32, shapeOf(rows));
  HostTensor t;
  t.shape = shapeOf(rows);
  t.allocate();
  return t;
}

Error RowCache::copy(void *to, const void *from, size_t bytes) const {
  if (bytes == 0) // (no rows yet: no storage to copy from)
    return Error::success();
  if (unified)
    return unifiedMemcpy(to, from, bytes);
  std::memcpy(to, from, bytes);
  return Error::success();
}

Expected<HostTensor *> RowCache::append(int64_t fresh) {
  int64_t rows = view.shape[0], capacity = storage.shape[0];
  if (rows + fresh > capacity) {
    Expected<HostTensor> larger =
        zeroedStorage(std::max(rows + fresh, 2 * capacity));
    if (!larger)
      return larger.takeError();
    if (Error e = copy(larger->data(), storage.data(), view.numBytes()))
      return std::move(e);
    storage = std::move(*larger);
  }
  view = HostTensor();
  view.shape = shapeOf(rows + fresh);
  view.borrow(storage.data());
  return &view;
}

Error RowCache::store(const HostTensor &result, llvm::StringRef name) {
  if (result.data() == view.data())
    return Error::success();
  if (result.shape != view.shape)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "@decode returns '" + name + "' of shape " +
                                       result.describe() + ", expected " +
                                       view.describe());
  return copy(view.data(), result.data(), view.numBytes());
}

Error mlir::gnn::detail::appendRows(std::vector<RowCache> &caches,
                                    int64_t fresh,
                                    std::vector<HostTensor *> &views) {
  views.clear();
  for (RowCache &cache : caches) {
    Expected<HostTensor *> rows = cache.append(fresh);
    if (!rows)
      return rows.takeError();
    views.push_back(*rows);
  }
  return Error::success();
}
