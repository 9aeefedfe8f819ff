#include "frontend/json_format.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "frontend/fx_reader.h"
#include "util/diagnostic.h"

namespace gg::frontend {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormatName = "graphguard-graph";

// ---- writing -----------------------------------------------------------------------------------

Json ValueToJson(const ir::Graph& graph, const ir::Value& value) {
  if (value.is_none()) return nullptr;
  if (value.is_bool()) return value.as_bool();
  if (value.is_int()) return value.as_int();
  if (value.is_double()) {
    double d = value.as_double();
    if (std::isnan(d)) return Json{{"float", "nan"}};
    if (std::isinf(d)) return Json{{"float", d > 0 ? "inf" : "-inf"}};
    return d;
  }
  if (value.is_string()) return value.as_string();
  if (value.is_dtype()) return Json{{"dtype", std::string(ir::ShortName(value.as_dtype()))}};
  if (value.is_device()) {
    Json j{{"device", value.as_device().type}};
    if (value.as_device().index != -1) j["index"] = value.as_device().index;
    return j;
  }
  if (value.is_enum()) return Json{{"enum", value.as_enum().name}};
  if (value.is_op_ref()) return Json{{"op", value.as_op_ref().qualified_name}};
  if (value.is_tensor()) return Json{{"ref", graph.ValueName(value.as_tensor())}};
  Json list = Json::array();
  for (const ir::Value& item : value.as_list()) list.push_back(ValueToJson(graph, item));
  return list;
}

const char* KindName(ir::NodeKind kind) {
  switch (kind) {
    case ir::NodeKind::kInput:
      return "input";
    case ir::NodeKind::kConstant:
      return "constant";
    case ir::NodeKind::kOperator:
      return "call";
  }
  return "call";
}

Json NodeToJson(const ir::Graph& graph, const ir::Node& node) {
  Json j;
  j["name"] = node.name;
  j["kind"] = KindName(node.kind);
  if (node.kind == ir::NodeKind::kOperator) {
    j["op"] = node.op.ToString();
    if (node.functionalized) j["functionalized"] = true;
    Json args = Json::array();
    for (const ir::Value& v : node.args) args.push_back(ValueToJson(graph, v));
    j["args"] = std::move(args);
    Json kwargs = Json::array();
    for (const ir::NamedArg& kw : node.kwargs) {
      kwargs.push_back(Json{{"name", kw.name}, {"value", ValueToJson(graph, kw.value)}});
    }
    j["kwargs"] = std::move(kwargs);
  }
  Json outputs = Json::array();
  for (const ir::NodeOutput& out : node.outputs) {
    outputs.push_back(
        Json{{"name", out.name}, {"type", out.type ? Json(out.type->ToString()) : Json(nullptr)}});
  }
  j["outputs"] = std::move(outputs);
  if (!node.fqn.empty()) j["fqn"] = node.fqn;
  if (!(node.source == ir::SourceLocation{})) {
    j["source"] = Json{{"file", node.source.file},
                       {"line", node.source.line},
                       {"function", node.source.function},
                       {"code", node.source.code}};
  }
  return j;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// One graph object, one node per line (so that errors can point at a node's line).
void WriteGraphObject(const ir::Graph& graph, std::ostream& out, const std::string& indent) {
  const std::string in2 = indent + "  ";
  out << "{\n";
  out << in2 << "\"name\": " << Dump(Json(graph.name)) << ",\n";
  out << in2 << "\"rank\": " << graph.rank << ",\n";
  out << in2 << "\"nodes\": [";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n") << in2 << "  " << Dump(NodeToJson(graph, graph.nodes[i]));
  }
  out << (graph.nodes.empty() ? "],\n" : "\n" + in2 + "],\n");
  Json outputs = Json::array();
  for (const ir::Value& v : graph.outputs) outputs.push_back(ValueToJson(graph, v));
  out << in2 << "\"outputs\": " << Dump(outputs) << "\n";
  out << indent << "}";
}

void WriteHeader(std::ostream& out) {
  out << "{\n  \"format\": \"" << kFormatName << "\",\n  \"version\": " << kJsonFormatVersion
      << ",\n";
}

// ---- reading -----------------------------------------------------------------------------------

// GraphGuard JSON nests a few levels (file, graph, node, argument lists of at most 200 levels);
// deeper input is refused before parsing, since nlohmann's dump and value conversions recurse.
constexpr int kMaxJsonDepth = 256;

// One pass over the text before parsing: the line of each '{' outside strings, in document order
// (with an order-preserving JSON type, a pre-order walk of the parsed objects meets them in the
// same order), and a throw at the line where the nesting of arrays and objects exceeds the bound.
std::vector<int> ScanObjectLines(std::string_view text, const std::string& file) {
  std::vector<int> lines;
  int line = 1;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\') {
        ++i;
        if (i < text.size() && text[i] == '\n') ++line;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (c == '{') lines.push_back(line);
      if (++depth > kMaxJsonDepth) {
        throw InputError(file, line,
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels; a GraphGuard graph file nests a few (is it the right "
                             "file?)");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return lines;
}

// Iterative (an explicit stack), so that absurdly deep input cannot overflow the call stack.
void IndexObjectLines(const Json& root, const std::vector<int>& lines,
                      std::unordered_map<const Json*, int>* out) {
  size_t next = 0;
  std::vector<const Json*> stack = {&root};
  std::vector<const Json*> children;
  while (!stack.empty()) {
    const Json* j = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    if (j->is_object()) {
      if (next < lines.size()) (*out)[j] = lines[next];
      ++next;
    }
    // Push children in reverse so that they are visited in document order.
    children.clear();
    for (auto it = j->begin(); it != j->end(); ++it) children.push_back(&*it);
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
  }
}

class JsonReader {
 public:
  JsonReader(std::string_view text, const std::string& file, int32_t default_group_size)
      : text_(text), file_(file), default_group_size_(default_group_size) {}

  JsonGraphs Read() {
    std::vector<int> lines = ScanObjectLines(text_, file_);
    Json root;
    try {
      root = Json::parse(text_.begin(), text_.end());
    } catch (const Json::parse_error& e) {
      throw InputError(file_, LineOfByte(e.byte), std::string("invalid JSON: ") + e.what());
    } catch (const Json::exception& e) {  // e.g. a number too large for a double
      throw InputError(file_, 0, std::string("invalid JSON: ") + e.what());
    }
    IndexObjectLines(root, lines, &lines_);

    if (!root.is_object()) Fail(root, "expected a JSON object at the top level");
    const Json& format = Require(root, "format");
    if (!format.is_string() || format.get<std::string>() != kFormatName) {
      Fail(root,
           std::string("not a GraphGuard graph file: \"format\" must be \"") + kFormatName + "\"");
    }
    const Json& version = Require(root, "version");
    if (!version.is_number_integer()) Fail(root, "\"version\" must be an integer");
    if (version.get<int64_t>() != kJsonFormatVersion) {
      Fail(root, "unsupported version " + version.dump() + " (this GraphGuard reads version " +
                     std::to_string(kJsonFormatVersion) + ")");
    }
    CheckKeys(root, {"format", "version", "graph", "graphs", "process_groups", "traced_values"});
    if (root.contains("traced_values")) {
      // The graphs replay only on the values they were traced with (a values file for S's
      // inputs, `file`, and why): the numeric commands read it (cli TracedValuesOf).
      const Json& traced = root["traced_values"];
      if (!traced.is_object()) Fail(traced, "\"traced_values\" must be an object");
      CheckKeys(traced, {"file", "why"});
      if (!Require(traced, "file").is_string() || !Require(traced, "why").is_string()) {
        Fail(traced, "\"traced_values\" needs strings \"file\" and \"why\"");
      }
    }
    JsonGraphs result;
    if (root.contains("process_groups")) ReadGroups(root["process_groups"], root, &result);
    groups_ = result.groups;
    const bool one = root.contains("graph");
    const bool many = root.contains("graphs");
    if (one == many) Fail(root, "expected exactly one of \"graph\" and \"graphs\"");
    if (one) {
      result.graphs.push_back(ReadGraph(root["graph"], root, &result));
    } else {
      result.is_program = true;
      const Json& graphs = root["graphs"];
      if (!graphs.is_array()) Fail(root, "\"graphs\" must be an array");
      for (const Json& g : graphs) result.graphs.push_back(ReadGraph(g, root, &result));
    }
    return result;
  }

 private:
  int LineOfByte(size_t byte) const {
    int line = 1;
    size_t end = std::min(byte == 0 ? 0 : byte - 1, text_.size());
    for (size_t i = 0; i < end; ++i) {
      if (text_[i] == '\n') ++line;
    }
    return line;
  }

  int LineOf(const Json& j) const {
    auto it = lines_.find(&j);
    return it == lines_.end() ? 0 : it->second;
  }

  [[noreturn]] void Fail(const Json& where, const std::string& problem) const {
    throw InputError(file_, LineOf(where), problem);
  }

  const Json& Require(const Json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) Fail(obj, std::string("missing field \"") + key + "\"");
    return *it;
  }

  void CheckKeys(const Json& obj, std::initializer_list<const char*> allowed) const {
    for (const auto& item : obj.items()) {
      bool ok = false;
      for (const char* a : allowed) ok = ok || item.key() == a;
      if (!ok) Fail(obj, "unknown field \"" + item.key() + "\"");
    }
  }

  std::string String(const Json& obj, const char* key) const {
    const Json& v = Require(obj, key);
    if (!v.is_string()) Fail(obj, std::string("\"") + key + "\" must be a string");
    return v.get<std::string>();
  }

  int64_t Int(const Json& obj, const Json& v, const std::string& what, int64_t lo,
              int64_t hi) const {
    if (!v.is_number_integer()) Fail(obj, what + " must be an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      Fail(obj, what + " is out of range");
    }
    int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) Fail(obj, what + " is out of range");
    return i;
  }

  void ReadGroups(const Json& groups, const Json& root, JsonGraphs* result) const {
    if (!groups.is_object()) Fail(root, "\"process_groups\" must be an object");
    for (const auto& item : groups.items()) {
      if (!item.value().is_array()) {
        Fail(groups, "process group \"" + item.key() + "\" must be an array of ranks");
      }
      std::vector<int32_t> ranks;
      for (const Json& r : item.value()) {
        ranks.push_back(static_cast<int32_t>(
            Int(groups, r, "a rank of group \"" + item.key() + "\"", 0, 1 << 20)));
      }
      std::sort(ranks.begin(), ranks.end());
      if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
        Fail(groups, "process group \"" + item.key() + "\" lists a rank twice");
      }
      if (ranks.empty()) Fail(groups, "process group \"" + item.key() + "\" is empty");
      result->groups[item.key()] = std::move(ranks);
    }
  }

