// Diagnostic: the one error type for bad user input (graphs, relation specs, command lines).
//
// Every problem a user can cause is reported as an InputError naming the file, the line (1-based,
// 0 when the problem is not tied to a line) and what was expected. The CLI turns it into exit code
// 2; nothing in the project is allowed to crash or pass silently on bad input.
#pragma once

#include <stdexcept>
#include <string>

namespace gg {

// `text` with control characters (NUL, newlines, escapes: bytes below 0x20 and 0x7f) written as
// \xNN, so that quoting input text keeps an error message one printable line.
inline std::string EscapeControlChars(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string problem)
      : std::runtime_error(Format(file, line, problem)),
        file_(std::move(file)),
        line_(line),
        problem_(std::move(problem)) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& problem() const { return problem_; }

  static std::string Format(const std::string& file, int line, const std::string& problem) {
    // Appended piece by piece: gcc 12 at -O3 warns falsely (-Wrestrict) on `a + ":" + b`.
    std::string text = file.empty() ? std::string("<input>") : EscapeControlChars(file);
    if (line > 0) {
      text += ':';
      text += std::to_string(line);
    }
    text += ": error: ";
    text += EscapeControlChars(problem);
    return text;
  }

 private:
  std::string file_;
  int line_;
  std::string problem_;
};

// A node the numeric runtime cannot execute (an operator neither the registry nor LibTorch knows,
// an exchange it does not model): a limit of GraphGuard, never evidence against the program, so
// a check that meets one in D reports it as an error instead of a failure of D.
class NotExecutableError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace gg
