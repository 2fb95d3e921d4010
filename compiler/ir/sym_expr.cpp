#include "compiler/ir/sym_expr.h"

#include <algorithm>
#include <cctype>

#include "compiler/compile_error.h"

namespace pteron::compiler::ir {

SymExprPtr SymExpr::constant(int64_t v) {
  auto e = std::make_shared<SymExpr>();
  e->op = Op::Const;
  e->value = v;
  return e;
}

SymExprPtr SymExpr::sym(std::string name) {
  auto e = std::make_shared<SymExpr>();
  e->op = Op::Symbol;
  e->symbol = std::move(name);
  return e;
}

std::string SymExpr::str() const {
  auto join = [&](const char* sep) {
    std::string s = "(";
    for (size_t i = 0; i < operands.size(); ++i) s += (i ? sep : "") + operands[i]->str();
    return s + ")";
  };
  switch (op) {
    case Op::Const:
      return std::to_string(value);
    case Op::Symbol:
      return symbol;
    case Op::Add:
      return join(" + ");
    case Op::Mul:
      return join("*");
    case Op::FloorDiv:
      return join(" // ");
    case Op::Mod:
      return join(" % ");
    case Op::Max:
      return "max" + join(", ");
    case Op::Min:
      return "min" + join(", ");
    case Op::Pow:
      return join("**");
  }
  return "?";
}

namespace {

// Recursive descent over srepr: Name '(' args ')' where args are expressions, quoted strings
// or keyword arguments (positive=True), which only Symbol has.
class Parser {
 public:
  Parser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  SymExprPtr parse() {
    SymExprPtr e = expr();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the expression");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw CompileError(what_ + ": symbolic size '" + std::string(s_) + "': " + why);
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string identifier() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    if (start == pos_) fail("expected a name");
    return std::string(s_.substr(start, pos_ - start));
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted name");
    const char q = s_[pos_++];
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) ++pos_;
    if (pos_ >= s_.size()) fail("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }
  int64_t integer() {
    skip_space();
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    const std::string digits(s_.substr(start, pos_ - start));
    if (digits.empty() || digits == "-" || digits.size() > 18) fail("bad integer '" + digits + "'");
    return std::stoll(digits);
  }

  SymExprPtr expr() {
    if (++depth_ > 64) fail("nested too deeply");
    const std::string name = identifier();
    expect('(');
    SymExprPtr out;
    if (name == "Integer") {
      out = SymExpr::constant(integer());
    } else if (name == "Symbol") {
      out = SymExpr::sym(quoted());
      while (eat(',')) {  // assumptions: positive=True, integer=True
        identifier();
        expect('=');
        identifier();
      }
    } else {
      static const std::pair<const char*, SymExpr::Op> kOps[] = {
          {"Add", SymExpr::Op::Add},           {"Mul", SymExpr::Op::Mul},
          {"FloorDiv", SymExpr::Op::FloorDiv}, {"Mod", SymExpr::Op::Mod},
          {"PythonMod", SymExpr::Op::Mod},     {"Max", SymExpr::Op::Max},
          {"Min", SymExpr::Op::Min},           {"Pow", SymExpr::Op::Pow},
      };
      const SymExpr::Op* op = nullptr;
      for (const auto& [n, o] : kOps) {
        if (name == n) op = &o;
      }
      if (op == nullptr)
        fail("'" + name + "' is not supported (pteron evaluates +, *, //, %, max, min)");
      auto e = std::make_shared<SymExpr>();
      e->op = *op;
      do {
        e->operands.push_back(expr());
      } while (eat(','));
      const bool binary =
          *op == SymExpr::Op::FloorDiv || *op == SymExpr::Op::Mod || *op == SymExpr::Op::Pow;
      if (binary ? e->operands.size() != 2 : e->operands.size() < 2)
        fail("'" + name + "' has " + std::to_string(e->operands.size()) + " operands");
      if (*op == SymExpr::Op::Pow && (!e->operands[1]->is_constant() || e->operands[1]->value < 0 ||
                                      e->operands[1]->value > 8))
        fail("Pow with an exponent other than a constant in [0, 8]");
      out = e;
    }
    expect(')');
    --depth_;
    return out;
  }

  std::string_view s_;
  const std::string& what_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// Sizes stay far below this; anything beyond is refused rather than risking overflow.
constexpr int64_t kLimit = int64_t{1} << 40;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

SymExprPtr parse_sym_expr(std::string_view text, const std::string& what) {
  return Parser(text, what).parse();
}

std::optional<AffineSymbol> affine_symbol(const SymExpr& e) {
  using Op = SymExpr::Op;
  int64_t offset = 0;
  const SymExpr* term = &e;
  if (e.op == Op::Add && e.operands.size() == 2) {
    const bool first_const = e.operands[0]->is_constant();
    if (first_const == e.operands[1]->is_constant()) return std::nullopt;
    offset = e.operands[first_const ? 0 : 1]->value;
    term = e.operands[first_const ? 1 : 0].get();
  }
  if (term->op == Op::Symbol) return AffineSymbol{term->symbol, 1, offset};
  if (term->op != Op::Mul || term->operands.size() != 2) return std::nullopt;
  const bool first_const = term->operands[0]->is_constant();
  const SymExpr& scale = *term->operands[first_const ? 0 : 1];
  const SymExpr& symbol = *term->operands[first_const ? 1 : 0];
  if (!scale.is_constant() || scale.value < 1 || symbol.op != Op::Symbol) return std::nullopt;
  return AffineSymbol{symbol.symbol, scale.value, offset};
}

bool is_bounded(const SymExpr& e, const SymbolTable& symbols) {
  if (e.op == SymExpr::Op::Symbol) {
    auto it = symbols.find(e.symbol);
    return it != symbols.end() && it->second.max >= 0;
  }
  for (const SymExprPtr& o : e.operands) {
    if (!is_bounded(*o, symbols)) return false;
  }
  return true;
}

SymBounds sym_bounds(const SymExpr& e, const SymbolTable& symbols, const std::string& what) {
  auto check = [&](SymBounds b) {
    if (b.lo < -kLimit || b.hi > kLimit)
      throw CompileError(what + ": symbolic size " + e.str() + " has bounds beyond 2^40");
    return b;
  };
  switch (e.op) {
    case SymExpr::Op::Const:
      return check({e.value, e.value});
    case SymExpr::Op::Symbol: {
      auto it = symbols.find(e.symbol);
      if (it == symbols.end())
        throw CompileError(what + ": symbol '" + e.symbol + "' has no range constraint");
      if (it->second.max < 0 && it->second.from_value)
        throw CompileError(what + ": symbol '" + e.symbol +
                           "' (a tensor's value, Tensor.item()) has no upper bound; "
                           "torch._check(" +
                           e.symbol + " <= N) in the model gives one");
      if (it->second.max < 0)
        throw CompileError(what + ": symbol '" + e.symbol +
                           "' has no upper bound; give its torch.export.Dim a max");
      return check({it->second.min, it->second.max});
    }
    default:
      break;
  }
  std::vector<SymBounds> b;
  for (const SymExprPtr& o : e.operands) b.push_back(sym_bounds(*o, symbols, what));
  SymBounds acc = b[0];
  for (size_t i = 1; i < b.size(); ++i) {
    const SymBounds x = b[i];
    switch (e.op) {
      case SymExpr::Op::Add:
        acc = check({acc.lo + x.lo, acc.hi + x.hi});
        break;
      case SymExpr::Op::Mul: {
        int64_t p[4];
        const int64_t a[] = {acc.lo, acc.lo, acc.hi, acc.hi}, c[] = {x.lo, x.hi, x.lo, x.hi};
        for (int k = 0; k < 4; ++k) {
          if (__builtin_mul_overflow(a[k], c[k], &p[k]))
            throw CompileError(what + ": symbolic size " + e.str() + " overflows");
        }
        acc = check({*std::min_element(p, p + 4), *std::max_element(p, p + 4)});
        break;
      }
      case SymExpr::Op::FloorDiv: {
        if (x.lo <= 0)
          throw CompileError(what + ": symbolic size " + e.str() +
                             " divides by a value that may be zero or negative");
        const int64_t p[] = {floor_div(acc.lo, x.lo), floor_div(acc.lo, x.hi),
                             floor_div(acc.hi, x.lo), floor_div(acc.hi, x.hi)};
        acc = check({*std::min_element(p, p + 4), *std::max_element(p, p + 4)});
        break;
      }
      case SymExpr::Op::Mod:
        // Only non-negative operands: C's % (ExecuTorch's mod) and Python's agree there.
        if (x.lo <= 0 || acc.lo < 0)
          throw CompileError(what + ": symbolic size " + e.str() +
                             " takes a remainder of values that may be negative or zero");
        acc = {0, std::min(acc.hi, x.hi - 1)};
        break;
      case SymExpr::Op::Max:
        acc = {std::max(acc.lo, x.lo), std::max(acc.hi, x.hi)};
        break;
      case SymExpr::Op::Min:
        acc = {std::min(acc.lo, x.lo), std::min(acc.hi, x.hi)};
        break;
      case SymExpr::Op::Pow: {
        if (acc.lo < 0)
          throw CompileError(what + ": symbolic size " + e.str() +
                             " raises a possibly negative value");
        SymBounds r{1, 1};
        for (int64_t k = 0; k < x.lo; ++k) {
          if (__builtin_mul_overflow(r.lo, acc.lo, &r.lo) ||
              __builtin_mul_overflow(r.hi, acc.hi, &r.hi))
            throw CompileError(what + ": symbolic size " + e.str() + " overflows");
        }
        acc = check(r);
        break;
      }
      default:
        break;
    }
  }
  return acc;
}

SymExprPtr fold_sym_expr(const SymExprPtr& e) {
  if (e->operands.empty()) return e;
  auto out = std::make_shared<SymExpr>(*e);
  bool all_constant = true;
  for (SymExprPtr& o : out->operands) {
    o = fold_sym_expr(o);
    all_constant = all_constant && o->is_constant();
  }
  if (!all_constant) return out;
  int64_t v = out->operands[0]->value;
  for (size_t i = 1; i < out->operands.size(); ++i) {
    const int64_t x = out->operands[i]->value;
    switch (out->op) {
      case SymExpr::Op::Add:
        if (__builtin_add_overflow(v, x, &v)) return out;
        break;
      case SymExpr::Op::Mul:
        if (__builtin_mul_overflow(v, x, &v)) return out;
        break;
      case SymExpr::Op::FloorDiv:
        if (x == 0) return out;  // left for sym_bounds to refuse
        v = floor_div(v, x);
        break;
      case SymExpr::Op::Mod:
        if (x == 0) return out;
        v = v - floor_div(v, x) * x;
        break;
      case SymExpr::Op::Max:
        v = std::max(v, x);
        break;
      case SymExpr::Op::Min:
        v = std::min(v, x);
        break;
      case SymExpr::Op::Pow: {
        int64_t r = 1;
        for (int64_t k = 0; k < x; ++k) {
          if (__builtin_mul_overflow(r, v, &r)) return out;
        }
        v = r;
        break;
      }
      default:
        break;
    }
  }
  return SymExpr::constant(v);
}

}  // namespace pteron::compiler::ir
