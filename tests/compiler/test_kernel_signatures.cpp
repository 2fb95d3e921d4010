// Every registered kernel (portable, optimized, cortex_m; aten::, pteron::, cortex_m::, llama::,
// executorch_prim::) declares the argument tags it reads (KernelEntry::signature, which
// call_kernel checks before each call), and the declaration agrees with the operator's schema:
// one check_args letter per argument of the out variant, in order (for an op without one, e.g.
// a prim op: its arguments, then its returns), each the letter of the schema type. A kernel
// declaring less would read an unchecked union; declaring more, it would refuse a program torch
// and the compiler consider valid.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/attention_kv.h"
#include "compiler/passes/fuse_attention.h"
#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/passes/fuse_linear_relu.h"
#include "compiler/passes/fuse_rms_norm.h"
#include "compiler/passes/fuse_silu_mul.h"
#include "compiler/passes/quantized_linear.h"
#include "compiler/passes/winograd_conv.h"
#include "kernels/cortex_m/aot/cortex_m_schemas.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

// The schemas that are not in op_schemas.inc: the cortex_m:: ops and the pteron:: ops the
// optimized library's passes write (each registered on first use).
void register_library_schemas() {
  cortex_m::aot::register_cortex_m_schemas();
  sdpa_schema();
  sdpa_kv_schema();
  linear_relu_schema();
  convolution_relu_schema();
  convolution_add_relu_schema();
  convolution_clamp_schema();
  convolution_silu_schema();
  convolution_hardswish_schema();
  convolution_scaled_schema();
  rms_norm_schema();
  silu_mul_schema();
  conv2d_winograd_schema();
  linear_q8w_schema();
  linear_q4w_schema();
  linear_8da4w_schema();
  linear_8da8w_schema();
  grouped_mm_weight_only_schema(false);
  grouped_mm_weight_only_schema(true);
  grouped_mm_8da4w_schema();
  embedding_quantized_schema(false);
  embedding_quantized_schema(true);
}

// check_args's letter for a schema type ('*' where it has none: str, Device, float[], bool?).
char tag_letter(const ir::ArgType& t) {
  if (t.is_list) {
    if (t.base == ir::BaseType::Int) return t.optional ? 'l' : 'L';
    if (t.base == ir::BaseType::Tensor && !t.optional) return t.elem_optional ? 'O' : 'A';
    return '*';
  }
  char c = '*';
  switch (t.base) {
    case ir::BaseType::Tensor:
      c = 'T';
      break;
    case ir::BaseType::Scalar:
      c = 'S';
      break;
    case ir::BaseType::Int:
    case ir::BaseType::ScalarType:
    case ir::BaseType::MemoryFormat:
    case ir::BaseType::Layout:
      c = 'I';
      break;
    case ir::BaseType::Float:
      c = 'D';
      break;
    case ir::BaseType::Bool:
      return t.optional ? '*' : 'B';
    default:
      return '*';
  }
  return t.optional ? static_cast<char>(std::tolower(c)) : c;
}

// Kernels that take two schemas' forms of an op: their declaration has '*' where the forms
// differ (the kernel checks which it got), and each form's letter elsewhere.
struct TwoForms {
  const char* op;
  const char* other_form;  // the signature of the form the table does not hold
  const char* why;
};
constexpr TwoForms kTwoForms[] = {
    {"cortex_m::quantized_linear.out", "TTttIIILLIIT",
     "ExecuTorch's cortex_m schema passes requantize_multipliers and requantize_shifts as int[], "
     "pteron's (cortex_m_schemas.cpp) as int32 tensors"},
};

// '*' wherever two signatures of the same length differ.
std::string merge(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a;
  std::string m = a;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) m[i] = '*';
  }
  return m;
}

// What a kernel registered as `name` should declare, from its schema.
std::string expected_signature(const ir::OpSchema& s) {
  std::string sig;
  for (const ir::ArgSchema& a : s.args) sig += tag_letter(a.type);
  if (!s.is_out_variant) {
    for (const ir::ReturnSchema& r : s.returns) sig += tag_letter(r.type);
  }
  return sig;
}

TEST(KernelSignatures, EveryKernelDeclaresItsSchemasArguments) {
  register_library_schemas();
  const ir::OpSchemaRegistry& schemas = ir::OpSchemaRegistry::global();
  std::vector<std::string> wrong;
  size_t checked = 0;
  for (const KernelEntry& e : registered_kernels()) {
    const std::string where = std::string(e.name) + " (" + e.library + ")";
    if (e.signature == nullptr) {
      wrong.push_back(where + ": no signature");
      continue;
    }
    const ir::OpSchema* s = schemas.find(ir::OpRef::parse(e.name));
    if (s == nullptr) {
      wrong.push_back(where +
                      ": no schema (op_schemas.inc, cortex_m_schemas.cpp or the pass "
                      "that writes the op, registered above)");
      continue;
    }
    std::string want = expected_signature(*s);
    for (const TwoForms& f : kTwoForms) {
      if (std::string(e.name) == f.op) want = merge(want, f.other_form);
    }
    if (want != e.signature) {
      wrong.push_back(where + ": declares \"" + e.signature + "\", the schema gives \"" + want +
                      "\" (" + s->text + ")");
    }
    ++checked;
  }
  std::string all;
  for (const std::string& w : wrong) all += "\n  " + w;
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " kernel(s) disagree with their schema:" << all;
  // portable (~300 kernels) and cortex_m, and optimized where built, are linked into this test.
  EXPECT_GT(checked, 300u);
}

TEST(KernelSignatures, EveryLibraryDeclaresTheSameForAnOp) {
  // An optimized kernel hands calls it has no fast path for to the portable one with the same
  // arguments, so both must accept exactly the same.
  std::map<std::string, std::pair<std::string, std::string>> first;  // name -> (library, sig)
  size_t shared = 0;
  for (const KernelEntry& e : registered_kernels()) {
    auto [it, inserted] = first.try_emplace(e.name, e.library, e.signature ? e.signature : "");
    if (inserted) continue;
    ++shared;
    EXPECT_EQ(it->second.second, e.signature ? e.signature : "")
        << e.name << ": " << it->second.first << " and " << e.library << " declare different tags";
  }
  EXPECT_GT(shared, 20u);
}

// call_kernel checks the declaration before the kernel reads anything.
TEST(KernelSignatures, CallKernelRefusesArgumentsOfTheWrongKind) {
  const KernelEntry* add = find_kernel("aten::add", "out");
  ASSERT_NE(add, nullptr);
  EValue a = EValue::from_int(1), b = EValue::from_int(2), alpha = EValue::from_int(1),
         out = EValue::from_int(0);
  EValue* args[] = {&a, &b, &alpha, &out};
  KernelContext ctx;
  clear_error_message();
  EXPECT_EQ(call_kernel(*add, ctx, Span<EValue*>(args, 4)), Error::InvalidProgram);
  EXPECT_NE(
      std::string(last_error_message()).find("aten::add.out argument 0: expected 'T', got Int"),
      std::string::npos)
      << last_error_message();
  clear_error_message();
  EXPECT_EQ(call_kernel(*add, ctx, Span<EValue*>(args, 2)), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("takes 4 arguments, the program passes 2"),
            std::string::npos)
      << last_error_message();
}

}  // namespace
}  // namespace pteron::compiler
