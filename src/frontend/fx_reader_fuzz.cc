// libFuzzer entry point for the FX print_readable reader: any bytes must either parse or raise
// gg::InputError; anything else escaping (or a crash, or a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/fx_reader.h"
#include "util/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    gg::frontend::FxOptions options;
    options.group_size = 2;
    gg::frontend::ParseFx(text, "fuzz.r0.py", options);
  } catch (const gg::InputError&) {
  }
  return 0;
}
