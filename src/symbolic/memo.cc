#include "symbolic/memo.h"

#include <cstring>

namespace gg::symbolic {

void LocalProblemKey::Add(int64_t value) {
  char buffer[sizeof(value)];
  std::memcpy(buffer, &value, sizeof(value));
  bytes_.append(buffer, sizeof(buffer));
}

void LocalProblemKey::AddAll(const std::vector<int64_t>& values) {
  Add(static_cast<int64_t>(values.size()));
  const size_t size = values.size() * sizeof(int64_t);
  const size_t at = bytes_.size();
  bytes_.resize(at + size);
  if (size > 0) std::memcpy(bytes_.data() + at, values.data(), size);
}

void LocalProblemKey::AddString(std::string_view text) {
  Add(static_cast<int64_t>(text.size()));
  bytes_.append(text);
}

void LocalProblemKey::AddType(const ir::TensorType& type) {
  Add(static_cast<int64_t>(type.dtype));
  Add(static_cast<int64_t>(type.shape.size()));
  for (const ir::Dim& d : type.shape) {
    if (d.is_static()) {
      Add(0);
      Add(d.value());
    } else {
      Add(1);
      AddString(d.symbol());
    }
  }
}

void LocalProblemKey::AddLeaves(const LeafTable& leaves) {
  Add(static_cast<int64_t>(leaves.size()));
  for (size_t i = 0; i < leaves.size(); ++i) {
    const TensorLeaf& leaf = leaves.at(static_cast<int64_t>(i));
    Add(static_cast<int64_t>(leaf.side));
    Add(leaf.rank);
    AddType(leaf.type);
    Add(leaf.finite ? 1 : 0);
  }
}

std::vector<std::string> InstantiateProof(const std::vector<ProofRun>& runs, const EGraph& graph,
                                          const LocalSolution& solution) {
  std::vector<std::string> out;
  for (const ProofRun& run : runs) {
    const std::string& name =
        run.reason < solution.first_late_reason
            ? graph.ReasonName(run.reason)
            : solution.late_reasons.at(run.reason - solution.first_late_reason);
    std::string r = name + (run.forward ? "" : " (reversed)");
    if (out.empty() || out.back() != r) out.push_back(std::move(r));
  }
  return out;
}

const LocalSolution* LocalProblemCache::Find(const LocalProblemKey& key) const {
  auto it = entries_.find(key.bytes());
  return it == entries_.end() ? nullptr : &it->second;
}

const LocalSolution& LocalProblemCache::Insert(const LocalProblemKey& key, LocalSolution solution) {
  return entries_.insert_or_assign(key.bytes(), std::move(solution)).first->second;
}

}  // namespace gg::symbolic