  ir::Graph ReadGraph(const Json& g, const Json& root, JsonGraphs* result) {
    if (!g.is_object()) Fail(root, "a graph must be a JSON object");
    CheckKeys(g, {"name", "rank", "nodes", "outputs", "process_groups"});
    // The graph's own group names (a name may mean other ranks on another rank): they take
    // precedence over the file's while its nodes are checked.
    JsonGraphs local;
    if (g.contains("process_groups")) ReadGroups(g["process_groups"], g, &local);
    const GroupMap file_groups = groups_;
    for (const auto& [name, ranks] : local.groups) groups_[name] = ranks;
    result->local_groups.push_back(local.groups);
    ir::Graph graph;
    graph.file = file_;
    graph.name = String(g, "name");
    graph.rank = static_cast<int32_t>(Int(g, Require(g, "rank"), "\"rank\"", 0, 1 << 20));
    const Json& nodes = Require(g, "nodes");
    if (!nodes.is_array()) Fail(g, "\"nodes\" must be an array");
    refs_.clear();
    node_ids_.clear();
    for (const Json& n : nodes) ReadNode(n, g, &graph);
    const Json& outputs = Require(g, "outputs");
    if (!outputs.is_array()) Fail(g, "\"outputs\" must be an array");
    for (const Json& v : outputs) graph.outputs.push_back(ReadValue(v, g));
    graph.return_line = LineOf(g);
    graph.Reindex();
    groups_ = file_groups;
    return graph;
  }

