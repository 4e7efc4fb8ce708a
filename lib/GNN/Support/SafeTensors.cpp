//===- SafeTensors.cpp - read and write safetensors files -----------------===//
//
// Part of gnnc. Layout: an 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// optional "__metadata__"}), then the data, offsets relative to its start.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/SafeTensors.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/Messages.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/StrictJson.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir::gnn;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {
/// Headers larger than this are refused before any allocation (a model of
/// 1000 tensors has about 100 KB).
constexpr uint64_t kMaxHeaderBytes = 16u << 20;
/// Files listing more tensors than this are refused before the header is
/// parsed (parsing costs tens of bytes of memory per byte of header).
constexpr size_t kMaxTensors = 50000;

/// The number of members of the JSON object `text` (its commas at depth
/// one, outside strings, plus one), without parsing it: an upper bound
/// that is exact for well-formed text.
size_t countMembers(StringRef text) {
  size_t commas = 0;
  int depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '{' || c == '[')
      ++depth;
    else if (c == '}' || c == ']')
      --depth;
    else if (c == ',' && depth == 1)
      ++commas;
  }
  return commas + 1;
}

Error fail(StringRef what, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 what + ": " + message);
}
} // namespace

Expected<TensorMap> mlir::gnn::parseSafeTensors(StringRef bytes,
                                                StringRef what) {
  if (bytes.size() < 8)
    return fail(what, "file is " + llvm::Twine(bytes.size()) +
                          " bytes, too short for a safetensors header");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | static_cast<uint8_t>(bytes[i]);
  if (headerSize > kMaxHeaderBytes && headerSize <= bytes.size() - 8)
    return fail(what, "header length " + llvm::Twine(headerSize) +
                          " is more than the limit of " +
                          llvm::Twine(kMaxHeaderBytes) + " bytes");
  if (headerSize > bytes.size() - 8)
    return fail(what, "header length " + llvm::Twine(headerSize) +
                          " exceeds the file (" + llvm::Twine(bytes.size()) +
                          " bytes)");
  StringRef headerText = bytes.substr(8, headerSize);
  StringRef data = bytes.substr(8 + headerSize);

  if (size_t members = countMembers(headerText); members > kMaxTensors)
    return fail(what, "header lists " + llvm::Twine(members) +
                          " entries, more than " + llvm::Twine(kMaxTensors));
  Expected<llvm::json::Value> header = parseStrictJson(headerText);
  if (!header)
    return fail(what, "header is not valid JSON: " +
                          llvm::toString(header.takeError()));
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return fail(what, "header is not a JSON object");

  TensorMap tensors;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto &[key, value] : *entries) {
    std::string name = key.str();
    if (name == "__metadata__") {
      if (!value.getAsObject())
        return fail(what, "__metadata__ is not an object");
      continue;
    }
    auto bad = [&](const llvm::Twine &message) {
      return fail(what, "tensor '" + clipForMessage(name) + "': " + message);
    };
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return bad("entry is not an object");
    std::optional<StringRef> dtypeText = entry->getString("dtype");
    if (!dtypeText)
      return bad("missing dtype");
    std::optional<DType> dtype = parseDType(*dtypeText);
    if (!dtype)
      return bad("unsupported dtype '" + clipForMessage(*dtypeText) + "'");
    const llvm::json::Array *shape = entry->getArray("shape");
    if (!shape)
      return bad("missing shape");
    HostTensor tensor;
    tensor.dtype = *dtype;
    uint64_t count = 1;
    for (const llvm::json::Value &dim : *shape) {
      std::optional<int64_t> size = dim.getAsInteger();
      if (!size || *size < 0)
        return bad("shape entries must be non-negative integers");
      if (*size != 0 &&
          count > std::numeric_limits<uint64_t>::max() / 16 / uint64_t(*size))
        return bad("shape is too large");
      count *= uint64_t(*size);
      tensor.shape.push_back(*size);
    }
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!offsets || offsets->size() != 2)
      return bad("data_offsets must be [begin, end]");
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        uint64_t(*end) > data.size())
      return bad("data_offsets lie outside the data (" +
                 llvm::Twine(data.size()) + " bytes)");
    uint64_t expected = count * dtypeSize(*dtype);
    if (uint64_t(*end - *begin) != expected)
      return bad("holds " + llvm::Twine(*end - *begin) + " bytes, but " +
                 tensor.describe() + " needs " + llvm::Twine(expected));
    ranges.emplace_back(*begin, *end);
    tensor.allocateUninitialized();
    if (expected)
      std::memcpy(tensor.data(), data.data() + *begin, expected);
    tensors.emplace(name, std::move(tensor));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return fail(what, "tensor data ranges overlap");
  return tensors;
}

Expected<TensorMap> mlir::gnn::readSafeTensors(StringRef path) {
  auto buffer = readInputFile(path);
  if (!buffer)
    return fail(path, "cannot read: " + llvm::toString(buffer.takeError()));
  return parseSafeTensors((*buffer)->getBuffer(), path);
}

/// The safetensors bytes of `tensors`: the header, then each tensor's
/// elements as they are (nothing copied first).
static void streamSafeTensors(llvm::raw_ostream &out,
                              const TensorMap &tensors) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    llvm::json::Array shape;
    for (int64_t d : tensor.shape)
      shape.push_back(d);
    uint64_t size = tensor.numBytes();
    header[name] = llvm::json::Object{
        {"dtype", dtypeName(tensor.dtype)},
        {"shape", std::move(shape)},
        {"data_offsets",
         llvm::json::Array{int64_t(offset), int64_t(offset + size)}}};
    offset += size;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(header));
  os.flush();
  // The data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  char length[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.write(length, sizeof(length));
  out << text;
  for (const auto &[name, tensor] : tensors)
    out.write(static_cast<const char *>(tensor.data()), tensor.numBytes());
}

std::string mlir::gnn::serializeSafeTensors(const TensorMap &tensors) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  streamSafeTensors(out, tensors);
  out.flush();
  return bytes;
}

Error mlir::gnn::writeSafeTensors(StringRef path, const TensorMap &tensors) {
  return writeFileAtomically(path, [&](llvm::raw_ostream &out) {
    streamSafeTensors(out, tensors);
    return Error::success();
  });
}

std::optional<std::string>
mlir::gnn::firstNonFiniteTensor(const TensorMap &tensors) {
  for (const auto &[name, tensor] : tensors) {
    bool finite = true;
    if (tensor.dtype == DType::F32) {
      const float *x = tensor.as<float>();
      for (int64_t i = 0, n = tensor.numElements(); finite && i < n; ++i)
        finite = std::isfinite(x[i]);
    } else if (tensor.dtype == DType::F64) {
      const double *x = tensor.as<double>();
      for (int64_t i = 0, n = tensor.numElements(); finite && i < n; ++i)
        finite = std::isfinite(x[i]);
    }
    if (!finite)
      return name;
  }
  return std::nullopt;
}
