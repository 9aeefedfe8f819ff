// Loading the lemma catalogue (rule text + math comments + signatures) and instantiating
// self-test signatures into e-graphs.
#include "symbolic/lemma_catalogue.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "symbolic/lemma_conditions.h"
#include "symbolic/pattern.h"
#include "util/diagnostic.h"

namespace gg::symbolic {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `#   test ...` -> the text after "test"; nullopt for other lines.
std::optional<std::string> TestLine(const std::string& line) {
  std::string t = Trim(line);
  if (t.empty() || t[0] != '#') return std::nullopt;
  t = Trim(t.substr(1));
  if (t.rfind("test ", 0) != 0) return std::nullopt;
  return Trim(t.substr(5));
}

// The pointwise unary ops of the language, the members of a `{f}` family.
std::vector<std::string> PointwiseOps() {
  std::vector<std::string> ops;
  for (const TensorOpInfo& op : TensorOpTable()) {
    if (op.pointwise) ops.push_back(op.name);
  }
  return ops;
}

// A file's text with every `{f}` rule line written out once per pointwise op (the id taking
// the op's name, '_' as '-'), and for each line of the result the line of the file it came
// from (errors and lemma metadata speak of the file's lines).
std::pair<std::string, std::vector<int>> ExpandFamilies(const std::string& text) {
  static const std::string kVar = "{f}";
  std::string out;
  std::vector<int> origin{0};  // origin[line of out, 1-based] = line of text
  std::vector<std::string> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::string t = Trim(line);
    std::vector<std::string> copies{line};
    if (!t.empty() && t[0] != '#' && line.find(kVar) != std::string::npos) {
      copies.clear();
      for (const std::string& op : PointwiseOps()) {
        std::string id_name = op;
        std::replace(id_name.begin(), id_name.end(), '_', '-');
        std::string copy = line;
        size_t colon = copy.find(':');
        for (size_t at; (at = copy.find(kVar)) != std::string::npos;) {
          copy.replace(at, kVar.size(), at < colon ? id_name : op);
          colon = copy.find(':');
        }
        copies.push_back(copy);
      }
    }
    for (const std::string& copy : copies) {
      out += copy + "\n";
      origin.push_back(static_cast<int>(i) + 1);
    }
  }
  return {out, origin};
}

}  // namespace

std::vector<LemmaFile> LemmaFilesInDir(const std::string& dir) {
  std::vector<LemmaFile> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".rules") continue;
    std::ifstream in(entry.path());
    if (!in) throw InputError(entry.path().string(), 0, "cannot read lemma file");
    std::stringstream buffer;
    buffer << in.rdbuf();
    files.push_back({entry.path().filename().string(), buffer.str()});
  }
  if (ec) throw InputError(dir, 0, "cannot list lemma directory: " + ec.message());
  std::sort(files.begin(), files.end(),
            [](const LemmaFile& a, const LemmaFile& b) { return a.name < b.name; });
  return files;
}

LemmaCatalogue LemmaCatalogue::Load(const std::vector<LemmaFile>& files) {
  LemmaCatalogue catalogue;
  const RuleContext context = LemmaRuleContext();
  std::map<std::string, std::string> seen;  // id -> file
  for (const LemmaFile& file : files) {
    auto [text, origin] = ExpandFamilies(file.text);
    auto file_line = [&](int line) {
      return line > 0 && static_cast<size_t>(line) < origin.size() ? origin[line] : line;
    };
    std::vector<Rewrite> rules;
    try {
      rules = LoadRules(text, context, file.name);
    } catch (const InputError& e) {
      throw InputError(e.file(), file_line(e.line()), e.problem());
    }
    for (Rewrite& rule : rules) rule.line = file_line(rule.line);
    // Per rule line: the comment block just above it and the signature lines just below it.
    std::vector<std::string> lines = SplitLines(file.text);
    std::map<int, std::pair<std::string, std::vector<std::string>>> meta;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string t = Trim(lines[i]);
      if (t.empty() || t[0] == '#') continue;
      std::string math;
      for (size_t j = i; j-- > 0;) {
        std::string above = Trim(lines[j]);
        if (above.empty() || above[0] != '#' || TestLine(above)) break;
        math = Trim(above.substr(1)) + (math.empty() ? "" : "\n" + math);
      }
      std::vector<std::string> tests;
      for (size_t j = i + 1; j < lines.size(); ++j) {
        auto test = TestLine(lines[j]);
        if (!test) break;
        tests.push_back(*test);
      }
      meta[static_cast<int>(i) + 1] = {math, tests};
    }
    std::string family = file.name.substr(0, file.name.rfind(".rules"));
    for (Rewrite& rule : rules) {
      auto [it, fresh] = seen.emplace(rule.id, file.name);
      if (!fresh) {
        throw InputError(file.name, rule.line,
                         "rule id '" + rule.id + "' already defined in " + it->second);
      }
      Lemma lemma;
      lemma.family = family;
      lemma.math = meta[rule.line].first;
      lemma.tests = meta[rule.line].second;
      lemma.rule = std::move(rule);
      catalogue.lemmas_.push_back(std::move(lemma));
    }
  }
  return catalogue;
}

