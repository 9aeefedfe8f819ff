// HTML report of verify (html.h): one page, every graph string escaped, the script data-free.
#include "report/html.h"

#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "report/finding.h"
#include "report/junit.h"
#include "symbolic/rewrite.h"

namespace gg::report {
namespace {

using symbolic::InferredRelation;
using symbolic::NodeOutcome;
using symbolic::VerifyResult;

// Candidates shown open; more are folded (the page stays short, nothing is dropped).
constexpr size_t kOpenCandidates = 24;

std::string E(std::string_view text) { return HtmlEscape(text); }

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  return buffer;
}

std::string VerdictClass(symbolic::Verdict verdict) {
  switch (verdict) {
    case symbolic::Verdict::kRefines:
      return "refines";
    case symbolic::Verdict::kViolation:
      return "violation";
    case symbolic::Verdict::kUnknown:
      break;
  }
  return "unknown";
}

// A layer named in an FX node name: "layers_3_mlp" -> "layers.3", "h.7.attn" -> "h.7".
std::string LayerOf(const std::string& name) {
  static const char* const kWords[] = {"layers", "layer", "blocks", "block", "h"};
  for (const char* word : kWords) {
    std::string w(word);
    for (size_t at = name.find(w); at != std::string::npos; at = name.find(w, at + 1)) {
      bool starts = at == 0 || name[at - 1] == '_' || name[at - 1] == '.';
      size_t d = at + w.size();
      if (!starts || d >= name.size() || (name[d] != '_' && name[d] != '.')) continue;
      size_t e = d + 1;
      while (e < name.size() && std::isdigit(static_cast<unsigned char>(name[e]))) ++e;
      if (e == d + 1) continue;
      if (e < name.size() && name[e] != '_' && name[e] != '.') continue;
      return w + "." + name.substr(d + 1, e - d - 1);
    }
  }
  return "";
}

std::string Producer(const ir::Graph& s_graph, const ir::Node& node) {
  return node.kind == ir::NodeKind::kOperator ? node.op.ToString()
         : node.kind == ir::NodeKind::kInput  ? std::string("graph input")
                                              : std::string("constant");
}

class Page {
 public:
  Page(const VerifyResult& result, const ir::Graph& s_graph, const VerifyRunInfo& info)
      : result_(result), s_graph_(s_graph), info_(info) {
    for (size_t i = 0; i < result.nodes.size(); ++i) outcome_of_[result.nodes[i].s_node] = i;
    where_ = Localize(result);
    finding_ = FindingOf(result, s_graph);
    // Who reads each node: the neighbourhood of the stopped operator.
    for (size_t id = 0; id < s_graph.nodes.size(); ++id) {
      for (ir::TensorRef in : s_graph.nodes[id].TensorInputs()) {
        readers_[in.node].insert(static_cast<ir::NodeId>(id));
      }
    }
  }

  std::string Render() {
    Head();
    Verdict();
    Premises();
    if (where_) Stopped();
    if (result_.evidence) Evidence();
    Outputs();
    GraphSection();
    out_ << "<footer>Written by <span class=\"tool\">" << E(info_.tool)
         << "</span>. Self-contained: no network, no external assets.</footer>\n";
    Script();
    out_ << "</body>\n</html>\n";
    return out_.str();
  }

 private:
  // A node as a link to its row in the graph section.
  std::string NodeLink(ir::NodeId id) const {
    const ir::Node& node = s_graph_.node(id);
    return "<a href=\"#n-" + std::to_string(id) + "\">" + E(node.name) + "</a>";
  }

  // One relation, its proof chain behind a click (what `explain` prints).
  std::string RelationItem(const std::string& text, const std::vector<std::string>& proof) const {
    std::string html = "<details class=\"rel\"><summary><code>" + E(text) + "</code></summary>";
    if (proof.empty()) {
      html += "<p class=\"muted\">proof: (none recorded)</p>";
    } else {
      html += "<ol class=\"proof\">";
      for (const std::string& step : proof) html += "<li><code>" + E(step) + "</code></li>";
      html += "</ol>";
    }
    return html + "</details>";
  }

  // The relations of S tensor `name`, or "no relation".
  std::string RelationsOf(const std::string& name) const {
    auto it = result_.relations.find(name);
    if (it == result_.relations.end() || it->second.empty()) {
      return "<span class=\"muted\"><code>" + E(name) + "</code>: no relation</span>";
    }
    std::string html;
    for (const InferredRelation& r : it->second) {
      html += RelationItem(symbolic::RelationToString(r.relation, s_graph_), r.proof);
    }
    return html;
  }

