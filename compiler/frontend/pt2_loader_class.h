// The .pt2 loader's class (load_pt2 in pt2_loader.h is its entry point), shared by the files
// that define it: pt2_loader.cpp reads the archive, inputs, nodes, effects and outputs;
// pt2_loader_sizes.cpp reads what torch.export writes about symbolic sizes and values (guards,
// data-dependent lengths, item() reads, run-time checks); pt2_loader_item_scalars.cpp the item()
// values the program computes as tensors; pt2_loader_control_flow.cpp cond, while_loop, scan and
// map. Internal to the frontend.
#pragma once

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <set>
#include <unordered_map>

#include "compiler/compile_error.h"
#include "compiler/frontend/argument_reader.h"
#include "compiler/frontend/constant_reader.h"
#include "compiler/frontend/debug_info.h"
#include "compiler/frontend/export_json.h"
#include "compiler/frontend/pt2_archive.h"
#include "compiler/frontend/pt2_loader.h"
#include "compiler/frontend/unbacked_sizes.h"
#include "compiler/frontend/value_checks.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler::frontend::detail {

class Loader {
 public:
  Loader(Pt2Archive archive, LoadOptions options)
      : archive_(std::move(archive)), options_(std::move(options)) {}

  ir::Graph load();

 private:
  // ---- Archive layout and versions --------------------------------------------------------

  void check_layout();

  [[noreturn]] void missing_model(const std::string& entry) {
    std::string models;
    for (const std::string& name : archive_.entries()) {
      if (name.starts_with("models/") && name.ends_with(".json")) {
        models += (models.empty() ? "" : ", ") + name.substr(7, name.size() - 12);
      }
    }
    throw CompileError(archive_.path() + ": missing entry " + archive_.full_name(entry) +
                       (models.empty() ? "" : " (the archive has models: " + models + ")"));
  }

  void check_version();

  // Bounded dynamic shapes: the symbols' ranges (range_constraints) and the named SymInts'
  // expressions (sym_int_values). Symbolic floats are refused unless the program computes them
  // (lifted_scalars_); symbolic bools are the comparisons export's size guards test
  // (read_size_guard).
  void read_symbols(const Json& graph);

  // A named SymInt used as an argument: its expression, every symbol of which must be a
  // dimension of a user input (where the runtime reads it).
  // `bounded`: refuse a symbol without a max (a guard may read one: it is checked at run time).
  ir::SymExprPtr sym_int_named(const std::string& name, const std::string& what,
                               bool bounded = true);

  // A dimension of a user input and the symbol it gives: the dimension is
  // scale * symbol + offset.
  struct InputSymbol {
    ir::AffineSymbol size;  // the dimension is size.scale * size.symbol + size.offset
    int32_t dim;
  };

  // The symbols that dimensions of `input` give (a whole dimension, or a derived dim's root);
  // refuses an unbounded one by name.
  std::vector<InputSymbol> input_symbols(const std::string& input, const std::string& what);

  // ---- Values -------------------------------------------------------------------------------

  ir::TensorSpec spec_of(const std::string& name);

  ir::ValueId lookup(const std::string& name, const std::string& what) const;

  void read_inputs(const Json& signature, const Json& graph, const PayloadConfigs& configs);

  // ---- Nodes --------------------------------------------------------------------------------

  void read_node(const Json& node, int index);

  // ---- Effects ------------------------------------------------------------------------------

  // with_effects(token, op, args...): export's wrapping of an op with side effects. The one
  // pteron runs is linalg's error check, _linalg_check_errors(info, api_name): torch.linalg.inv,
  // cholesky, solve and lu_factor raise when their *_ex op reports a singular or not
  // positive-definite input. It becomes that op's check_errors argument, so its kernel fails the
  // call with the reason, as torch raises.
  void read_effect(const Json& node, const std::string& what);

  // ---- Data-dependent sizes (unbacked SymInts) ----------------------------------------------

  // A comparison of sizes export guards with: whether the bounds imply it, and what it compares.
  struct SizeGuard {
    bool implied = false;
    std::string cmp;  // Python's operator name: ge, gt, le, lt, eq, ne
    ir::SymExprPtr lhs, rhs;
  };
  static inline const std::set<std::string> kComparisons = {"ge", "gt", "le", "lt", "eq", "ne"};

