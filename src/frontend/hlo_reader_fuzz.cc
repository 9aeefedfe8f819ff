// libFuzzer entry point for the HLO text reader: any bytes must either parse or raise
// gg::InputError; anything else escaping (or a crash, or a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/hlo_reader.h"
#include "util/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    gg::frontend::HloOptions options{.rank = 0, .world = 0};
    gg::frontend::ParseHlo(text, "fuzz.hlo", options);
  } catch (const gg::InputError&) {
  }
  return 0;
}
