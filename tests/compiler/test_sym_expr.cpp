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
