#include "compiler/emit/sym_prologue.h"

#include <optional>

#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler {

SymPrologue::SymPrologue(const ir::Graph& graph, const std::vector<ir::NodeId>& kernel_nodes)
    : graph_(graph) {
  for (ir::NodeId n : kernel_nodes) {
    const ir::Node& node = graph.node(n);
    for (size_t i = 0; i < node.args.size(); ++i) {
      const ir::Argument& a = node.args[i];
      // Operands no memory is planned at may be values with no bound (a checked item()).
      unbounded_ok_ = !ir::sym_arg_needs_bound(*node.schema, i);
      if (const auto* s = std::get_if<ir::SymInt>(&a.variant())) add(*s->expr);
      if (const auto* l = std::get_if<ir::SymIntList>(&a.variant())) {
        for (const ir::SymIntItem& item : l->items) {
          if (item.expr) add(*item.expr);
        }
      }
    }
  }
}

int SymPrologue::slot(const ir::SymExpr& e) const {
  auto it = by_expr_.find(e.str());
  if (it == by_expr_.end())
    throw CompileError("internal: symbolic int " + e.str() + " not planned");
  return it->second;
}

bool SymPrologue::may_be_negative(const ir::SymExpr& e) const {
  return !ir::is_bounded(e, graph_.symbols()) ||
         ir::sym_bounds(e, graph_.symbols(), "symbolic int " + e.str()).lo < 0;
}

int SymPrologue::constant(int64_t v) {
  slots_.push_back({SymSlot::Kind::Const, v});
  return static_cast<int>(slots_.size() - 1);
}

int SymPrologue::add(const ir::SymExpr& e) {
  const std::string key = e.str();
  // Sizes need a max: sym_bounds refuses them without one, even where a check computed them.
  const bool bounded = ir::is_bounded(e, graph_.symbols());
  const ir::SymBounds bounds = bounded || !unbounded_ok_
                                   ? ir::sym_bounds(e, graph_.symbols(), "symbolic int " + key)
                                   : ir::SymBounds{0, 0};
  if (auto it = by_expr_.find(key); it != by_expr_.end()) return it->second;
  int out = -1;
  // A slot for a call's result; `hi` its largest value (the expression's unless given).
  auto result = [&](std::optional<int64_t> hi = std::nullopt) {
    slots_.push_back({SymSlot::Kind::Result, hi.value_or(bounds.hi)});
    return static_cast<int>(slots_.size() - 1);
  };
  switch (e.op) {
    case ir::SymExpr::Op::Const:
      out = constant(e.value);
      break;
    case ir::SymExpr::Op::Symbol: {
      const ir::SymbolInfo& info = graph_.symbols().at(e.symbol);
      if (info.input == ir::kNoValue)
        throw CompileError("symbol '" + e.symbol + "' is not the size of any input dimension");
      if (info.from_value) {  // x.item(): the value of a one-element tensor
        out = result();
        calls_.push_back({"aten::_local_scalar_dense", "", info.input, {}, out});
        break;
      }
      const int dim = constant(info.dim);
      out = result(info.scale * bounds.hi + info.offset);  // the size itself
      calls_.push_back({"aten::sym_size", "int", info.input, {dim}, out});
      // A derived dim (scale * symbol + offset): the symbol is (size - offset) // scale. A size
      // not of that form is refused by the runtime before this runs (Method::set_input, from
      // the program's pteron.size_steps named data).
      if (info.offset != 0) {
        const int size = out;
        out = result(info.scale * bounds.hi);
        calls_.push_back(
            {"executorch_prim::sub", "Scalar", ir::kNoValue, {size, constant(info.offset)}, out});
      }
      if (info.scale != 1) {
        const int size = out;
        out = result();
        calls_.push_back({"executorch_prim::floordiv",
                          "Scalar",
                          ir::kNoValue,
                          {size, constant(info.scale)},
                          out});
      }
      break;
    }
    case ir::SymExpr::Op::Pow: {  // base * base * ... (the exponent is a small constant)
      const int base = add(*e.operands[0]);
      int acc = constant(1);
      for (int64_t k = 0; k < e.operands[1]->value; ++k) {
        const int r = result();
        calls_.push_back({"executorch_prim::mul", "Scalar", ir::kNoValue, {acc, base}, r});
        acc = r;
      }
      out = acc;
      break;
    }
    default: {
      const char* op = nullptr;
      switch (e.op) {
        case ir::SymExpr::Op::Add:
          op = "executorch_prim::add";
          break;
        case ir::SymExpr::Op::Mul:
          op = "executorch_prim::mul";
          break;
        case ir::SymExpr::Op::FloorDiv:
          op = "executorch_prim::floordiv";
          break;
        case ir::SymExpr::Op::Mod:
          op = "executorch_prim::mod";
          break;
        case ir::SymExpr::Op::Max:
          op = "executorch_prim::sym_max";
          break;
        case ir::SymExpr::Op::Min:
          op = "executorch_prim::sym_min";
          break;
        default:
          break;
      }
      // n-ary sums and products become a chain of binary calls.
      int acc = add(*e.operands[0]);
      for (size_t i = 1; i < e.operands.size(); ++i) {
        const int rhs = add(*e.operands[i]);
        const int r = result();
        calls_.push_back({op, "Scalar", ir::kNoValue, {acc, rhs}, r});
        acc = r;
      }
      // torch's Mod is Python's (the divisor's sign), the prim op C's (the dividend's, as
      // ExecuTorch's): ((a % b) + b) % b where either may be negative (a value read with
      // item(), not a size).
      if (e.op == ir::SymExpr::Op::Mod &&
          (may_be_negative(*e.operands[0]) || may_be_negative(*e.operands[1]))) {
        const int divisor = add(*e.operands[1]);
        const int shifted = result();
        calls_.push_back({"executorch_prim::add", "Scalar", ir::kNoValue, {acc, divisor}, shifted});
        acc = result();
        calls_.push_back({op, "Scalar", ir::kNoValue, {shifted, divisor}, acc});
      }
      out = acc;
      break;
    }
  }
  by_expr_[key] = out;
  return out;
}