  void ReadNode(const Json& n, const Json& g, ir::Graph* graph) {
    if (!n.is_object()) Fail(g, "a node must be a JSON object");
    CheckKeys(
        n, {"name", "kind", "op", "functionalized", "args", "kwargs", "outputs", "source", "fqn"});
    ir::Node node;
    node.def_line = LineOf(n);
    node.name = String(n, "name");
    if (node.name.empty()) Fail(n, "a node needs a non-empty \"name\"");
    if (!node_ids_.emplace(node.name, static_cast<ir::NodeId>(graph->nodes.size())).second) {
      Fail(n, "duplicate node name '" + node.name + "'");
    }
    const std::string kind = String(n, "kind");
    if (kind == "input") {
      node.kind = ir::NodeKind::kInput;
    } else if (kind == "constant") {
      node.kind = ir::NodeKind::kConstant;
    } else if (kind == "call") {
      node.kind = ir::NodeKind::kOperator;
    } else {
      Fail(n, "unknown node kind \"" + kind + "\" (expected input, constant or call)");
    }
    if (node.kind == ir::NodeKind::kOperator) {
      std::string op = String(n, "op");
      std::optional<ir::OpName> name = ir::OpName::Parse(op);
      if (!name) Fail(n, "bad operator name \"" + op + "\" (expected ns::name.overload)");
      node.op = *name;
      if (n.contains("functionalized")) {
        if (!n["functionalized"].is_boolean()) Fail(n, "\"functionalized\" must be true or false");
        node.functionalized = n["functionalized"].get<bool>();
      }
      if (n.contains("args")) {
        if (!n["args"].is_array()) Fail(n, "\"args\" must be an array");
        for (const Json& a : n["args"]) node.args.push_back(ReadValue(a, n));
      }
      if (n.contains("kwargs")) {
        if (!n["kwargs"].is_array()) Fail(n, "\"kwargs\" must be an array");
        for (const Json& kw : n["kwargs"]) {
          if (!kw.is_object())
            Fail(n, "a keyword argument must be {\"name\": ..., \"value\": ...}");
          CheckKeys(kw, {"name", "value"});
          node.kwargs.push_back({String(kw, "name"), ReadValue(Require(kw, "value"), kw)});
        }
      }
    } else {
      for (const char* key : {"op", "functionalized", "args", "kwargs"}) {
        if (n.contains(key)) Fail(n, std::string("\"") + key + "\" is only for call nodes");
      }
    }
    const Json& outputs = Require(n, "outputs");
    if (!outputs.is_array()) Fail(n, "\"outputs\" must be an array");
    for (const Json& o : outputs) {
      if (!o.is_object()) Fail(n, "an output must be {\"name\": ..., \"type\": ...}");
      CheckKeys(o, {"name", "type"});
      ir::NodeOutput out;
      out.name = String(o, "name");
      const Json& type = Require(o, "type");
      if (type.is_string()) {
        std::string why;
        out.type = ir::ParseTensorType(type.get<std::string>(), &why);
        if (!out.type) Fail(o, "bad type: " + why);
      } else if (!type.is_null()) {
        Fail(o, "\"type\" must be a type string like \"f32[8, 1536]\" or null");
      }
      node.outputs.push_back(std::move(out));
    }
    if (node.kind != ir::NodeKind::kOperator) {
      if (node.outputs.size() != 1) Fail(n, "inputs and constants have exactly one output");
      if (node.kind == ir::NodeKind::kInput && !node.outputs[0].type) {
        Fail(n, "input '" + node.name + "' needs a type");
      }
    }
    if (n.contains("fqn")) {
      // Optional (older files lack it): the module FQN of the parameter or buffer an input is.
      if (node.kind != ir::NodeKind::kInput) Fail(n, "only inputs carry an \"fqn\"");
      node.fqn = String(n, "fqn");
      if (node.fqn.empty()) Fail(n, "\"fqn\" must be a non-empty string (or be left out)");
    }
    if (n.contains("source")) {
      const Json& s = n["source"];
      if (!s.is_object()) Fail(n, "\"source\" must be an object");
      CheckKeys(s, {"file", "line", "function", "code"});
      node.source.file = String(s, "file");
      node.source.line = static_cast<int32_t>(
          Int(s, Require(s, "line"), "\"line\"", 0, std::numeric_limits<int32_t>::max()));
      node.source.function = String(s, "function");
      node.source.code = String(s, "code");
    }
    if (node.kind == ir::NodeKind::kOperator) CheckTypes(*graph, node);
    const ir::NodeId id = static_cast<ir::NodeId>(graph->nodes.size());
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const std::string& out_name = node.outputs[i].name;
      if (out_name.empty()) continue;
      if (!refs_.emplace(out_name, ir::TensorRef{id, static_cast<int32_t>(i)}).second) {
        Fail(n, "duplicate value name '" + out_name + "'");
      }
    }
    graph->AddNode(std::move(node));
  }

  void CheckTypes(const ir::Graph& graph, const ir::Node& node) const {
    auto inferred = InferNodeTypes(graph, node, groups_, default_group_size_, file_, node.def_line);
    if (!inferred && IsOpaqueNode(node)) {
      // An unknown operator is typed by the file: every named output needs its "type".
      if (node.outputs.empty()) {
        ThrowOpaqueNeedsType(node, file_, node.def_line, "the node lists no outputs");
      }
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.outputs[i].type || node.outputs[i].name.empty()) continue;
        ThrowOpaqueNeedsType(node, file_, node.def_line,
                             "its output " + std::to_string(i) + " ('" + node.outputs[i].name +
                                 "') has no \"type\"");
      }
    }
    if (!inferred) return;
    if (inferred->size() != node.outputs.size()) {
      throw InputError(file_, node.def_line,
                       "inferred " + std::to_string(inferred->size()) + " outputs for " +
                           DescribeNode(node) + " but the file lists " +
                           std::to_string(node.outputs.size()));
    }
    for (size_t i = 0; i < inferred->size(); ++i) {
      if ((*inferred)[i] != node.outputs[i].type) {
        throw InputError(file_, node.def_line,
                         "inferred " + TypeText((*inferred)[i]) + " for output " +
                             std::to_string(i) + " of " + DescribeNode(node) +
                             " but the file says " + TypeText(node.outputs[i].type));
      }
    }
  }

  ir::TensorRef ResolveRef(const Json& where, const std::string& name) const {
    auto it = refs_.find(name);
    if (it != refs_.end()) return it->second;
    size_t hash = name.rfind('#');
    if (hash != std::string::npos) {
      auto node = node_ids_.find(name.substr(0, hash));
      std::string index = name.substr(hash + 1);
      if (node != node_ids_.end() && !index.empty() && index.size() < 7 &&
          std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return ir::TensorRef{node->second, std::stoi(index)};
      }
    }
    Fail(where, "reference to undefined value '" + name + "'");
  }

  ir::Value ReadValue(const Json& v, const Json& where) {
    if (++depth_ > 200) Fail(where, "values nested too deeply");
    ir::Value value = ReadValueInner(v, where);
    --depth_;
    return value;
  }

  ir::Value ReadValueInner(const Json& v, const Json& where) {
    switch (v.type()) {
      case Json::value_t::null:
        return ir::Value(ir::None{});
      case Json::value_t::boolean:
        return ir::Value(v.get<bool>());
      case Json::value_t::number_integer:
        return ir::Value(v.get<int64_t>());
      case Json::value_t::number_unsigned:
        return ir::Value(Int(where, v, "an integer argument", std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max()));
      case Json::value_t::number_float:
        return ir::Value(v.get<double>());
      case Json::value_t::string:
        return ir::Value(v.get<std::string>());
      case Json::value_t::array: {
        ir::Value::List items;
        for (const Json& item : v) items.push_back(ReadValue(item, where));
        return ir::Value(std::move(items));
      }
      case Json::value_t::object:
        return ReadTagged(v);
      default:
        Fail(where, "unsupported JSON value " + v.dump());
    }
  }

  // {"float": "inf"}, {"dtype": "f32"}, {"device": "cuda", "index": 0}, {"enum": ...},
  // {"op": ...}, {"ref": ...}
  ir::Value ReadTagged(const Json& v) const {
    if (v.contains("float")) {
      CheckKeys(v, {"float"});
      const Json& f = v["float"];
      std::string s = f.is_string() ? f.get<std::string>() : "";
      if (s == "inf") return ir::Value(std::numeric_limits<double>::infinity());
      if (s == "-inf") return ir::Value(-std::numeric_limits<double>::infinity());
      if (s == "nan") return ir::Value(std::numeric_limits<double>::quiet_NaN());
      Fail(v, "\"float\" must be \"inf\", \"-inf\" or \"nan\"");
    }
    if (v.contains("dtype")) {
      CheckKeys(v, {"dtype"});
      std::string s = String(v, "dtype");
      std::optional<ir::DType> d = ir::ParseDType(s);
      if (!d) Fail(v, "unknown dtype \"" + s + "\"");
      return ir::Value(*d);
    }
    if (v.contains("device")) {
      CheckKeys(v, {"device", "index"});
      ir::Device device;
      device.type = String(v, "device");
      if (v.contains("index")) {
        device.index = static_cast<int32_t>(Int(v, v["index"], "\"index\"", -1, 1 << 20));
      }
      return ir::Value(std::move(device));
    }
    if (v.contains("enum")) {
      CheckKeys(v, {"enum"});
      return ir::Value(ir::EnumValue{String(v, "enum")});
    }
    if (v.contains("op")) {
      CheckKeys(v, {"op"});
      std::string op = String(v, "op");
      std::optional<ir::OpName> name = ir::OpName::Parse(op);
      if (!name) Fail(v, "bad operator name \"" + op + "\"");
      return ir::Value(ir::OpRefValue{name->ToString()});
    }
    if (v.contains("ref")) {
      CheckKeys(v, {"ref"});
      return ir::Value(ResolveRef(v, String(v, "ref")));
    }
    std::string text = Dump(v);
    if (text.size() > 120) {
      size_t cut = 117;  // not inside a UTF-8 sequence
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      text = text.substr(0, cut) + "...";
    }
    Fail(v,
         "unknown tagged value " + text + " (expected one of float, dtype, device, enum, op, ref)");
  }

  std::string_view text_;
  const std::string& file_;
  int32_t default_group_size_;
  GroupMap groups_;
  std::unordered_map<const Json*, int> lines_;
  std::unordered_map<std::string, ir::TensorRef> refs_;   // value names of the current graph
  std::unordered_map<std::string, ir::NodeId> node_ids_;  // node names of the current graph
  int depth_ = 0;
};

}  // namespace