  std::string StatusOf(ir::NodeId id) const {
    auto it = outcome_of_.find(id);
    if (it == outcome_of_.end()) return "";
    return std::string(symbolic::NodeStatusName(result_.nodes[it->second].status));
  }

  void Row(const std::string& label, const std::string& html) {
    out_ << "<tr><th>" << E(label) << "</th><td>" << html << "</td></tr>\n";
  }

  void Head() {
    out_
        << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>graphguard verify: " << E(symbolic::VerdictName(result_.verdict))
        << "</title>\n<style>\n"
        << "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;"
           "padding:16px 24px;color:#1d2330}\n"
           "h1{font-size:20px;padding:10px 14px;border-radius:6px;margin:8px 0}\n"
           "h1.refines{background:#e3f5e6;border-left:6px solid #2d8a3e}\n"
           "h1.unknown{background:#fff4d6;border-left:6px solid #c48a00}\n"
           "h1.violation{background:#fde4e4;border-left:6px solid #c0392b}\n"
           "h2{font-size:16px;border-bottom:1px solid #d8dce3;padding-bottom:3px;margin-top:22px}\n"
           "h3{font-size:14px;margin:14px 0 4px}\n"
           "code{font:12.5px ui-monospace,Menlo,Consolas,monospace}\n"
           "table{border-collapse:collapse;width:100%}\n"
           "th,td{text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid "
           "#eef0f3}\n"
           "table.kv th{width:130px;color:#555;font-weight:600}\n"
           ".muted{color:#777}\n.stopped{background:#fff4d6}\n"
           "tr.st-no-relation td:nth-child(3),tr.st-limit-hit td:nth-child(3),"
           "tr.st-conflict td:nth-child(3){color:#b35c00;font-weight:600}\n"
           "tr.st-blocked td:nth-child(3){color:#999}\n"
           "details.rel summary{cursor:pointer}\ndetails.rel{margin:1px 0}\n"
           "ol.proof{margin:2px 0 6px;padding-left:26px;color:#333}\n"
           "details.group{border:1px solid #d8dce3;border-radius:5px;margin:6px 0}\n"
           "details.group>summary{cursor:pointer;padding:5px 10px;background:#f5f6f8;"
           "font-weight:600}\n"
           ".count{color:#666;font-weight:normal}\n"
           ".neigh td:first-child{width:90px;color:#555}\n"
           "pre.src{background:#f5f6f8;padding:6px 10px;border-radius:4px;margin:4px 0;"
           "white-space:pre-wrap}\n"
           "#search{font-size:14px;padding:4px 8px;width:320px}\n"
           "ul{margin:4px 0;padding-left:22px}\nfooter{margin-top:28px;color:#888;"
           "font-size:12px}\n"
        << "</style>\n</head>\n<body>\n";
  }

  void Verdict() {
    out_ << "<h1 id=\"verdict\" class=\"" << VerdictClass(result_.verdict) << "\">"
         << E(VerdictLine(result_)) << "</h1>\n<table class=\"kv\" id=\"run\">\n";
    Row("sequential", "<code>" + E(info_.seq) + "</code>");
    std::string dist;
    for (const std::string& d : info_.dist) dist += (dist.empty() ? "" : " ") + E(d);
    Row("distributed", "<code>" + dist + "</code>");
    Row("relations", "<code>" + E(info_.relations) + "</code>");
    if (!info_.hints.empty()) Row("hints", "<code>" + E(info_.hints) + "</code>");
    Row("S graph", std::to_string(s_graph_.nodes.size()) + " nodes, " +
                       std::to_string(result_.nodes.size()) + " operators examined");
    if (info_.timing) Row("time", Seconds(result_.seconds));
    out_ << "</table>\n";
  }

  void Premises() {
    out_ << "<section id=\"premises\">\n<h2>Premises (" << result_.premises.size() << ")</h2>\n";
    if (result_.premises.empty()) {
      out_ << "<p class=\"muted\">none: the verdict takes nothing as given</p>\n";
    } else {
      out_ << "<ul>\n";
      for (const symbolic::Premise& p : result_.premises) {
        out_ << "<li><b>" << E(p.kind) << "</b> <code>" << E(p.text) << "</code>"
             << (p.origin.empty() ? "" : " <span class=\"muted\">(" + E(p.origin) + ")</span>")
             << "</li>\n";
      }
      out_ << "</ul>\n";
    }
    out_ << "</section>\n";
  }