const LemmaCatalogue& LemmaCatalogue::Default() {
  static const LemmaCatalogue* catalogue = [] {
    const char* dir = std::getenv("GG_LEMMA_DIR");
    return new LemmaCatalogue(
        Load(dir != nullptr && *dir != '\0' ? LemmaFilesInDir(dir) : EmbeddedLemmaFiles()));
  }();
  return *catalogue;
}

const Lemma* LemmaCatalogue::Find(const std::string& id) const {
  for (const Lemma& lemma : lemmas_) {
    if (lemma.rule.id == id) return &lemma;
  }
  return nullptr;
}

std::vector<Rewrite> LemmaCatalogue::Rules() const {
  std::vector<Rewrite> rules;
  for (const Lemma& lemma : lemmas_) rules.push_back(lemma.rule);
  return rules;
}

// ---- signatures ------------------------------------------------------------------------------

namespace {

// The values of one draw: world size, size symbols, integer variables.
class Draw {
 public:
  Draw(uint64_t seed, const Lemma& lemma) : rng_(seed), lemma_(lemma) {}

  [[noreturn]] void Fail(const std::string& problem) const {
    throw InputError(lemma_.rule.file, lemma_.rule.line,
                     "self-test of '" + lemma_.rule.id + "': " + problem);
  }
  int64_t Uniform(int64_t lo, int64_t hi) {
    if (hi < lo) Fail("empty range " + std::to_string(lo) + ".." + std::to_string(hi));
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }

  int64_t world = 1;
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;  // symbol -> range
  std::map<std::string, int64_t> symbols;
  std::map<std::string, std::vector<int64_t>> element_symbols;
  std::map<std::string, int64_t> ints;  // integer variables (without '?')

  int64_t Symbol(const std::string& name) {
    if (name == "W") return world;
    auto it = symbols.find(name);
    if (it != symbols.end()) return it->second;
    auto [lo, hi] = Range(name);
    return symbols[name] = Uniform(lo, hi);
  }
  const std::vector<int64_t>& ElementSymbol(const std::string& name) {
    auto it = element_symbols.find(name);
    if (it != element_symbols.end()) return it->second;
    auto [lo, hi] = Range(name);
    std::vector<int64_t> values;
    for (int64_t i = 0; i < world; ++i) values.push_back(Uniform(lo, hi));
    return element_symbols[name] = values;
  }

  // Size expression parser/evaluator; `element` is the list element index (or -1).
  int64_t Eval(const std::string& text, int64_t element) {
    text_ = text;
    pos_ = 0;
    element_ = element;
    int64_t v = Sum();
    Skip();
    if (pos_ != text_.size()) Fail("bad size expression '" + text + "'");
    return v;
  }

  std::string Describe() const {
    std::ostringstream out;
    out << "W=" << world;
    for (const auto& [k, v] : symbols) out << " " << k << "=" << v;
    for (const auto& [k, vs] : element_symbols) {
      out << " " << k << "*=[";
      for (size_t i = 0; i < vs.size(); ++i) out << (i ? "," : "") << vs[i];
      out << "]";
    }
    for (const auto& [k, v] : ints) out << " ?" << k << "=" << v;
    return out.str();
  }