JsonGraphs ParseJson(std::string_view text, const std::string& file, int32_t default_group_size) {
  return JsonReader(text, file, default_group_size).Read();
}

JsonGraphs ReadJsonFile(const std::string& path, int32_t default_group_size) {
  std::string text = ReadTextFile(path);
  return ParseJson(text, path, default_group_size);
}

void WriteJson(const ir::Program& program, std::ostream& out) {
  WriteHeader(out);
  Json groups = Json::object();
  for (const auto& [name, ranks] : program.groups) groups[name] = ranks;
  out << "  \"process_groups\": " << Dump(groups) << ",\n";
  out << "  \"graphs\": [";
  for (size_t i = 0; i < program.ranks.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ");
    WriteGraphObject(program.ranks[i], out, "    ");
  }
  out << (program.ranks.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

void WriteJson(const ir::Graph& graph, std::ostream& out) {
  WriteHeader(out);
  out << "  \"graph\": ";
  WriteGraphObject(graph, out, "  ");
  out << "\n}\n";
}

std::string ToJson(const ir::Program& program) {
  std::ostringstream out;
  WriteJson(program, out);
  return out.str();
}

std::string ToJson(const ir::Graph& graph) {
  std::ostringstream out;
  WriteJson(graph, out);
  return out.str();
}

}  // namespace gg::frontend