SymSchedule::SymSchedule(const ir::Graph& graph, const SymPrologue& prologue,
                         const std::unordered_map<ir::ValueId, ir::ValueId>& view_sources)
    : graph_(graph),
      prologue_(prologue),
      view_sources_(view_sources),
      done_(prologue.calls().size(), false),
      computed_(prologue.slots().size(), false) {
  for (size_t i = 0; i < computed_.size(); ++i)
    computed_[i] = prologue.slots()[i].kind == SymSlot::Kind::Const;
}

void SymSchedule::produced(ir::ValueId v) {
  if (v != ir::kNoValue) produced_.insert(v);
}

std::vector<const SymCall*> SymSchedule::ready() {
  std::vector<const SymCall*> out;
  const auto& calls = prologue_.calls();
  for (size_t i = 0; i < calls.size(); ++i) {  // in order: operands come before their users
    if (done_[i]) continue;
    const SymCall& c = calls[i];
    if (c.tensor != ir::kNoValue && !available(c.tensor)) continue;
    bool operands = true;
    for (int slot : c.operands) operands = operands && computed_[static_cast<size_t>(slot)];
    if (!operands) continue;
    done_[i] = true;
    computed_[static_cast<size_t>(c.out)] = true;
    out.push_back(&c);
  }
  return out;
}

// Inputs, constants and state from the start; a node's output once it ran; a static view's
// once its source is.
bool SymSchedule::available(ir::ValueId v) const {
  if (graph_.value(v).producer == ir::kNoNode || produced_.count(v)) return true;
  auto view = view_sources_.find(v);
  return view != view_sources_.end() && available(view->second);
}

void SymSchedule::check_ready(const ir::Node& node) const {
  auto check = [&](const ir::SymExpr& e) {
    if (!computed_[static_cast<size_t>(prologue_.slot(e))])
      throw CompileError("node '" + node.debug.node_name + "' (" + node.op.str() +
                         ") uses the size " + e.str() + " before the node that produces it " +
                         "runs; pteron cannot order it");
  };
  for (const ir::Argument& a : node.args) {
    if (const auto* s = std::get_if<ir::SymInt>(&a.variant())) check(*s->expr);
    if (const auto* l = std::get_if<ir::SymIntList>(&a.variant())) {
      for (const ir::SymIntItem& item : l->items) {
        if (item.expr) check(*item.expr);
      }
    }
  }
}

void SymSchedule::check_all_emitted() const {
  for (size_t i = 0; i < done_.size(); ++i) {
    if (!done_[i])
      throw CompileError("internal: symbolic int call " + prologue_.calls()[i].op +
                         " has no instruction (its tensor is never produced)");
  }
}

}  // namespace pteron::compiler
