// Premise: something a verdict takes as given instead of proving it — an `assume`d relation (a
// cut point), a stated value of a graph constant, the RNG model of random operators, a declared
// input domain. A REFINES is only as good as its premises, so every report lists them and a
// REFINES that rests on any says so in its first line ("REFINES under 2 premises: ...").
#pragma once

#include <string>
#include <tuple>

namespace gg::symbolic {

struct Premise {
  std::string kind;    // "assume", "cut", "constant", "rng", "domain", ...: one word
  std::string text;    // what is taken as given: "y == concat(1, y@0, y@1)"
  std::string origin;  // where it comes from: "spec.rel:4", or the operator that needs it

  friend bool operator==(const Premise& a, const Premise& b) {
    return std::tie(a.kind, a.text, a.origin) == std::tie(b.kind, b.text, b.origin);
  }
  friend bool operator<(const Premise& a, const Premise& b) {
    return std::tie(a.kind, a.text, a.origin) < std::tie(b.kind, b.text, b.origin);
  }
};

}  // namespace gg::symbolic