  // Export's guards on sizes: comparisons (_operator.ge, ...) defining symbolic bools, and
  // _assert_scalar / sym_constrain_range* nodes over them. A guard the symbols' bounds imply
  // is dropped (the plan is at the bound, and kernels refuse sizes beyond their out's); any
  // other (torch._check on a data-dependent length, a view's divisibility, two selections
  // asserted equal) becomes a pteron::check_size node, which fails the call with export's
  // message when the condition does not hold. True when `node` was such a guard.
  bool read_size_guard(const std::string& target, const Json& node, const ir::DebugHandle& debug,
                       const std::string& what);

  // sym_storage_offset of a view whose offset is data-dependent (x[k:] for k = n.item()): its
  // symbol is recorded so that export's guards of it are dropped (read_size_guard). True when
  // `node` was one.
  bool read_storage_offset(const std::string& target, const Json& node, const std::string& what);

  bool is_storage_offset(const std::string& kind, const Json& arg) const;

  // A pteron::check_size node for `guard`, reading its sizes from the tensors they are
  // dimensions of (which also orders it after them).
  void add_size_check(const SizeGuard& guard, const std::string& message,
                      const ir::DebugHandle& debug);

  // A size from a tensor's value (`x[:n.item()]`, split sizes from `counts.tolist()`):
  // _local_scalar_dense of a one-element integer tensor defining an unbacked symbol. Its range
  // (a torch._check in the model) is where memory is planned, so it must have a max; it is an
  // assumption about the data, so the program checks it right after reading the value
  // (pteron::check_size), and export's own guards of it are then implied. A value only checked
  // (frontend/value_checks.h) plans nothing: every assert on it is checked as export wrote it.
  // True when `node` was such a read.
  bool read_item_size(const std::string& target, const Json& node, const ir::DebugHandle& debug,
                      const std::string& what);

  // The one-element tensor an item() (_local_scalar_dense) reads.
  ir::ValueId item_tensor(const Json& node, const std::string& what);

  // A checked bool tensor's value (torch._check_tensor_all: _is_all_true, then item()): a
  // symbol in [0, 1] read like an item() size. Export has already folded the flag to true
  // wherever it is used (the check assumed it), so its sym_ite(flag, 1, 0) and direct asserts
  // are read as that symbol instead (read_flag_as_int, read_size_guard). True when read.
  bool read_checked_flag(const Json& node, const std::string& what);

  // sym_ite(flag, 1, 0) of a checked flag (the only form value_checks keeps): the flag's symbol.
  bool read_flag_as_int(const std::string& target, const Json& node, const std::string& what);

  // Whether `lhs cmp rhs` is export's guard of a data-dependent length at torch's own range
  // where that range is below what the operator can give (u0 <= 20 for masked_select of a
  // 20-element self under a broadcast mask): left out, as eager never checks it.
  bool guards_unsound_torch_max(const std::string& cmp, const ir::SymExpr& lhs,
                                const ir::SymExpr& rhs) const;

  // The lower bound torch's range_constraints give `symbol`, unclamped; nullopt when none.
  std::optional<int64_t> torch_min(const std::string& symbol) const;

  // `sum == bounded`, where `sum` adds item() sizes of no max and terms that are never negative
  // (split sizes from counts.tolist(), which export asserts add up to the dim): each unbounded
  // term is at most the bounded side's max, once the program has checked the equality and every
  // term's lower bound (kernels refuse sizes past their planned bounds before that).
  void bound_summands(const ir::SymExpr& sum, const ir::SymExpr& bounded);

  bool is_bounded(const ir::SymExpr& e) const { return ir::is_bounded(e, graph_.symbols()); }

  // An output size torch cannot know before running (u0 of nonzero) needs an upper bound to
  // plan memory at: a torch._check in the model tighter than the operator's own bound, else the
  // operator's (nonzero: the input's numel), else range_constraints' max; without one the node
  // is refused. Other guards (a lower bound, torch's own unsound max for a broadcast
  // masked_select) are checked at run time (read_size_guard), as torch's exported program
  // checks them.
  void bound_data_dependent_sizes(const Json& node, const std::string& op,
                                  const std::vector<ir::Argument>& args, const std::string& what);

