#include "ir/dtype.h"

#include <array>
#include <utility>

namespace gg::ir {
namespace {

struct DTypeNames {
  DType dtype;
  std::string_view short_name;
  std::string_view torch_name;
  int size;
};

constexpr std::array<DTypeNames, 12> kNames = {{
    {DType::kBool, "b8", "bool", 1},
    {DType::kUInt8, "u8", "uint8", 1},
    {DType::kInt8, "i8", "int8", 1},
    {DType::kInt16, "i16", "int16", 2},
    {DType::kInt32, "i32", "int32", 4},
    {DType::kInt64, "i64", "int64", 8},
    {DType::kFloat16, "f16", "float16", 2},
    {DType::kBFloat16, "bf16", "bfloat16", 2},
    {DType::kFloat32, "f32", "float32", 4},
    {DType::kFloat64, "f64", "float64", 8},
    {DType::kComplex64, "c64", "complex64", 8},
    {DType::kComplex128, "c128", "complex128", 16},
}};

const DTypeNames& Names(DType dtype) { return kNames[static_cast<int>(dtype)]; }

}  // namespace

std::string_view ShortName(DType dtype) { return Names(dtype).short_name; }

std::string TorchName(DType dtype) { return "torch." + std::string(Names(dtype).torch_name); }

std::optional<DType> ParseDType(std::string_view text) {
  if (text.substr(0, 6) == "torch.") text.remove_prefix(6);
  for (const auto& n : kNames) {
    if (text == n.short_name || text == n.torch_name) return n.dtype;
  }
  // Aliases torch accepts.
  static constexpr std::pair<std::string_view, DType> kAliases[] = {
      {"float", DType::kFloat32},  {"double", DType::kFloat64}, {"half", DType::kFloat16},
      {"int", DType::kInt32},      {"long", DType::kInt64},     {"short", DType::kInt16},
      {"cfloat", DType::kComplex64}, {"cdouble", DType::kComplex128},
  };
  for (const auto& [alias, dtype] : kAliases) {
    if (text == alias) return dtype;
  }
  return std::nullopt;
}

bool IsFloatingPoint(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}

int SignificandBits(DType d) {
  switch (d) {
    case DType::kBFloat16:
      return 8;
    case DType::kFloat16:
      return 11;
    case DType::kFloat32:
      return 24;
    case DType::kFloat64:
      return 53;
    default:
      return 0;
  }
}

bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

bool IsIntegral(DType d, bool include_bool) {
  if (d == DType::kBool) return include_bool;
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 ||
         d == DType::kInt64;
}

int ElementSize(DType d) { return Names(d).size; }

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  // Category order: bool < integral < floating < complex; inside a category the wider wins.
  // f16 with bf16 promotes to f32, as torch does.
  auto category = [](DType d) {
    if (d == DType::kBool) return 0;
    if (IsIntegral(d, false)) return 1;
    if (IsFloatingPoint(d)) return 2;
    return 3;
  };
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if ((a == DType::kFloat16 && b == DType::kBFloat16) ||
      (a == DType::kBFloat16 && b == DType::kFloat16)) {
    return DType::kFloat32;
  }
  if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8)) {
    return DType::kInt16;
  }
  return ElementSize(a) >= ElementSize(b) ? a : b;
}

}  // namespace gg::ir
