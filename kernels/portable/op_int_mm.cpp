// aten::_int_mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
// The integer matrix product torchao's Int8DynamicActivationInt8WeightConfig exports: self
// [M, K] int8 or uint8 (torchao shifts its activations by 128 into uint8), mat2 [K, N] int8 or
// uint8, out [M, N] int32, every product summed exactly (modulo 2^32, as torch's int32
// accumulator). Any strides: when mat2's columns are contiguous along K (a transposed weight,
// as torchao passes it) each output is a dot of two contiguous rows; when its rows are (the
// transpose folded into a constant) a multiple of each of its rows is added into the output
// row; both loops vectorise.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename A, typename B>
void int_mm(const Tensor& self, const Tensor& mat2, Tensor& out) {
  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  const A* a = self.data<const A>();
  const B* b = mat2.data<const B>();
  int32_t* c = out.data<int32_t>();
  const int64_t as0 = self.stride(0), as1 = self.stride(1), bs0 = mat2.stride(0),
                bs1 = mat2.stride(1), cs0 = out.stride(0), cs1 = out.stride(1);
  // Unsigned sums: wrapping is defined, and |a * b| <= 2^15 fits int32 before it.
  auto product = [](int32_t x, int32_t y) { return static_cast<uint32_t>(x * y); };
  for (int64_t i = 0; i < M; ++i) {
    int32_t* row = c + i * cs0;
    if (bs1 == 1 && cs1 == 1) {  // mat2's rows contiguous: row += a[i, k] * mat2[k, :]
      auto* sums = reinterpret_cast<uint32_t*>(row);
      for (int64_t j = 0; j < N; ++j) sums[j] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const int32_t x = a[i * as0 + k * as1];
        const B* bk = b + k * bs0;
        for (int64_t j = 0; j < N; ++j) sums[j] += product(x, bk[j]);
      }
      continue;
    }
    for (int64_t j = 0; j < N; ++j) {  // a dot product per output
      uint32_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += product(a[i * as0 + k * as1], b[k * bs0 + j * bs1]);
      row[j * cs1] = static_cast<int32_t>(sum);
    }
  }
}

bool is_byte(ScalarType t) { return t == ScalarType::Char || t == ScalarType::Byte; }

Error int_mm_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_int_mm.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& mat2 = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_rank(kOp, "self", self, 2));
  PTERON_TRY(expect_rank(kOp, "mat2", mat2, 2));
  PTERON_CHECK(is_byte(self.dtype()) && is_byte(mat2.dtype()), Error::NotSupported,
               "%s: int8 or uint8 operands expected, got %s and %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(mat2.dtype()));
  PTERON_CHECK(self.size(1) == mat2.size(0), Error::InvalidArgument,
               "%s: cannot multiply [%d, %d] by [%d, %d]", kOp, self.size(0), self.size(1),
               mat2.size(0), mat2.size(1));
  PTERON_TRY(expect_dtype(kOp, out, ScalarType::Int, "out"));
  const int32_t sizes[] = {self.size(0), mat2.size(1)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  const bool a_signed = self.dtype() == ScalarType::Char;
  const bool b_signed = mat2.dtype() == ScalarType::Char;
  if (a_signed && b_signed) int_mm<int8_t, int8_t>(self, mat2, out);
  if (a_signed && !b_signed) int_mm<int8_t, uint8_t>(self, mat2, out);
  if (!a_signed && b_signed) int_mm<uint8_t, int8_t>(self, mat2, out);
  if (!a_signed && !b_signed) int_mm<uint8_t, uint8_t>(self, mat2, out);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_int_mm.out", int_mm_out, "TTT");

}  // namespace pteron
