// ReadInputFile: the whole text of an input file a user names (graph, spec, hints, report).
//
// Bad paths are InputError (exit 2) with a message that says what was expected: a directory given
// where a file is wanted, a file that cannot be opened or read, and a file (or device such as
// /dev/zero) larger than any input GraphGuard reads, which would otherwise exhaust memory. Pipes
// and process substitutions (/dev/fd/N) work: only directories are refused up front.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "util/diagnostic.h"

namespace gg {

// The largest input file read (1 GiB): far above the corpus's graphs and specs.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{1} << 30;

// `what` names the file in messages: "hint file" gives "cannot open the hint file".
inline std::string ReadInputFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, 0, "is a directory, but the " + what + " must be a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open the " + what);
  std::string text;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) {
      throw InputError(path, 0,
                       "the " + what + " is larger than 1 GiB, more than any input GraphGuard "
                       "reads (is it the right file?)");
    }
  }
  if (in.bad()) throw InputError(path, 0, "cannot read the " + what);
  return text;
}

}  // namespace gg
