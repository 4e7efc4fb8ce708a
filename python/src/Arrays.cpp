//===- Arrays.cpp - numpy arrays to host tensors and back -----------------===//
//
// Part of gnnc's Python package. Arrays going in are borrowed (no copy);
// tensors coming out hand their storage to the array (no copy either).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include <array>

using namespace gnnc::python;
using mlir::gnn::DType;

namespace {
struct DTypeMatch {
  DType dtype;
  char kind;
  size_t size;
  const char *numpyName;
};
constexpr std::array<DTypeMatch, 6> kDTypes = {{
    {DType::F32, 'f', 4, "float32"},
    {DType::F64, 'f', 8, "float64"},
    {DType::I64, 'i', 8, "int64"},
    {DType::I32, 'i', 4, "int32"},
    {DType::I8, 'i', 1, "int8"},
    {DType::Bool, 'b', 1, "bool"},
}};
} // namespace

HostTensor gnnc::python::borrowArray(const py::array &array,
                                     const std::string &name) {
  py::dtype type = array.dtype();
  const DTypeMatch *match = nullptr;
  for (const DTypeMatch &m : kDTypes)
    if (type.kind() == m.kind && size_t(type.itemsize()) == m.size)
      match = &m;
  if (!match)
    raise("'" + name + "' has dtype " + std::string(py::str(type)) +
          ", which gnnc does not take (float32, float64, int64, int32, int8, "
          "bool)");
  if (!(array.flags() & py::array::c_style))
    raise("'" + name + "' is not C-contiguous");
  if (!array.dtype().attr("isnative").cast<bool>())
    raise("'" + name + "' is not in this machine's byte order");
  HostTensor t;
  t.dtype = match->dtype;
  for (py::ssize_t d = 0; d < array.ndim(); ++d)
    t.shape.push_back(int64_t(array.shape(d)));
  t.borrow(const_cast<void *>(array.data()));
  return t;
}

py::array gnnc::python::toArray(HostTensor tensor) {
  const char *name = "float32";
  for (const DTypeMatch &m : kDTypes)
    if (m.dtype == tensor.dtype)
      name = m.numpyName;
  std::vector<py::ssize_t> shape(tensor.shape.begin(), tensor.shape.end());
  auto *owned = new HostTensor(std::move(tensor));
  py::capsule owner(owned,
                    [](void *p) { delete static_cast<HostTensor *>(p); });
  return py::array(py::dtype(name), shape, owned->data(), owner);
}

TensorMap gnnc::python::borrowDict(const py::dict &arrays, const char *what) {
  TensorMap tensors;
  for (auto [key, value] : arrays) {
    std::string name = py::str(key);
    if (!py::isinstance<py::array>(value))
      raise(std::string(what) + " '" + name + "' is not a numpy array");
    tensors[name] = borrowArray(value.cast<py::array>(), name);
  }
  return tensors;
}

py::dict gnnc::python::toDict(TensorMap tensors) {
  py::dict out;
  for (auto &[name, tensor] : tensors)
    out[py::str(name)] = toArray(std::move(tensor));
  return out;
}