  void Stopped() {
    const VerifyFinding& f = *finding_;
    const ir::Node& node = s_graph_.node(where_->s_node);
    out_ << "<section id=\"stopped\">\n<h2>Where the proof stopped</h2>\n<table class=\"kv\">\n";
    std::string op = "<code>" + E(f.s_operator) + "</code> &rarr; <code>" + E(f.produces) +
                     "</code> (node " + NodeLink(where_->s_node);
    if (f.graph_line > 0) {
      op += ", line " + std::to_string(f.graph_line) + " of <code>" + E(f.s_graph_file) + "</code>";
    }
    Row("S operator", op + ")");
    Row("source", f.source.empty() ? "<span class=\"muted\">(not recorded)</span>"
                                   : "<code>" + E(f.source.ToString()) + "</code>");
    if (!f.source.code.empty()) Row("code", "<pre class=\"src\">" + E(f.source.code) + "</pre>");
    if (!f.failed_output.empty()) {
      Row("failed", "expected output <code>" + E(f.failed_output) + "</code>");
    }
    if (where_->outcome != nullptr) {
      const NodeOutcome& o = *where_->outcome;
      std::string status = E(f.status) + " (search " + E(symbolic::StopReasonName(o.stop)) +
                           " after " + std::to_string(o.iterations) + " iteration" +
                           (o.iterations == 1 ? "" : "s") + ", e-graph " +
                           std::to_string(o.egraph_nodes) + " nodes";
      if (info_.timing) status += ", " + Seconds(o.seconds);
      Row("status", status + ")");
    }
    if (!f.cause.empty()) Row("proof stopped", E(f.cause));
    Row("why", E(f.why));
    out_ << "</table>\n";
    if (where_->output_index) {
      out_ << "<h3>Relations inferred for the output</h3>\n";
      for (const std::string& name : OperatorOutputNames(s_graph_, where_->s_node)) {
        out_ << "<div>" << RelationsOf(name) << "</div>\n";
      }
    }
    // The S graph around it: who produces its inputs (with their relations), who reads it.
    out_ << "<h3>Inputs of the operator and their relations</h3>\n<table class=\"neigh\">\n";
    std::set<std::string> shown;  // a tensor read twice is listed once
    for (ir::TensorRef in : node.TensorInputs()) {
      std::string name = s_graph_.ValueName(in);
      if (!shown.insert(name).second) continue;
      const ir::Node& producer = s_graph_.node(in.node);
      out_ << "<tr><td><code>" << E(name) << "</code></td><td>" << NodeLink(in.node) << " <code>"
           << E(Producer(s_graph_, producer)) << "</code>"
           << (producer.source.empty()
                   ? ""
                   : " <span class=\"muted\">" + E(producer.source.ToString()) + "</span>")
           << "</td><td>" << RelationsOf(name) << "</td></tr>\n";
    }
    if (node.TensorInputs().empty()) out_ << "<tr><td class=\"muted\">(none)</td></tr>\n";
    out_ << "</table>\n<h3>Operators that read its result</h3>\n";
    auto readers = readers_.find(where_->s_node);
    if (readers == readers_.end()) {
      out_ << "<p class=\"muted\">(none: a graph output)</p>\n";
    } else {
      out_ << "<ul>\n";
      for (ir::NodeId id : readers->second) {
        const ir::Node& r = s_graph_.node(id);
        std::string status = StatusOf(id);
        out_ << "<li>" << NodeLink(id) << " <code>" << E(Producer(s_graph_, r)) << "</code>"
             << (status.empty() ? "" : " <span class=\"muted\">" + E(status) + "</span>")
             << "</li>\n";
      }
      out_ << "</ul>\n";
    }
    if (where_->outcome == nullptr) {
      out_ << "</section>\n";
      return;
    }
    const std::vector<std::string>& candidates = where_->outcome->candidates;
    out_ << "<h3>D operators that were candidates (" << candidates.size() << ")</h3>\n";
    if (candidates.empty()) out_ << "<p class=\"muted\">(none)</p>\n";
    auto list = [&](size_t from, size_t to) {
      out_ << "<ul>\n";
      for (size_t i = from; i < to; ++i)
        out_ << "<li><code>" << E(candidates[i]) << "</code></li>\n";
      out_ << "</ul>\n";
    };
    size_t open = std::min(candidates.size(), kOpenCandidates);
    if (open > 0) list(0, open);
    if (candidates.size() > open) {
      out_ << "<details><summary>" << (candidates.size() - open) << " more</summary>\n";
      list(open, candidates.size());
      out_ << "</details>\n";
    }
    out_ << "</section>\n";
  }