  // A data-dependent size is read at run time from the first output dimension it is, once the
  // node producing it has run (the program emitter places the read after that node).
  void bind_data_dependent_sizes(ir::NodeId id);

  // sym_size, sym_numel and Python arithmetic on SymInts: every SymInt they define is in
  // sym_int_values as an expression over the input symbols, which is what arguments use.
  static bool is_sym_int_op(const std::string& target, const Json& node);

  // The dtype torch gives a Python float in a tensor position: the default dtype (f32), or
  // f64 when the node already computes in f64 (so the scalar keeps its precision).
  ir::ScalarType wrapped_float_type(const Json& inputs, const std::string& what);
  std::vector<ir::ScalarType> tensor_input_dtypes(const Json& inputs) const;
  // An int literal in a tensor position of an element-wise op beside a floating tensor (x + 1,
  // 1 - x, x / 3) is the
  // float torch promotes it to: wrapped as the float it is, the kernel sees two floating
  // operands (an int64 0-d tensor sent add, sub and div through the mixed-dtype path, 11x
  // slower on 1M floats) and computes the same values (torch converts it to the float too).
  ir::Scalar promoted_literal(const ir::Scalar& s, const ir::OpRef& op, const Json& inputs) const;

  ir::ValueId wrap_scalar(const ir::Scalar& s, ir::ScalarType float_type,
                          const std::string& node_name, const std::string& arg_name);

  // torch's wrapped SymInt: aten::scalar_tensor(s, dtype=int64), run before the node reading
  // it (its Scalar argument is an Int value the program's size prologue computes).
  ir::ValueId wrap_sym_int(const ir::SymExprPtr& e, const ir::DebugHandle& debug,
                           const std::string& arg_name);

  const ir::OpSchema& find_schema(const std::string& target, const std::string& what);

  std::vector<std::optional<ir::NewValue>> read_node_outputs(const Json& node,
                                                             const ir::OpSchema& schema,
                                                             const std::string& what);

  // ---- item() values the program computes (pt2_loader_item_scalars.cpp)
  // ----------------------------------------------------

  // A lifted item() value (frontend/value_checks.h: LiftedScalars) as a one-element tensor the
  // program computes: item() reads the tensor itself (as f64 when floating, i64 when integer:
  // Python's float and int), Python arithmetic and comparisons become ATen ops on them. Each
  // name is computed once.
  ir::ValueId lifted_scalar(const std::string& name, const ir::DebugHandle& debug,
                            const std::string& what);
  // An operand of a lifted scalar's node: a constant, another lifted scalar, or a size.
  ir::ValueId lifted_operand(const Json& arg, const ir::DebugHandle& debug,
                             const std::string& what);
  // A lifted value as a tensor op's argument: 0-dim, a float in `float_type` (what torch
  // computes a Python float with next to the op's other tensors).
  ir::ValueId lifted_number(const std::string& name, ir::ScalarType float_type,
                            const ir::DebugHandle& debug, const std::string& what);
  // A call whose Scalar arguments include lifted values (takes_lifted_scalar): the op's Tensor
  // overload (clamp -> clamp.Tensor, pow.Tensor_Scalar -> pow.Tensor_Tensor), or for full /
  // full_like / scalar_tensor the value cast and expanded; a one-line refusal where the op has
  // no such overload (leaky_relu's negative_slope).
  ir::NodeId add_lifted_scalar_call(const ir::OpSchema& schema, std::vector<ir::Argument> args,
                                    std::vector<std::optional<ir::NewValue>> outputs,
                                    ir::ScalarType float_type, const ir::DebugHandle& debug,
                                    const std::string& what);

  // ---- Control flow (pt2_loader_control_flow.cpp)
  // ----------------------------------------------------

  // torch.ops.higher_order.cond(pred, true_graph, false_graph, operands): a pteron::cond node
  // whose branches are subgraphs read by this loader (read_branch).
  void read_cond(const Json& node, const ir::DebugHandle& debug, const std::string& what);