 private:
  std::pair<int64_t, int64_t> Range(const std::string& name) {
    auto it = ranges.find(name);
    return it == ranges.end() ? std::make_pair<int64_t, int64_t>(1, 4) : it->second;
  }
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Peek(char c) {
    Skip();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool StartsFactor() {
    Skip();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '?' || c == '(';
  }
  std::string Name() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) Fail("expected a name in '" + text_ + "'");
    return text_.substr(start, pos_ - start);
  }
  int64_t Sum() {
    int64_t v = Product();
    while (true) {
      if (Peek('+')) {
        ++pos_;
        v += Product();
      } else if (Peek('-')) {
        ++pos_;
        v -= Product();
      } else {
        return v;
      }
    }
  }
  int64_t Product() {
    int64_t v = Factor();
    while (Peek('*')) {
      size_t save = pos_++;
      if (!StartsFactor()) {  // a postfix `*` was consumed by Factor; here it is an error
        pos_ = save;
        Fail("dangling '*' in '" + text_ + "'");
      }
      v *= Factor();
    }
    return v;
  }
  int64_t Factor() {
    Skip();
    if (pos_ >= text_.size()) Fail("truncated size expression '" + text_ + "'");
    char c = text_[pos_];
    if (c == '-') {
      ++pos_;
      return -Factor();
    }
    if (c == '(') {
      ++pos_;
      int64_t v = Sum();
      if (!Peek(')')) Fail("missing ')' in '" + text_ + "'");
      ++pos_;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      return std::stoll(text_.substr(start, pos_ - start));
    }
    if (c == '?') {
      ++pos_;
      std::string name = Name();
      auto it = ints.find(name);
      if (it == ints.end()) Fail("integer ?" + name + " used before it is defined");
      return it->second;
    }
    std::string name = Name();
    if (name == "sum" && Peek('(')) {
      ++pos_;
      Skip();
      std::string inner = Name();
      if (!Peek(')')) Fail("missing ')' in '" + text_ + "'");
      ++pos_;
      int64_t total = 0;
      for (int64_t v : ElementSymbol(inner)) total += v;
      return total;
    }
    if (Peek('[')) {
      ++pos_;
      int64_t index = Sum();
      if (!Peek(']')) Fail("missing ']' in '" + text_ + "'");
      ++pos_;
      const auto& values = ElementSymbol(name);
      if (index < 0 || index >= static_cast<int64_t>(values.size())) {
        Fail(name + "[" + std::to_string(index) + "] out of range for W=" + std::to_string(world));
      }
      return values[index];
    }
    if (Peek('*')) {
      size_t save = pos_++;
      if (!StartsFactor()) {
        if (element_ < 0) Fail("per-element size " + name + "* outside a list variable");
        return ElementSymbol(name)[element_];
      }
      pos_ = save;
    }
    return Symbol(name);
  }

  std::mt19937_64 rng_;
  const Lemma& lemma_;
  std::string text_;
  size_t pos_ = 0;
  int64_t element_ = -1;
};

std::vector<std::string> SplitTopLevel(const std::string& text, char sep) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == sep && depth == 0) {
      parts.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!Trim(cur).empty()) parts.push_back(Trim(cur));
  return parts;
}

struct VarSpec {
  // kCopies: a list whose every element is the (earlier) variable `value` (`?xs: copies(?x)`),
  // for lemmas about a concat of one piece repeated (expand's broadcast, see lowering.cc);
  // kExpands: W broadcasts of the variable `value` to `dims` drawn per element
  // (`?es: expands(?x, [a, n*])`), for lemmas about a concat of broadcasts of one tensor.
  enum class Kind {
    kTensor,
    kFlt,
    kTerm,  // `?m = (masked_fill (full ?z 9 ?ss...) ?b ?f)`: a term over earlier variables
    kRecip,
    kNumber,  // `?n: number(v)`: the double v of a size expression (an integral number operand)
    kInt,
    kIntList,
    kRandomInt,
    kCopies,
    kExpands
  } kind = Kind::kTensor;
  SelfTestLeaf::Kind leaf = SelfTestLeaf::Kind::kReal;
  std::string bound;              // index(v), or the hi of index(lo..hi)
  std::string low;                // the lo of index(lo..hi) (empty: 0)
  std::vector<std::string> dims;  // tensor dims / integer list items
  std::string value, lo, hi;      // kInt value; kRandomInt range
  // A list of sections * W elements (`?xs: [a, m] x2`): per-section pieces of every rank, as a
  // flat concat/sum of a fused weight's sections holds them (element symbols repeat per section).
  int64_t sections = 1;
};

}  // namespace

