//===- Fingerprint.cpp - what a saved training state must agree with -----===//
//
// Part of gnnc. The fingerprint is derived from the field lists of the
// model config and the trainer options, so a field added to either is part
// of it without a change here.
//
//===----------------------------------------------------------------------===//

#include "TrainerDetail.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <type_traits>

using namespace mlir::gnn;

namespace {
/// Writes one field's value, the same text for the same value on every run
/// and machine (doubles with every digit they need to read back exactly).
struct FieldWriter {
  llvm::raw_ostream &os;

  void value(double v) { os << llvm::format("%.17g", v); }
  void value(const std::optional<double> &v) {
    if (v)
      value(*v);
    else
      os << "none";
  }
  template <typename T> void value(const T &v) {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                  "a field of a type the fingerprint cannot write yet");
    if constexpr (std::is_enum_v<T>)
      os << static_cast<int64_t>(v);
    else if constexpr (std::is_signed_v<T>)
      os << static_cast<int64_t>(v);
    else
      os << static_cast<uint64_t>(v);
  }
  template <typename T> void operator()(const char *name, const T &v) {
    os << name << '=';
    value(v);
    os << ' ';
  }
};
} // namespace

uint64_t mlir::gnn::stateFingerprint(const ModelConfig &config,
                                     const TrainerOptions &options,
                                     const std::vector<std::string> &parameters,
                                     const TensorMap &tensors) {
  std::string identity;
  llvm::raw_string_ostream id(identity);
  FieldWriter write{id};
  ModelConfig::visitFields(config, write);
  TrainerOptions::visitFields(options, write);
  for (const std::string &name : parameters) {
    auto it = tensors.find(name);
    id << name << ':'
       << (it == tensors.end() ? std::string("missing") : it->second.describe())
       << ' ';
  }
  return detail::stableHash(identity);
}
