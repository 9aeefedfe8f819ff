// DType: the element types a captured graph may carry, with their spellings in FX annotations
// ("f32", "bf16", "b8"), in FX arguments ("torch.float32") and in GraphGuard JSON (same as FX
// annotations).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gg::ir {

enum class DType {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

// Short name as used in FX annotations: "f32", "bf16", "i64", "b8", ...
std::string_view ShortName(DType dtype);
// Parses a short name ("f32") or a torch name ("torch.float32", "float32", "torch.int").
std::optional<DType> ParseDType(std::string_view text);
// The torch spelling, e.g. "torch.float32".
std::string TorchName(DType dtype);

bool IsFloatingPoint(DType dtype);
bool IsComplex(DType dtype);
bool IsIntegral(DType dtype, bool include_bool);
int ElementSize(DType dtype);
// Significand bits (the implicit one included) of a real floating type: bf16 8, f16 11, f32 24,
// f64 53; 0 for integers, booleans and complex types. Its unit roundoff is 2^-bits.
int SignificandBits(DType dtype);

// Type promotion of two tensor operands (torch.result_type for tensors of equal "category").
DType PromoteTypes(DType a, DType b);

}  // namespace gg::ir
