# Helpers for the CLI tests (sourced; not a test itself): compute what `graphguard stats` should
# print for FX print_readable files straight from the text, with grep/awk, independently of the
# C++ importer. Operator lines are `name[: "type"] = torch.ops.<ns>.<op>.<overload>(...)`;
# `x = self._tensor_constantN` lines are constants; inputs are the annotated parameters of forward;
# outputs are the items of `return (...)` or `return [...]`.

# Prints "<op> [functionalized]" or "<op>" for every operator call in file $1, one per line.
fx_operator_names() {
  { grep -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*(: "[^"]*")? = torch\.ops\.' "$1" || true; } |
    sed -E 's/^[^=]*= //' |
    sed -E 's/^torch\.ops\.higher_order\.auto_functionalized\(torch\.ops\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+).*/\1::\2.\3 [functionalized]/;
            t;
            s/^torch\.ops\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\(.*/\1::\2.\3/;
            t;
            s/^torch\.ops\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)\(.*/\1::\2/'
}

# Prints "<group> <kind>" for every collective call in file $1.
fx_collectives() {
  { grep -E '= torch\.ops\.(_c10d_functional\.(all_reduce|all_gather_into_tensor|reduce_scatter_tensor|broadcast|all_to_all_single)|vllm\.all_reduce)\.' "$1" || true; } |
    sed -E 's/^[^=]*= torch\.ops\.//; s/;.*$//' |
    awk '{
      kind = $0; sub(/\..*/, "", kind)
      op = $0; sub(/^[^.]*\./, "", op); sub(/\..*/, "", op)
      if (op == "all_gather_into_tensor") op = "all_gather"
      else if (op == "reduce_scatter_tensor") op = "reduce_scatter"
      else if (op == "all_to_all_single") op = "all_to_all"
      n = split($0, parts, "\047"); group = parts[n - 1]
      print group, op
    }'
}

# Prints the rank section of `graphguard stats` for FX file $1 (from "rank R (Name)" on).
fx_expected_rank_section() {
  local file=$1 rank name inputs constants operators outputs
  rank=$(sed -nE 's/^# Graph\[rank=([0-9]+)\].*/\1/p' "$file")
  name=$(sed -nE 's/^class ([^(]+)\(.*/\1/p' "$file" | head -1)
  inputs=$(grep -E '^[[:space:]]+def forward\(self' "$file" | grep -o ': "' | wc -l)
  constants=$(grep -cE '^[[:space:]]+[A-Za-z0-9_]+ = self\._tensor_constant[0-9]+' "$file" || true)
  operators=$(fx_operator_names "$file" | wc -l)
  outputs=$(grep -E '^[[:space:]]+return [[(]' "$file" | sed -E 's/^[[:space:]]+return [[(](.*)[])][[:space:]]*$/\1/' |
              tr ',' '\n' | grep -c '[^[:space:]]' || true)
  echo "rank $rank ($name)"
  echo "  nodes: $((inputs + constants + operators)) (inputs $inputs, constants $constants, operators $operators)"
  echo "  inputs: $inputs"
  echo "  outputs: $outputs"
  local collectives
  collectives=$(fx_collectives "$file" | LC_ALL=C sort | uniq -c |
                awk '{ if ($2 != g) { if (g != "") print line; g = $2; line = "    group \047" g "\047: " $3 " " $1 }
                       else line = line ", " $3 " " $1 }
                     END { if (g != "") print line }')
  if [[ -z "$collectives" ]]; then echo "  collectives: none"; else echo "  collectives:"; echo "$collectives"; fi
  local histogram
  histogram=$(fx_operator_names "$file" | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2 -s |
              awk '{ count = $1; $1 = ""; sub(/^ /, ""); printf "    %6d  %s\n", count, $0 }')
  echo "  operators: $(printf '%s\n' "$histogram" | grep -c .) distinct"
  printf '%s\n' "$histogram"
}

# Prints the part of stats output $1 (a file) for rank $2, from its "rank" line to the next blank.
stats_rank_section() {
  awk -v r="$2" '/^rank / { on = ($2 == r) } on && /^$/ { on = 0 } on' "$1"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