SelfTestCase RunLemmaSelfTest(const Lemma& lemma, size_t test_index, uint64_t seed) {
  const TensorLanguage& lang = TensorLanguage::Get();
  Draw draw(seed * 7919 + test_index * 104729 + 17, lemma);
  if (test_index >= lemma.tests.size()) draw.Fail("no signature " + std::to_string(test_index));

  // Parse the clauses (in order: integer variables may refer to earlier ones).
  std::vector<std::pair<std::string, VarSpec>> vars;
  std::vector<std::string> also;
  std::vector<std::string> leaf_terms;  // `leaf TERM`: TERM's class also holds a leaf (D's tensor)
  std::pair<int64_t, int64_t> world_range{1, 8};
  for (const std::string& clause : SplitTopLevel(lemma.tests[test_index], ';')) {
    auto range_of = [&](const std::string& text) {
      size_t dots = text.find("..");
      if (dots == std::string::npos) draw.Fail("expected lo..hi in '" + clause + "'");
      return std::make_pair(Trim(text.substr(0, dots)), Trim(text.substr(dots + 2)));
    };
    if (clause.rfind("also ", 0) == 0) {
      also.push_back(Trim(clause.substr(5)));
      continue;
    }
    if (clause.rfind("leaf ", 0) == 0) {
      leaf_terms.push_back(Trim(clause.substr(5)));
      continue;
    }
    if (clause[0] != '?') {  // `W in lo..hi` or `sym in lo..hi`
      size_t in = clause.find(" in ");
      if (in == std::string::npos) draw.Fail("cannot read clause '" + clause + "'");
      std::string name = Trim(clause.substr(0, in));
      auto [lo, hi] = range_of(clause.substr(in + 4));
      std::pair<int64_t, int64_t> range{std::stoll(lo), std::stoll(hi)};
      if (name == "W") {
        world_range = range;
      } else {
        draw.ranges[name] = range;
      }
      continue;
    }
    size_t name_end = 1;
    while (
        name_end < clause.size() &&
        (std::isalnum(static_cast<unsigned char>(clause[name_end])) || clause[name_end] == '_')) {
      ++name_end;
    }
    std::string name = clause.substr(1, name_end - 1);
    std::string rest = Trim(clause.substr(name_end));
    VarSpec spec;
    if (rest.rfind(":", 0) == 0) {
      std::string type = Trim(rest.substr(1));
      if (type == "flt") {
        spec.kind = VarSpec::Kind::kFlt;
      } else if (type.rfind("recip(", 0) == 0 && type.back() == ')') {
        spec.kind = VarSpec::Kind::kRecip;
        spec.value = Trim(type.substr(6, type.size() - 7));
      } else if (type.rfind("number(", 0) == 0 && type.back() == ')') {
        spec.kind = VarSpec::Kind::kNumber;
        spec.value = Trim(type.substr(7, type.size() - 8));
      } else if (type.rfind("copies(?", 0) == 0 && type.back() == ')') {
        spec.kind = VarSpec::Kind::kCopies;
        spec.value = type.substr(8, type.size() - 9);
      } else if (type.rfind("expands(?", 0) == 0 && type.back() == ')') {
        size_t comma = type.find(',');
        std::string sizes = comma == std::string::npos ? "" : Trim(type.substr(comma + 1));
        sizes = sizes.empty() ? sizes : sizes.substr(0, sizes.size() - 1);  // the closing ')'
        sizes = Trim(sizes);
        if (sizes.size() < 2 || sizes.front() != '[' || sizes.back() != ']') {
          draw.Fail("expected expands(?x, [dims]) in '" + clause + "'");
        }
        spec.kind = VarSpec::Kind::kExpands;
        spec.value = Trim(type.substr(9, comma - 9));
        spec.dims = SplitTopLevel(sizes.substr(1, sizes.size() - 2), ',');
      } else {
        if (type.rfind("bool", 0) == 0) {
          spec.leaf = SelfTestLeaf::Kind::kBool;
          type = Trim(type.substr(4));
        } else if (type.rfind("complex", 0) == 0) {
          spec.leaf = SelfTestLeaf::Kind::kComplex;
          type = Trim(type.substr(7));
        }
        if (size_t x = type.rfind("] x"); x != std::string::npos && x + 3 < type.size()) {
          spec.sections = std::stoll(type.substr(x + 3));
          if (spec.sections < 1) draw.Fail("bad section count in '" + clause + "'");
          type = Trim(type.substr(0, x + 1));
        }
        if (type.rfind("index(", 0) == 0) {
          // the bound may hold parentheses itself (index(sum(n))[c]): its ')' is the one before '['
          size_t close = type.rfind(')', type.find('['));
          spec.leaf = SelfTestLeaf::Kind::kIndex;
          spec.bound = type.substr(6, close - 6);
          if (size_t dots = spec.bound.find(".."); dots != std::string::npos) {
            spec.low = Trim(spec.bound.substr(0, dots));
            spec.bound = Trim(spec.bound.substr(dots + 2));
          }
          type = Trim(type.substr(close + 1));
        }
        if (type.size() < 2 || type.front() != '[' || type.back() != ']') {
          draw.Fail("expected [dims] in '" + clause + "'");
        }
        spec.dims = SplitTopLevel(type.substr(1, type.size() - 2), ',');
      }
    } else if (rest.rfind("=", 0) == 0) {
      std::string value = Trim(rest.substr(1));
      if (!value.empty() && value.front() == '(') {
        spec.kind = VarSpec::Kind::kTerm;
        spec.value = value;
      } else if (!value.empty() && value.front() == '[') {
        spec.kind = VarSpec::Kind::kIntList;
        spec.dims = SplitTopLevel(value.substr(1, value.size() - 2), ',');
      } else {
        spec.kind = VarSpec::Kind::kInt;
        spec.value = value;
      }
    } else if (rest.rfind("in ", 0) == 0) {
      spec.kind = VarSpec::Kind::kRandomInt;
      std::tie(spec.lo, spec.hi) = range_of(rest.substr(3));
    } else {
      draw.Fail("cannot read clause '" + clause + "'");
    }
    vars.emplace_back(name, std::move(spec));
  }

  // World size: draw 0 the smallest, draw 1 the largest, then random.
  draw.world = seed == 0   ? world_range.first
               : seed == 1 ? world_range.second
                           : draw.Uniform(world_range.first, world_range.second);

  SelfTestCase out;
  out.leaves = std::make_unique<LeafTable>();
  out.graph = std::make_unique<EGraph>(lang.ops());
  TensorAnalysis& analysis = out.graph->AddAnalysis(std::make_unique<TensorAnalysis>(*out.leaves));
  analysis.set_world_size(draw.world);
  out.analysis = &analysis;
  EGraph& graph = *out.graph;

  std::map<std::string, ClassId> scalars;
  std::map<std::string, std::vector<ClassId>> lists;
  std::set<std::string> list_vars;
  auto note_lists = [&](const Pattern& p) {
    for (size_t i = 0; i < p.var_names.size(); ++i) {
      if (p.var_is_list[i]) list_vars.insert(p.var_names[i]);
    }
  };
  note_lists(lemma.rule.lhs);
  std::vector<Pattern> also_patterns;
  for (const std::string& text : also) {
    also_patterns.push_back(ParseLhs(text, lang.ops(), lemma.rule.file, lemma.rule.line));
    note_lists(also_patterns.back());
  }

  auto make_leaf = [&](const std::string& name, const VarSpec& spec, int64_t element) {
    ir::TensorType type;
    type.dtype = spec.leaf == SelfTestLeaf::Kind::kBool      ? ir::DType::kBool
                 : spec.leaf == SelfTestLeaf::Kind::kIndex   ? ir::DType::kInt64
                 : spec.leaf == SelfTestLeaf::Kind::kComplex ? ir::DType::kComplex128
                                                             : ir::DType::kFloat64;
    for (const std::string& dim : spec.dims) type.shape.emplace_back(draw.Eval(dim, element));
    SelfTestLeaf leaf_spec{spec.leaf, 0, "?" + name};
    if (element >= 0) leaf_spec.name += "[" + std::to_string(element) + "]";
    if (spec.leaf == SelfTestLeaf::Kind::kIndex) {
      leaf_spec.index_bound = draw.Eval(spec.bound, -1);
      if (!spec.low.empty()) leaf_spec.index_low = draw.Eval(spec.low, -1);
      if (leaf_spec.index_low >= leaf_spec.index_bound) draw.Fail("empty index range");
    }
    int32_t id = static_cast<int32_t>(out.leaves->size());
    TensorLeaf leaf{TensorLeaf::Side::kDist, 0, ir::TensorRef{id, 0}, type, leaf_spec.name};
    int64_t leaf_id = out.leaves->Intern(leaf);
    out.leaf_specs.push_back(leaf_spec);
    return graph.Add(lang.Tensor(leaf_id));
  };
  auto subst_for = [&](const Pattern& p) {
    Subst subst;
    subst.vars.assign(p.var_names.size(), kNoClass);
    subst.lists.assign(p.var_names.size(), {});
    for (size_t i = 0; i < p.var_names.size(); ++i) {
      const std::string& name = p.var_names[i];
      if (p.var_is_list[i]) {
        auto it = lists.find(name);
        if (it == lists.end()) draw.Fail("signature does not bind list ?" + name);
        subst.lists[i] = it->second;
      } else {
        auto it = scalars.find(name);
        if (it == scalars.end()) draw.Fail("signature does not bind ?" + name);
        subst.vars[i] = it->second;
      }
    }
    return subst;
  };
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::mt19937_64 flt_rng(seed + 1);
  for (const auto& [name, spec] : vars) {
    const bool is_list = list_vars.count(name) > 0;
    switch (spec.kind) {
      case VarSpec::Kind::kTensor:
        if (is_list) {
          for (int64_t i = 0; i < draw.world * spec.sections; ++i) {
            lists[name].push_back(make_leaf(name, spec, i % draw.world));
          }
        } else {
          scalars[name] = make_leaf(name, spec, -1);
        }
        break;
      case VarSpec::Kind::kFlt:
        scalars[name] = graph.Add(lang.Flt(real(flt_rng)));
        break;
      case VarSpec::Kind::kTerm: {  // a term over the variables bound before it
        Pattern p = ParseLhs(spec.value, lang.ops(), lemma.rule.file, lemma.rule.line);
        auto cls = Instantiate(graph, p, subst_for(p));
        if (!cls) draw.Fail("cannot instantiate ?" + name + " = " + spec.value);
        scalars[name] = *cls;
        break;
      }
      case VarSpec::Kind::kRecip: {
        const int64_t v = draw.Eval(spec.value, -1);
        if (v == 0) draw.Fail("recip(" + spec.value + ") of 0");
        scalars[name] = graph.Add(lang.Flt(1.0 / static_cast<double>(v)));
        break;
      }
      case VarSpec::Kind::kNumber:
        scalars[name] = graph.Add(lang.Flt(static_cast<double>(draw.Eval(spec.value, -1))));
        break;
      case VarSpec::Kind::kInt:
      case VarSpec::Kind::kRandomInt: {
        int64_t v = spec.kind == VarSpec::Kind::kInt
                        ? draw.Eval(spec.value, -1)
                        : draw.Uniform(draw.Eval(spec.lo, -1), draw.Eval(spec.hi, -1));
        draw.ints[name] = v;
        scalars[name] = graph.Add(lang.Num(v));
        break;
      }
      case VarSpec::Kind::kCopies: {
        auto it = scalars.find(spec.value);
        if (it == scalars.end()) draw.Fail("copies of ?" + spec.value + " before it is defined");
        lists[name].assign(static_cast<size_t>(draw.world), it->second);
        break;
      }
      case VarSpec::Kind::kExpands: {
        auto it = scalars.find(spec.value);
        if (it == scalars.end()) draw.Fail("expands of ?" + spec.value + " before it is defined");
        for (int64_t i = 0; i < draw.world; ++i) {
          std::vector<ClassId> children{it->second};
          for (const std::string& dim : spec.dims) {
            children.push_back(graph.Add(lang.Num(draw.Eval(dim, i))));
          }
          lists[name].push_back(graph.Add(ENode{lang.expand, 0, std::move(children)}));
        }
        break;
      }
      case VarSpec::Kind::kIntList:
        for (const std::string& item : spec.dims) {
          lists[name].push_back(graph.Add(lang.Num(draw.Eval(item, -1))));
        }
        break;
    }
  }
  out.draw = draw.Describe();

  auto lhs = Instantiate(graph, lemma.rule.lhs, subst_for(lemma.rule.lhs));
  if (!lhs) draw.Fail("cannot instantiate the left-hand side");
  for (const Pattern& p : also_patterns) {
    if (!Instantiate(graph, p, subst_for(p))) draw.Fail("cannot instantiate an 'also' term");
  }
  graph.Rebuild();
  out.lhs = graph.Find(*lhs);
  // A `leaf TERM` stands for a tensor D computes whole that equals TERM: a leaf whose value the
  // numeric harness computes from TERM, in TERM's class.
  for (const std::string& text : leaf_terms) {
    Pattern p = ParseLhs(text, lang.ops(), lemma.rule.file, lemma.rule.line);
    auto cls = Instantiate(graph, p, subst_for(p));
    if (!cls) draw.Fail("cannot instantiate a 'leaf' term");
    graph.Rebuild();
    const auto& type = analysis[graph.Find(*cls)].type;
    std::optional<Extracted> term = Extractor(graph, AstSize()).Extract(graph.Find(*cls));
    if (!type || !term) draw.Fail("a 'leaf' term must be a well-typed tensor");
    int32_t id = static_cast<int32_t>(out.leaves->size());
    TensorLeaf leaf{TensorLeaf::Side::kDist, 0, ir::TensorRef{id, 0}, *type, text};
    out.leaf_specs.push_back(SelfTestLeaf{SelfTestLeaf::Kind::kLhsValue, 0, text, term->expr});
    graph.Union(*cls, graph.Add(lang.Tensor(out.leaves->Intern(leaf))));
    graph.Rebuild();
    out.lhs = graph.Find(out.lhs);
  }

  // The LHS must match its own instance, with the condition holding (by construction).
  std::vector<Match> matches;
  SearchClass(graph, lemma.rule.lhs, out.lhs, 64, &matches);
  for (const Match& m : matches) {
    if (!lemma.rule.condition_fn || lemma.rule.condition_fn(graph, Bindings(lemma.rule.lhs, m))) {
      out.condition_held = true;
    }
  }

  const size_t nodes_before = graph.NumNodes(), classes_before = graph.NumClasses();
  std::vector<Rewrite> one{lemma.rule};
  RunnerLimits limits;
  limits.iterations = 1;
  Runner(graph, one, limits).WithScheduler(std::nullopt).Run();
  out.changed = graph.NumNodes() != nodes_before || graph.NumClasses() != classes_before;
  out.lhs = graph.Find(out.lhs);
  for (ClassId id : graph.ClassIds()) {
    const TensorFacts& facts = (*out.analysis)[id];
    if (facts.conflict) out.conflicts.push_back(facts.conflict_reason);
  }
  return out;
}

std::optional<RecExpr> TermRootedAt(const EGraph& graph, const Extractor& extractor,
                                    const ENode& node) {
  RecExpr expr;
  ENode root{node.op, node.payload, {}};
  for (ClassId child : node.children) {
    std::optional<Extracted> sub = extractor.Extract(child);
    if (!sub) return std::nullopt;
    // Append the child's nodes, shifting their child indices.
    const uint32_t base = static_cast<uint32_t>(expr.nodes.size());
    for (ENode n : sub->expr.nodes) {
      for (ClassId& c : n.children) c += base;
      expr.nodes.push_back(std::move(n));
    }
    root.children.push_back(static_cast<ClassId>(expr.nodes.size() - 1));
  }
  expr.nodes.push_back(std::move(root));
  return expr;
}

}  // namespace gg::symbolic
