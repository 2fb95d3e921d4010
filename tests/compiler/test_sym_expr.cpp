// Symbolic sizes: torch's srepr text parsed, folded and bounded; what pteron cannot evaluate
// is refused with a CompileError naming the value.
#include <gtest/gtest.h>

#include "compiler/compile_error.h"
#include "compiler/ir/sym_expr.h"

namespace pteron::compiler::ir {
namespace {

const char* kTwoSMinusOne =
    "Add(Mul(Integer(2), Symbol('s0', positive=True, integer=True)), Integer(-1))";

SymbolTable symbols() { return {{"s0", {2, 64, 0, 1}}, {"s1", {1, 8, 0, 0}}}; }

TEST(SymExpr, ParsesTorchSreprAndBoundsIt) {
  SymExprPtr e = parse_sym_expr(kTwoSMinusOne, "t");
  EXPECT_EQ(e->str(), "((2*s0) + -1)");
  const SymBounds b = sym_bounds(*e, symbols(), "t");
  EXPECT_EQ(b.lo, 3);
  EXPECT_EQ(b.hi, 127);
}

// torch.export's derived dims as an input's size: the root symbol, its scale and offset.
TEST(SymExpr, AffineSymbolsOfDerivedDims) {
  auto affine = [](const char* text) { return affine_symbol(*parse_sym_expr(text, "t")); };
  const std::optional<AffineSymbol> two_s_minus_one = affine(kTwoSMinusOne);
  ASSERT_TRUE(two_s_minus_one.has_value());
  EXPECT_EQ(two_s_minus_one->symbol, "s0");
  EXPECT_EQ(two_s_minus_one->scale, 2);
  EXPECT_EQ(two_s_minus_one->offset, -1);
  const std::optional<AffineSymbol> whole = affine("Symbol('s1', integer=True)");
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->scale, 1);
  EXPECT_EQ(whole->offset, 0);
  const std::optional<AffineSymbol> times_32 =
      affine("Mul(Integer(32), Symbol('s1', integer=True))");
  ASSERT_TRUE(times_32.has_value());
  EXPECT_EQ(times_32->scale, 32);
  // Not one symbol's multiple: sizes of other forms give no symbol.
  EXPECT_FALSE(affine("Mul(Symbol('s0'), Symbol('s1'))").has_value());
  EXPECT_FALSE(affine("FloorDiv(Symbol('s0'), Integer(2))").has_value());
  EXPECT_FALSE(affine("Integer(7)").has_value());
  EXPECT_FALSE(affine("Add(Symbol('s0'), Symbol('s1'))").has_value());
}

TEST(SymExpr, FloorDivModMaxMinPow) {
  auto bounds = [](const char* text) {
    return sym_bounds(*parse_sym_expr(text, "t"), symbols(), "t");
  };
  const char* s0 = "Symbol('s0', positive=True, integer=True)";
  const char* s1 = "Symbol('s1', positive=True, integer=True)";
  SymBounds b = bounds((std::string("FloorDiv(") + s0 + ", Integer(3))").c_str());
  EXPECT_EQ(b.lo, 0);
  EXPECT_EQ(b.hi, 21);
  b = bounds((std::string("Mod(") + s0 + ", Integer(4))").c_str());
  EXPECT_EQ(b.lo, 0);
  EXPECT_EQ(b.hi, 3);
  b = bounds((std::string("Max(Integer(5), ") + s1 + ")").c_str());
  EXPECT_EQ(b.lo, 5);
  EXPECT_EQ(b.hi, 8);
  b = bounds((std::string("Min(Integer(5), ") + s1 + ")").c_str());
  EXPECT_EQ(b.lo, 1);
  EXPECT_EQ(b.hi, 5);
  b = bounds((std::string("Mul(Integer(3), Pow(") + s0 + ", Integer(2)))").c_str());
  EXPECT_EQ(b.lo, 12);
  EXPECT_EQ(b.hi, 3 * 64 * 64);
}

TEST(SymExpr, FoldsConstants) {
  SymExprPtr e =
      fold_sym_expr(parse_sym_expr("Add(Mul(Integer(2), Integer(3)), Integer(-1))", "t"));
  ASSERT_TRUE(e->is_constant());
  EXPECT_EQ(e->value, 5);
}

TEST(SymExpr, RefusesWhatItCannotEvaluate) {
  auto message = [](const char* text) {
    try {
      sym_bounds(*parse_sym_expr(text, "tensor 'x'"), symbols(), "tensor 'x'");
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("Symbol('s9')").find("symbol 's9' has no range constraint"), std::string::npos);
  EXPECT_NE(message("CeilToInt(Symbol('s0'))").find("'CeilToInt' is not supported"),
            std::string::npos);
  EXPECT_NE(message("FloorDiv(Integer(4), Add(Symbol('s0'), Integer(-2)))").find("may be zero"),
            std::string::npos);
  EXPECT_NE(message("Mul(Symbol('s0')").find("tensor 'x'"), std::string::npos);
  EXPECT_NE(message("Pow(Symbol('s0'), Integer(99))").find("exponent"), std::string::npos);
  SymbolTable unbounded = {{"s0", {2, -1, 0, 0}}};
  try {
    sym_bounds(*parse_sym_expr("Symbol('s0')", "t"), unbounded, "t");
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no upper bound"), std::string::npos);
  }
}

}  // namespace
}  // namespace pteron::compiler::ir
