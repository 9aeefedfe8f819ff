// HTML report: `graphguard verify --html FILE`, one self-contained page (inline CSS and a small
// inline script, no network, no external assets) for a person reading a verdict in a browser.
//
// It shows the verdict line with its premises; where the proof stopped (the S operator, its
// source lines, its inputs' relations, the S operators around it and the D candidates, as the
// text report localizes them through report::Localize); the numeric evidence (counterexamples);
// the expected outputs; and the whole S graph, each relation with its proof chain (what
// `graphguard explain` prints) behind a click. At thousands of operators the graph is grouped by
// layer where node names carry one ("layers_3_...", "h.7"), otherwise in chunks of 100, every
// group collapsed except the one holding the stopped operator, with a search box filtering by name.
//
// Every string from the graphs, the spec and the result is HTML-escaped; the script carries no
// data, so a node named "<script>" stays text. Deterministic: no timestamps, and with timing off
// (--no-timing) no wall-clock values. docs/report-format.md describes the page.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "report/verify_report.h"
#include "symbolic/inference.h"

namespace gg::report {

// Text for HTML content or a quoted attribute value: & < > " ' escaped; characters HTML cannot
// carry (control characters, invalid UTF-8) become U+FFFD, as in XmlEscape.
std::string HtmlEscape(std::string_view text);

// Operators per group when the names carry no layer.
inline constexpr size_t kHtmlChunk = 100;

// The groups the page folds the S graph's nodes into: consecutive node ids, a label each.
struct HtmlNodeGroup {
  std::string label;  // "layers.3", or "nodes 101-200"
  size_t first = 0;   // node ids [first, last]
  size_t last = 0;
};
// By layer when some node name carries one (a node without a layer joins the group before it),
// otherwise chunks of kHtmlChunk.
std::vector<HtmlNodeGroup> HtmlNodeGroups(const ir::Graph& s_graph);

std::string VerifyHtml(const symbolic::VerifyResult& result, const ir::Graph& s_graph,
                       const VerifyRunInfo& info);

}  // namespace gg::report