  void Evidence() {
    const symbolic::NumericEvidence& e = *result_.evidence;
    out_ << "<section id=\"evidence\">\n<h2>Numeric evidence</h2>\n<table class=\"kv\">\n";
    Row("run", E(e.how));
    if (!e.error.empty()) {
      Row("no evidence", E(e.error));
    } else {
      Row("outputs", std::to_string(e.outputs_agreeing) + " of " +
                         std::to_string(e.outputs_checked) + " expected relations hold" +
                         (e.outputs_unevaluated > 0
                              ? ", " + std::to_string(e.outputs_unevaluated) + " not evaluated"
                              : ""));
    }
    out_ << "</table>\n";
    auto list = [&](const std::string& title, const std::vector<std::string>& items) {
      if (items.empty()) return;
      out_ << "<h3>" << E(title) << "</h3>\n<ul>\n";
      for (const std::string& item : items) out_ << "<li><code>" << E(item) << "</code></li>\n";
      out_ << "</ul>\n";
    };
    list("Counterexamples", e.counterexamples);
    list("Marginal differences (not called a violation)", e.marginal);
    list("What the stopping S tensor equals numerically", e.classification);
    out_ << "</section>\n";
  }

  void Outputs() {
    out_ << "<section id=\"outputs\">\n<h2>Expected outputs (" << result_.outputs.size()
         << ")</h2>\n<table>\n<tr><th>relation</th><th>shown</th><th>detail</th></tr>\n";
    for (const symbolic::OutputCheck& c : result_.outputs) {
      out_ << "<tr" << (c.implied ? "" : " class=\"stopped\"") << "><td>"
           << RelationItem(symbolic::RelationToString(c.expected, s_graph_), c.proof) << "</td><td>"
           << (c.implied ? "proved" : "not shown") << "</td><td>" << E(c.detail) << "</td></tr>\n";
    }
    out_ << "</table>\n</section>\n";
  }

  void GraphSection() {
    std::vector<HtmlNodeGroup> groups = HtmlNodeGroups(s_graph_);
    out_ << "<section id=\"graph\">\n<h2>S graph (" << s_graph_.nodes.size() << " nodes, "
         << groups.size() << " group" << (groups.size() == 1 ? "" : "s") << ")</h2>\n"
         << "<p><input id=\"search\" type=\"search\" placeholder=\"filter operators by name\" "
            "aria-label=\"filter operators by name\"> <span id=\"matches\" class=\"muted\">"
            "</span></p>\n";
    std::optional<size_t> stopped;
    if (where_) stopped = static_cast<size_t>(where_->s_node);
    for (const HtmlNodeGroup& g : groups) {
      bool holds_stop = stopped && *stopped >= g.first && *stopped <= g.last;
      size_t failing = 0;
      for (size_t id = g.first; id <= g.last; ++id) {
        std::string s = StatusOf(static_cast<ir::NodeId>(id));
        failing += !s.empty() && s != "inferred";
      }
      out_ << "<details class=\"group\"" << (holds_stop || groups.size() == 1 ? " open" : "")
           << "><summary>" << E(g.label) << " <span class=\"count\">&middot; "
           << (g.last - g.first + 1) << " nodes"
           << (failing > 0 ? ", " + std::to_string(failing) + " not inferred" : "")
           << (holds_stop ? ", the proof stopped here" : "") << "</span></summary>\n"
           << "<table>\n<tr><th>node</th><th>operator</th><th>status</th><th>relations "
              "(click for the proof)</th><th>source</th></tr>\n";
      for (size_t id = g.first; id <= g.last; ++id) NodeRow(static_cast<ir::NodeId>(id), stopped);
      out_ << "</table>\n</details>\n";
    }
    out_ << "</section>\n";
  }

  void NodeRow(ir::NodeId id, std::optional<size_t> stopped) {
    const ir::Node& node = s_graph_.node(id);
    std::string status = StatusOf(id);
    out_ << "<tr id=\"n-" << id << "\" data-n=\"" << E(node.name) << "\" class=\"st-"
         << (status.empty() ? "none" : E(status))
         << (stopped && *stopped == static_cast<size_t>(id) ? " stopped" : "") << "\"><td><code>"
         << E(node.name) << "</code></td><td><code>" << E(Producer(s_graph_, node))
         << "</code></td><td>" << E(status) << "</td><td>";
    for (const std::string& name : OperatorOutputNames(s_graph_, id)) out_ << RelationsOf(name);
    out_ << "</td><td>";
    if (!node.source.empty()) {
      out_ << "<code>" << E(node.source.ToString()) << "</code>";
      if (!node.source.code.empty())
        out_ << "<pre class=\"src\">" << E(node.source.code) << "</pre>";
    }
    out_ << "</td></tr>\n";
  }

