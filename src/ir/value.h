// Value: one argument of a node as written in the captured program.
//
// Arguments mix tensors (references to an output of an earlier node) with plain data: None,
// bools, ints, floats (including inf/nan), strings, dtypes, devices, torch enums such as
// torch.contiguous_format, references to operators (the first argument of auto_functionalized)
// and lists of any of these (e.g. index.Tensor(x, [idx0, idx1])). Values keep what the source
// said, so that a graph written back out is the graph that was read.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"

namespace gg::ir {

using NodeId = int32_t;

// An output of a node of the same graph.
struct TensorRef {
  NodeId node = -1;
  int32_t output = 0;
  friend bool operator==(const TensorRef& a, const TensorRef& b) {
    return a.node == b.node && a.output == b.output;
  }
  friend bool operator<(const TensorRef& a, const TensorRef& b) {
    return a.node != b.node ? a.node < b.node : a.output < b.output;
  }
};

struct Device {
  std::string type;  // "cpu", "cuda", "meta"
  int32_t index = -1;  // -1: not given
  friend bool operator==(const Device& a, const Device& b) {
    return a.type == b.type && a.index == b.index;
  }
};

// A torch enum or constant written by name, e.g. torch.contiguous_format or torch.strided.
struct EnumValue {
  std::string name;
  friend bool operator==(const EnumValue& a, const EnumValue& b) { return a.name == b.name; }
};

// A reference to an operator overload, e.g. torch.ops._C.rms_norm.default.
struct OpRefValue {
  std::string qualified_name;  // "_C::rms_norm.default"
  friend bool operator==(const OpRefValue& a, const OpRefValue& b) {
    return a.qualified_name == b.qualified_name;
  }
};

struct None {
  friend bool operator==(const None&, const None&) { return true; }
};

class Value {
 public:
  using List = std::vector<Value>;
  using Storage = std::variant<None, bool, int64_t, double, std::string, DType, Device, EnumValue,
                               OpRefValue, TensorRef, List>;

  Value() = default;
  Value(None) {}
  Value(bool b) : storage_(b) {}
  Value(int64_t i) : storage_(i) {}
  Value(int i) : storage_(static_cast<int64_t>(i)) {}
  Value(double d) : storage_(d) {}
  Value(std::string s) : storage_(std::move(s)) {}
  Value(const char* s) : storage_(std::string(s)) {}
  Value(DType d) : storage_(d) {}
  Value(Device d) : storage_(std::move(d)) {}
  Value(EnumValue e) : storage_(std::move(e)) {}
  Value(OpRefValue o) : storage_(std::move(o)) {}
  Value(TensorRef t) : storage_(t) {}
  Value(List l) : storage_(std::move(l)) {}

  bool is_none() const { return std::holds_alternative<None>(storage_); }
  bool is_bool() const { return std::holds_alternative<bool>(storage_); }
  bool is_int() const { return std::holds_alternative<int64_t>(storage_); }
  bool is_double() const { return std::holds_alternative<double>(storage_); }
  bool is_number() const { return is_int() || is_double() || is_bool(); }
  bool is_string() const { return std::holds_alternative<std::string>(storage_); }
  bool is_dtype() const { return std::holds_alternative<DType>(storage_); }
  bool is_device() const { return std::holds_alternative<Device>(storage_); }
  bool is_enum() const { return std::holds_alternative<EnumValue>(storage_); }
  bool is_op_ref() const { return std::holds_alternative<OpRefValue>(storage_); }
  bool is_tensor() const { return std::holds_alternative<TensorRef>(storage_); }
  bool is_list() const { return std::holds_alternative<List>(storage_); }

  bool as_bool() const { return std::get<bool>(storage_); }
  int64_t as_int() const { return std::get<int64_t>(storage_); }
  // Any number as a double (ints and bools convert).
  double as_double() const;
  const std::string& as_string() const { return std::get<std::string>(storage_); }
  DType as_dtype() const { return std::get<DType>(storage_); }
  const Device& as_device() const { return std::get<Device>(storage_); }
  const EnumValue& as_enum() const { return std::get<EnumValue>(storage_); }
  const OpRefValue& as_op_ref() const { return std::get<OpRefValue>(storage_); }
  const TensorRef& as_tensor() const { return std::get<TensorRef>(storage_); }
  TensorRef& as_tensor() { return std::get<TensorRef>(storage_); }
  const List& as_list() const { return std::get<List>(storage_); }
  List& as_list() { return std::get<List>(storage_); }

  // A list of ints (an int alone counts as a one-element list, as in torch's int[] arguments).
  bool is_int_list() const;
  std::vector<int64_t> as_int_list() const;

  // Appends every tensor reference inside this value (depth first) to *out.
  void CollectTensors(std::vector<TensorRef>* out) const;

  const Storage& storage() const { return storage_; }
  friend bool operator==(const Value& a, const Value& b) { return a.storage_ == b.storage_; }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

 private:
  Storage storage_;
};

}  // namespace gg::ir
