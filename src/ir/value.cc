#include "ir/value.h"

#include <stdexcept>

namespace gg::ir {

double Value::as_double() const {
  if (is_double()) return std::get<double>(storage_);
  if (is_int()) return static_cast<double>(std::get<int64_t>(storage_));
  if (is_bool()) return std::get<bool>(storage_) ? 1.0 : 0.0;
  throw std::bad_variant_access();
}

bool Value::is_int_list() const {
  if (is_int()) return true;
  if (!is_list()) return false;
  for (const Value& v : as_list()) {
    if (!v.is_int()) return false;
  }
  return true;
}

std::vector<int64_t> Value::as_int_list() const {
  if (is_int()) return {as_int()};
  std::vector<int64_t> out;
  for (const Value& v : as_list()) out.push_back(v.as_int());
  return out;
}

void Value::CollectTensors(std::vector<TensorRef>* out) const {
  if (is_tensor()) {
    out->push_back(as_tensor());
  } else if (is_list()) {
    for (const Value& v : as_list()) v.CollectTensors(out);
  }
}

}  // namespace gg::ir