  // Static: the search filter and opening the group of a linked node. It reads the DOM only.
  void Script() {
    out_
        << "<script>\n"
           "(function(){\n"
           "var q=document.getElementById('search'),m=document.getElementById('matches');\n"
           "var groups=[].slice.call(document.querySelectorAll('details.group'));\n"
           "groups.forEach(function(g){g.dataset.o=g.open?'1':'';});\n"
           "q.addEventListener('input',function(){\n"
           " var s=q.value.trim().toLowerCase(),n=0;\n"
           " groups.forEach(function(g){var any=0;\n"
           "  g.querySelectorAll('tr[data-n]').forEach(function(r){\n"
           "   var hit=!s||r.dataset.n.toLowerCase().indexOf(s)>=0;r.hidden=!hit;if(hit)any++;});\n"
           "  n+=any;g.hidden=!!s&&!any;g.open=s?any>0:g.dataset.o==='1';});\n"
           " m.textContent=s?n+' matching':'';});\n"
           "function reveal(){var id=location.hash.slice(1),e=id&&document.getElementById(id);\n"
           " if(!e)return;for(var p=e.closest('details');p;p=p.parentElement.closest('details'))"
           "p.open=true;\n e.scrollIntoView();}\n"
           "window.addEventListener('hashchange',reveal);reveal();\n"
           "})();\n"
           "</script>\n";
  }

  const VerifyResult& result_;
  const ir::Graph& s_graph_;
  const VerifyRunInfo& info_;
  std::map<ir::NodeId, size_t> outcome_of_;
  std::map<ir::NodeId, std::set<ir::NodeId>> readers_;
  std::optional<Localization> where_;
  std::optional<VerifyFinding> finding_;
  std::ostringstream out_;
};

}  // namespace

std::string HtmlEscape(std::string_view text) { return XmlEscape(text, true); }

std::vector<HtmlNodeGroup> HtmlNodeGroups(const ir::Graph& s_graph) {
  constexpr const char* kInputs = "graph inputs";
  std::vector<HtmlNodeGroup> groups;
  size_t n = s_graph.nodes.size();
  if (n == 0) return groups;
  // A captured graph names its operators "mm_3", its parameters "layers_3_fc1_weight": an
  // operator without a layer in its own name takes the first one among the nodes it reads.
  std::vector<std::string> layers(n);
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = s_graph.nodes[i];
    if (node.kind != ir::NodeKind::kOperator) {
      layers[i] = kInputs;
      continue;
    }
    layers[i] = LayerOf(node.name);
    for (ir::TensorRef in : node.TensorInputs()) {
      if (!layers[i].empty()) break;
      layers[i] = LayerOf(s_graph.node(in.node).name);
    }
    any = any || !layers[i].empty();
  }
  auto chunks = [&](const HtmlNodeGroup& g, bool named, std::vector<HtmlNodeGroup>* out) {
    size_t parts = (g.last - g.first) / kHtmlChunk + 1;
    for (size_t k = 0; k < parts; ++k) {
      size_t first = g.first + k * kHtmlChunk, last = std::min(g.last, first + kHtmlChunk - 1);
      std::string range = "nodes " + std::to_string(first + 1) + "-" + std::to_string(last + 1);
      out->push_back(
          {named ? (parts == 1 ? g.label : g.label + ", " + range) : range, first, last});
    }
  };
  if (!any) {
    chunks({"", 0, n - 1}, false, &groups);
    return groups;
  }
  // Topological order keeps a layer's nodes together; an operator without a layer (an add
  // between two layers) reads as part of the one before.
  std::vector<HtmlNodeGroup> layered;
  for (size_t i = 0; i < n; ++i) {
    const std::string& layer = layers[i];
    if (layered.empty()) {
      layered.push_back({layer.empty() ? "before the first layer" : layer, i, i});
    } else if (!layer.empty() && layer != layered.back().label) {
      layered.push_back({layer, i, i});
    } else if (layer.empty() && layered.back().label == kInputs) {
      layered.push_back({"before the first layer", i, i});
    } else {
      layered.back().last = i;
    }
  }
  // A layer of hundreds of operators (forward and backward) still opens in readable pieces.
  for (const HtmlNodeGroup& g : layered) chunks(g, true, &groups);
  return groups;
}

std::string VerifyHtml(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                       const VerifyRunInfo& info) {
  return Page(result, s_graph, info).Render();
}

}  // namespace gg::report
