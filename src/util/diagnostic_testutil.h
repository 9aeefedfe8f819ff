// Test helper for code that reports bad input as gg::InputError.
#pragma once

#include <gtest/gtest.h>

#include "util/diagnostic.h"

namespace gg {

// Runs `fn` and returns the InputError it throws (fails the test if none).
template <typename Fn>
InputError ExpectInputError(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("", 0, "");
}

}  // namespace gg
