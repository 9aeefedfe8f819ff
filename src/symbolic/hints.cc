#include "symbolic/hints.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ir/shape.h"
#include "util/diagnostic.h"
#include "util/read_file.h"

namespace gg::symbolic {
namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

size_t Hints::count() const {
  size_t n = 0;
  for (const auto& [ref, exprs] : by_tensor) n += exprs.size();
  return n;
}

void Hints::Add(ir::TensorRef s_tensor, RelExpr expr) {
  std::vector<RelExpr>& list = by_tensor[s_tensor];
  if (std::find(list.begin(), list.end(), expr) == list.end()) list.push_back(std::move(expr));
}

Hints ParseHints(const std::string& text, const std::string& file, const ir::Graph& s_graph,
                 const ir::Program& d_program) {
  Hints hints;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string content = Trim(raw.substr(0, raw.find("//")));
    if (content.empty()) continue;
    size_t eq = content.find("==");
    if (eq == std::string::npos) {
      throw InputError(file, line, "expected a hint 'S_TENSOR == EXPR', got '" + content + "'");
    }
    std::string name = Trim(content.substr(0, eq));
    std::string expr_text = Trim(content.substr(eq + 2));
    if (name.empty() || name.find_first_of(" \t(),@") != std::string::npos) {
      throw InputError(file, line, "expected an S tensor name before '==', got '" + name + "'");
    }
    if (expr_text.empty()) throw InputError(file, line, "missing expression after '=='");
    std::optional<ir::TensorRef> s_tensor = s_graph.Find(name);
    if (!s_tensor) {
      throw InputError(file, line,
                       "unknown S tensor '" + name + "' (no value of that name in " +
                           (s_graph.file.empty() ? std::string("S") : s_graph.file) + ")");
    }
    RelExpr expr = ParseRelExpr(expr_text, d_program, file, line);
    std::string why;
    std::optional<ir::TensorType> type = InferRelType(expr, d_program, &why);
    if (!type) throw InputError(file, line, "hint for " + name + ": " + why);
    const ir::TensorType& s_type = s_graph.type(*s_tensor);
    if (type->shape != s_type.shape) {
      throw InputError(file, line,
                       "hint for " + name + " has shape " + ir::ShapeToString(type->shape) +
                           " but " + name + " has shape " + ir::ShapeToString(s_type.shape) +
                           " (hints for other graphs or other sizes?)");
    }
    hints.Add(*s_tensor, std::move(expr));
  }
  return hints;
}

Hints LoadHints(const std::string& path, const ir::Graph& s_graph, const ir::Program& d_program) {
  return ParseHints(ReadInputFile(path, "hint file"), path, s_graph, d_program);
}

std::string FormatHints(const Hints& hints, const ir::Graph& s_graph, const std::string& header) {
  std::ostringstream out;
  std::istringstream lines(header);
  std::string line;
  while (std::getline(lines, line)) out << "// " << line << "\n";
  for (const auto& [ref, exprs] : hints.by_tensor) {
    for (const RelExpr& expr : exprs) {
      out << s_graph.ValueName(ref) << " == " << expr.ToString() << "\n";
    }
  }
  return out.str();
}

Hints HintsFromMatches(const NumericGuide& guide, const ir::Graph& s_graph,
                       const ir::Program& d_program, size_t* dropped) {
  Hints hints;
  for (const auto& [ref, expr] : guide.matches) {
    std::string why;
    std::optional<ir::TensorType> type = InferRelType(expr, d_program, &why);
    if (type && type->shape == s_graph.type(ref).shape) {
      hints.Add(ref, expr);
    } else {
      ++*dropped;
    }
  }
  return hints;
}

}  // namespace gg::symbolic
