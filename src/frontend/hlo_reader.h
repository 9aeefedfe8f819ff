// HloReader: imports an XLA HLO module from the text XLA prints (`HloModule::ToString()`, jax's
// `.as_text()`, `--xla_dump_to` *.hlo / *.hlo.txt files) as an ir::Graph.
//
// The ENTRY computation becomes the graph; its parameters are the graph's inputs (in parameter
// order) and its ROOT (a tuple: each element) the outputs. Sub-computations are read as reducers
// (to_apply=: add, maximum, minimum, and, or of the two parameters) or inlined where a fusion or
// a call names them (their parameters the operands). Each HLO instruction whose
// meaning an ATen registry operator has exactly becomes that operator (add -> aten::add.Tensor,
// dot -> aten::mm / aten::bmm, reduce with an add reducer -> aten::sum.dim_IntList, all-reduce ->
// _c10d_functional::all_reduce + wait_tensor, ...; some become a few nodes: a broadcast is a
// reshape and an expand), so the lowering, the lemma catalogue and the numeric runtime serve HLO
// as they serve FX. Integer values known when the module is read (constants, partition-id as
// the rank, arithmetic on them) are folded, so the offsets of a dynamic-slice an SPMD module
// computes from partition-id become each rank's aten::slice. pad is a cat of fills around the
// (cut) operand, all-to-all an all_to_all_single, a gather of one index per row an
// index_select of the clamped index; custom calls whose meaning is known are their ATen form
// (sharding annotations and Neuron's weight placement an alias, AwsNeuronRmsNorm its
// decomposition); a constant printed without its values (`{...}`) is a graph input after the
// parameters, which the spec relates; all-reduce-start/-done and all-gather-start/-done are the
// collective and its wait_tensor. Every other instruction (custom-call, sort,
// gather, scatter, reduce-window, collective-permute, a dot of mixed precision, ...) loads as
// an opaque `hlo::<opcode>` node typed from its result shape, its attributes kept as arguments
// (the computations they name as their text), equal only by congruence; an opaque collective
// also carries its rank, as its result is not a function of this rank's operands alone. There are
// no hlo:: registry entries: an instruction is an ATen operator, whose kernel, lowering and
// lowering samples the registry already has, or opaque. Every node's inferred type is checked
// against the HLO shape; layouts are ignored; `metadata={source_file= source_line=}` (or
// `stack_frame_id=` into the module's stack-frame tables) gives the node's source location, and an
// ENTRY parameter's `op_name` (jax's argument name) its FQN. Errors are gg::InputError with
// file:line.
//
// An SPMD module is one program for every rank: the collectives' replica_groups (the list form
// {{0,1},{2,3}}, the iota form [2,2]<=[4], [2,2]<=[2,2]T(1,0), the mesh form
// mesh['a'=2,'b'=2] {'b'}) name their members by rank, and the graph for rank r gives each
// collective the process group holding r (and partition-id the value r).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/node_check.h"
#include "ir/graph.h"

namespace gg::frontend {

struct HloOptions {
  int32_t rank = 0;   // the rank whose graph to build (its collectives' groups, partition-id)
  int32_t world = 0;  // ranks; 0: num_partitions x replica_count of the header, else the largest
                      // rank replica_groups name + 1, else 1
};

struct HloModule {
  ir::Graph graph;
  GroupMap groups;    // the process groups the graph's collectives name ("hlo_ranks_0_1")
  int32_t world = 1;  // the rank count (as HloOptions::world resolves it)
};

// Parses HLO text; `file` names the source in errors.
HloModule ParseHlo(std::string_view text, const std::string& file, const HloOptions& options = {});

// Reads and parses a file.
HloModule ReadHloFile(const std::string& path, const HloOptions& options = {});

// True for the file names the HLO reader reads: *.hlo, *.hlo.txt.
bool IsHloPath(const std::string& path);

}  // namespace gg::frontend