  // The predicate as a one-element bool tensor: a tensor (compared with 0 unless bool), a
  // comparison of sizes, or arithmetic on item() values (lifted_scalar), computed by the program
  // each call.
  ir::ValueId cond_predicate(const Json& arg, const ir::DebugHandle& debug,
                             const std::string& what);

  // torch.ops.higher_order.while_loop(cond_graph, body_graph, carried, additional): a
  // pteron::while_loop node whose cond and body are subgraphs read by this loader.
  void read_while_loop(const Json& node, const ir::DebugHandle& debug, const std::string& what);

  // An argument listing tensors (as_tensors), `name` saying what they are.
  std::vector<ir::ValueId> tensor_list_arg(const Json& input, const std::string& what,
                                           const std::string& name);
  // A node's `count` outputs, each a tensor.
  std::vector<ir::NewValue> tensor_outputs(const Json& node, size_t count, const std::string& what);
  // `values` less the constants (which a subgraph holds as its own).
  std::vector<ir::ValueId> non_constant(const std::vector<ir::ValueId>& values) const;

  // What a subgraph takes in one position: a value of `spec`, or (`constant` set) that
  // constant, which becomes the subgraph's own.
  struct SubgraphInput {
    ir::TensorSpec spec;
    const ir::ConstantData* constant = nullptr;
  };
  // `values` of the graph being read as subgraph inputs; with `constants`, constant ones are the
  // subgraph's constants (a loop's carried values change: never).
  std::vector<SubgraphInput> subgraph_inputs(const std::vector<ir::ValueId>& values,
                                             bool constants) const;

  // torch.ops.higher_order.scan(combine, init, xs, additional) and map_impl(body, xs,
  // additional) (`is_map`, no carry): a pteron::scan node whose function is a subgraph read by
  // this loader, and whose outputs are the final carry, the stacked results, then a buffer per
  // input for the row each iteration reads.
  void read_scan(const Json& node, bool is_map, const ir::DebugHandle& debug,
                 const std::string& what);

  // A subgraph (as_graph) as a graph of its own, its inputs `operands`; the model's symbols read
  // from its inputs.
  ir::Graph read_branch(const Json& arg, const std::vector<SubgraphInput>& operands,
                        const std::string& what);

  // ---- Outputs ------------------------------------------------------------------------------

  void read_outputs(const Json& signature);
  void read_pytree_specs(const Json& module);
  // The mutation of `target` (a state buffer, or an input the model writes into) to the value
  // output argument `arg` names, which must keep its dtype and shape.
  void add_mutation(ir::ValueId target, const Json& arg, const std::string& target_what,
                    const std::string& what);

  Pt2Archive archive_;
  LoadOptions options_;
  std::string where_;
  Json model_;
  const Json* tensor_values_ = nullptr;
  std::unordered_map<std::string, ir::SymExprPtr> sym_values_;
  std::unordered_map<std::string, SizeGuard> size_guards_;  // by symbolic bool name
  // Data-dependent lengths whose torch range is below the operator's bound: torch's max.
  std::unordered_map<std::string, int64_t> unsound_torch_max_;
  // range_constraints' integer min_val per symbol, before read_symbols clamps it at 0.
  std::unordered_map<std::string, int64_t> torch_min_;
  // Values only checked at run time (frontend/value_checks.h): their symbols, and the symbol of
  // each checked bool by the SymBool name export gave it.
  std::set<std::string> checked_only_;
  std::set<std::string> storage_offsets_;  // SymInt names sym_storage_offset defines
  std::unordered_map<std::string, ir::SymExprPtr> flags_;
  ValueChecks value_checks_;  // run-time checks on tensor values, left out
  // item() values the program computes, read as tensor ops (lifted_scalar), of the
  // graph being read (the model's or a subgraph's), its nodes and the tensors made so far.
  LiftedScalars lifted_scalars_;
  const Json* graph_nodes_ = nullptr;
  std::unordered_map<std::string, ir::ValueId> lifted_;
  ir::Graph graph_;
};

// Whether a Scalar argument of `args` holds a lifted item() value (read as a tensor): the call
// goes through Loader::add_lifted_scalar_call.
bool takes_lifted_scalar(const ir::OpSchema& schema, const std::vector<ir::Argument>& args);

}  // namespace pteron::compiler::frontend::detail
