// The optimized non-GEMM operators without torch (plain gtest, so cross builds run them under
// emulation): each against the portable kernel of the same name through the registry, on the
// fast path and on inputs it hands to the portable kernel, and pteron::sdpa (which has no
// portable kernel) against a double-precision reference. Tolerances: elementwise, transposes
// and gathers exact or 1e-6 relative; gelu 3e-6; softmax and layer norm 1e-5; attention 2e-6
// absolute on values of order 1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/util/winograd.h"
#include "runtime/core/error.h"
#include "runtime/kernel/kernel.h"
#include "runtime/threads/threadpool.h"
#include "tests/kernels/optimized/attention_reference.h"

namespace pteron {
namespace {

const KernelEntry* kernel_in(const char* name, const char* library) {
  for (const KernelEntry& e : registered_kernels())
    if (std::strcmp(e.name, name) == 0 && std::strcmp(e.library, library) == 0) return &e;
  return nullptr;
}

// A tensor owning its storage; strides given or row-major.
struct Owned {
  std::vector<int32_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  std::vector<int64_t> storage;  // 8-byte elements: room for any dtype
  Tensor tensor;

  Owned(ScalarType dtype, std::vector<int32_t> shape, std::vector<uint8_t> order = {})
      : sizes(std::move(shape)), dim_order(std::move(order)) {
    const int32_t dim = static_cast<int32_t>(sizes.size());
    if (dim_order.empty()) {
      for (int32_t d = 0; d < dim; ++d) dim_order.push_back(static_cast<uint8_t>(d));
    }
    strides.assign(sizes.size(), 1);
    int64_t numel = 1;
    for (int32_t i = dim - 1; i >= 0; --i) {
      strides[dim_order[i]] = static_cast<int32_t>(numel);
      numel *= sizes[dim_order[i]];
    }
    storage.assign(static_cast<size_t>(numel) + 1, 0);
    tensor = Tensor(dtype, dim, sizes.data(), dim_order.data(), strides.data(), storage.data());
  }
  float* f() { return tensor.data<float>(); }
  void fill(uint32_t seed, float scale = 1.0f) {
    const auto v = random_floats(tensor.numel(), seed, scale);
    std::memcpy(f(), v.data(), v.size() * sizeof(float));
  }
};

// Runs `op` from `library` on `args` (out tensors included); returns the error.
Error run(const char* op, const char* library, std::vector<EValue> args) {
  const KernelEntry* fn = kernel_in(op, library);
  EXPECT_NE(fn, nullptr) << op << " in " << library;
  if (fn == nullptr) return Error::NotFound;
  std::vector<EValue*> ptrs;
  for (EValue& v : args) ptrs.push_back(&v);
  static std::vector<uint8_t> scratch(8u << 20);
  MemoryAllocator allocator(scratch.data(), scratch.size());
  KernelContext ctx{&allocator};
  return call_kernel(*fn, ctx, Span<EValue*>(ptrs.data(), ptrs.size()));
}

EValue T(Owned& t) { return EValue::from_tensor(&t.tensor); }

EValue int_list(const int64_t* v, size_t n) {
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(v, n);
  return e;
}

EValue string_value(const char* s) {
  EValue e;
  e.tag = Tag::String;
  e.string = Span<const char>(s, std::strlen(s));
  return e;
}

void expect_same(Owned& a, Owned& b, double tol, const std::string& what) {
  ASSERT_EQ(a.tensor.numel(), b.tensor.numel()) << what;
  for (int64_t i = 0; i < a.tensor.numel(); ++i) {
    const float x = a.f()[i], y = b.f()[i];
    if (std::isnan(y) || std::isinf(y)) {
      ASSERT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << what << " at " << i;
    } else {
      ASSERT_NEAR(x, y, tol * (1 + std::fabs(y))) << what << " at " << i;
    }
  }
}

TEST(OptimizedOps, BinaryBroadcastMatchesPortable) {
  struct Case {
    std::vector<int32_t> a, b, out;
  };
  const Case cases[] = {{{4, 33}, {4, 33}, {4, 33}},
                        {{2, 3, 37}, {37}, {2, 3, 37}},
                        {{5, 1, 7}, {1, 6, 1}, {5, 6, 7}},
                        {{1, 4, 16, 16}, {1, 1, 16, 16}, {1, 4, 16, 16}},
                        {{3}, {}, {3}}};
  const char* ops[] = {"aten::add.out", "aten::sub.out", "aten::mul.out", "aten::div.out"};
  for (const Case& c : cases) {
    Owned a(ScalarType::Float, c.a), b(ScalarType::Float, c.b);
    a.fill(1);
    b.fill(2);
    for (int64_t i = 0; i < b.tensor.numel(); ++i) b.f()[i] = std::fabs(b.f()[i]) + 0.5f;
    for (const char* op : ops) {
      Owned o1(ScalarType::Float, c.out), o2(ScalarType::Float, c.out);
      const bool alpha = std::string(op).find("add") != std::string::npos ||
                         std::string(op).find("sub") != std::string::npos;
      auto args = [&](Owned& out) {
        std::vector<EValue> v = {T(a), T(b)};
        if (alpha) v.push_back(EValue::from_double(0.5));
        v.push_back(T(out));
        return v;
      };
      ASSERT_EQ(run(op, "portable", args(o1)), Error::Ok) << op;
      ASSERT_EQ(run(op, "optimized", args(o2)), Error::Ok) << op << ": " << last_error_message();
      expect_same(o2, o1, 1e-6, op);
    }
  }
}

TEST(OptimizedOps, ChannelsLastInputsAndScalarForms) {
  Owned a(ScalarType::Float, {2, 3, 4, 5}, {0, 2, 3, 1}), b(ScalarType::Float, {2, 3, 4, 5});
  a.fill(3);
  b.fill(4);
  Owned o1(ScalarType::Float, {2, 3, 4, 5}), o2(ScalarType::Float, {2, 3, 4, 5});
  ASSERT_EQ(run("aten::mul.out", "portable", {T(a), T(b), T(o1)}), Error::Ok);
  ASSERT_EQ(run("aten::mul.out", "optimized", {T(a), T(b), T(o2)}), Error::Ok);
  expect_same(o2, o1, 1e-6, "channels-last mul");
  Owned s1(ScalarType::Float, {2, 3, 4, 5}), s2(ScalarType::Float, {2, 3, 4, 5});
  for (const char* op : {"aten::sub.Scalar_out", "aten::add.Scalar_out"}) {
    ASSERT_EQ(
        run(op, "portable", {T(b), EValue::from_double(1.5), EValue::from_double(2.0), T(s1)}),
        Error::Ok);
    ASSERT_EQ(
        run(op, "optimized", {T(b), EValue::from_double(1.5), EValue::from_double(2.0), T(s2)}),
        Error::Ok);
    expect_same(s2, s1, 1e-6, op);
  }
}

TEST(OptimizedOps, LayerNormGeluSoftmaxMatchPortable) {
  Owned x(ScalarType::Float, {3, 5, 96}), w(ScalarType::Float, {96}), b(ScalarType::Float, {96});
  x.fill(5, 4.0f);
  w.fill(6);
  b.fill(7);
  const int64_t norm[] = {96};
  Owned y1(ScalarType::Float, {3, 5, 96}), m1(ScalarType::Float, {3, 5, 1}),
      r1(ScalarType::Float, {3, 5, 1});
  Owned y2(ScalarType::Float, {3, 5, 96}), m2(ScalarType::Float, {3, 5, 1}),
      r2(ScalarType::Float, {3, 5, 1});
  const EValue shape = int_list(norm, 1);
  ASSERT_EQ(run("aten::native_layer_norm.out", "portable",
                {T(x), shape, T(w), T(b), EValue::from_double(1e-5), T(y1), T(m1), T(r1)}),
            Error::Ok);
  ASSERT_EQ(run("aten::native_layer_norm.out", "optimized",
                {T(x), shape, T(w), T(b), EValue::from_double(1e-5), T(y2), T(m2), T(r2)}),
            Error::Ok);
  expect_same(y2, y1, 1e-5, "layer_norm");
  expect_same(r2, r1, 1e-5, "layer_norm rstd");

  for (const char* form : {"none", "tanh"}) {
    Owned g1(ScalarType::Float, {3, 5, 96}), g2(ScalarType::Float, {3, 5, 96});
    const EValue approx = string_value(form);
    ASSERT_EQ(run("aten::gelu.out", "portable", {T(x), approx, T(g1)}), Error::Ok);
    ASSERT_EQ(run("aten::gelu.out", "optimized", {T(x), approx, T(g2)}), Error::Ok);
    expect_same(g2, g1, 3e-6, std::string("gelu ") + form);
  }
  for (const char* op : {"aten::_softmax.out", "aten::_log_softmax.out"}) {
    for (int64_t dim : {int64_t{-1}, int64_t{1}}) {  // dim 1: handed to the portable kernel
      Owned s1(ScalarType::Float, {3, 5, 96}), s2(ScalarType::Float, {3, 5, 96});
      ASSERT_EQ(run(op, "portable", {T(x), EValue::from_int(dim), EValue::from_bool(false), T(s1)}),
                Error::Ok);
      ASSERT_EQ(
          run(op, "optimized", {T(x), EValue::from_int(dim), EValue::from_bool(false), T(s2)}),
          Error::Ok);
      expect_same(s2, s1, 1e-5, op);
    }
  }
}

TEST(OptimizedOps, PermuteAndEmbeddingMatchPortable) {
  Owned x(ScalarType::Float, {2, 19, 3, 37});
  x.fill(8);
  const std::vector<std::vector<int64_t>> perms = {
      {0, 2, 1, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {3, 2, 1, 0}};
  for (const auto& p : perms) {
    std::vector<int32_t> shape;
    for (int64_t d : p) shape.push_back(x.sizes[static_cast<size_t>(d)]);
    Owned o1(ScalarType::Float, shape), o2(ScalarType::Float, shape);
    const EValue dims = int_list(p.data(), p.size());
    ASSERT_EQ(run("aten::permute_copy.out", "portable", {T(x), dims, T(o1)}), Error::Ok);
    ASSERT_EQ(run("aten::permute_copy.out", "optimized", {T(x), dims, T(o2)}), Error::Ok);
    expect_same(o2, o1, 0, "permute");
  }
  Owned w(ScalarType::Float, {50, 24}), idx(ScalarType::Long, {2, 7});
  w.fill(9);
  for (int64_t i = 0; i < 14; ++i) idx.tensor.data<int64_t>()[i] = (i * 7) % 50;
  Owned e1(ScalarType::Float, {2, 7, 24}), e2(ScalarType::Float, {2, 7, 24});
  auto args = [&](Owned& out) {
    return std::vector<EValue>{
        T(w),  T(idx), EValue::from_int(-1), EValue::from_bool(false), EValue::from_bool(false),
        T(out)};
  };
  ASSERT_EQ(run("aten::embedding.out", "portable", args(e1)), Error::Ok);
  ASSERT_EQ(run("aten::embedding.out", "optimized", args(e2)), Error::Ok);
  expect_same(e2, e1, 0, "embedding");
  idx.tensor.data<int64_t>()[3] = 50;  // out of range: an error naming the op, no crash
  EXPECT_NE(run("aten::embedding.out", "optimized", args(e2)), Error::Ok);
  EXPECT_NE(std::string(last_error_message()).find("embedding"), std::string::npos);
}

TEST(OptimizedOps, SdpaMatchesReferenceAndRejectsBadShapes) {
  const int64_t N = 6, heads = 3, lq = 20, lk = 70, d = 16, dv = 24;
  Owned q(ScalarType::Float, {N, lq, d}), kt(ScalarType::Float, {N, d, lk}),
      v(ScalarType::Float, {N, lk, dv});
  q.fill(10);
  kt.fill(11);
  v.fill(12);
  Owned mask(ScalarType::Float, {1, 1, lq, lk});
  for (int64_t i = 0; i < lq; ++i)
    for (int64_t j = 0; j < lk; ++j) mask.f()[i * lk + j] = j > i + 40 ? -INFINITY : 0.0f;
  Owned out(ScalarType::Float, {N, lq, dv});
  ASSERT_EQ(run("pteron::sdpa.out", "optimized",
                {T(q), T(kt), T(v), T(mask), EValue::from_double(0.25), EValue::from_int(heads),
                 EValue::from_bool(false), T(out)}),
            Error::Ok)
      << last_error_message();
  for (int64_t n = 0; n < N; ++n) {
    std::vector<float> qn(q.f() + n * lq * d, q.f() + (n + 1) * lq * d);
    std::vector<float> kn(kt.f() + n * d * lk, kt.f() + (n + 1) * d * lk);
    std::vector<float> vn(v.f() + n * lk * dv, v.f() + (n + 1) * lk * dv);
    const auto ref = attention_reference(qn, kn, vn, mask.f(), nullptr, 0.25f, lq, lk, d, dv);
    for (int64_t i = 0; i < lq * dv; ++i) {
      ASSERT_NEAR(out.f()[n * lq * dv + i], ref[i], 2e-6 * (1 + std::fabs(ref[i])))
          << n << "," << i;
    }
  }
  Owned bad(ScalarType::Float, {N, d + 1, lk});
  EXPECT_EQ(run("pteron::sdpa.out", "optimized",
                {T(q), T(bad), T(v), EValue(), EValue::from_double(0.25), EValue::from_int(heads),
                 EValue::from_bool(false), T(out)}),
            Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("pteron::sdpa.out"), std::string::npos);
  EXPECT_EQ(run("pteron::sdpa.out", "optimized",
                {T(q), T(kt), T(v), T(mask), EValue::from_double(0.25), EValue::from_int(4),
                 EValue::from_bool(false), T(out)}),
            Error::InvalidArgument);  // 4 heads do not divide 6
}

// Convolution (the SGEMM path: direct, transposed for few pixels, pointwise, strided, padded,
// dilated, several im2col blocks) and the fused conv + ReLU against the portable convolution;
// depthwise ones the row loop, other grouped ones the portable kernel inside the optimized one.
// 1e-5 relative (sums of up to 1152 products in another order).
TEST(OptimizedOps, ConvolutionMatchesPortable) {
  struct Case {
    int32_t n, cin, h, w, cout, k, stride, pad, dil, groups;
    bool bias;
  };
  const Case cases[] = {
      {1, 3, 17, 19, 8, 1, 1, 0, 1, 1, true},    {2, 5, 9, 11, 7, 1, 2, 0, 1, 1, false},
      {1, 4, 13, 13, 16, 3, 1, 1, 1, 1, true},   {2, 6, 15, 10, 9, 3, 2, 1, 1, 1, true},
      {1, 3, 20, 18, 12, 7, 2, 3, 1, 1, true},   {1, 2, 12, 14, 3, 3, 1, 2, 2, 1, true},
      {2, 32, 7, 7, 96, 3, 1, 1, 1, 1, true},    {1, 40, 5, 5, 64, 1, 1, 0, 1, 1, false},
      {1, 128, 20, 20, 16, 3, 1, 1, 1, 1, true}, {1, 8, 9, 9, 8, 3, 1, 1, 1, 4, true},
      {2, 8, 10, 11, 8, 3, 2, 1, 1, 8, true},    {1, 6, 12, 12, 6, 5, 1, 2, 1, 6, false},
  };
  for (const Case& c : cases) {
    const int32_t oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int32_t ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    Owned x(ScalarType::Float, {c.n, c.cin, c.h, c.w});
    Owned wt(ScalarType::Float, {c.cout, c.cin / c.groups, c.k, c.k});
    Owned b(ScalarType::Float, {c.cout});
    x.fill(11);
    wt.fill(12);
    b.fill(13);
    const int64_t stride[] = {c.stride, c.stride}, pad[] = {c.pad, c.pad};
    const int64_t dil[] = {c.dil, c.dil}, out_pad[] = {0, 0};
    for (const char* op : {"aten::convolution.out", "pteron::convolution_relu.out"}) {
      const bool relu = std::string(op).find("relu") != std::string::npos;
      Owned o1(ScalarType::Float, {c.n, c.cout, oh, ow}),
          o2(ScalarType::Float, {c.n, c.cout, oh, ow});
      auto args = [&](Owned& out) {
        return std::vector<EValue>{T(x),
                                   c.bias ? T(b) : EValue(),
                                   int_list(stride, 2),
                                   int_list(pad, 2),
                                   int_list(dil, 2),
                                   EValue::from_bool(false),
                                   int_list(out_pad, 2),
                                   EValue::from_int(c.groups),
                                   T(out)};
      };
      std::vector<EValue> a1 = args(o1), a2 = args(o2);
      a1.insert(a1.begin() + 1, T(wt));
      a2.insert(a2.begin() + 1, T(wt));
      ASSERT_EQ(run("aten::convolution.out", "portable", a1), Error::Ok) << last_error_message();
      if (relu) {
        for (int64_t i = 0; i < o1.tensor.numel(); ++i) o1.f()[i] = std::fmax(o1.f()[i], 0.0f);
      }
      ASSERT_EQ(run(op, "optimized", a2), Error::Ok) << op << ": " << last_error_message();
      expect_same(o2, o1, 1e-5,
                  std::string(op) + " k" + std::to_string(c.k) + " cin" + std::to_string(c.cin) +
                      " cout" + std::to_string(c.cout));
    }
  }
}

// Winograd F(4x4, 3x3) (util/winograd.h, called directly so every case takes it whatever the
// op's size rule says; NEON under qemu-aarch64) against the portable convolution: odd sizes,
// sizes not multiple of 4, padding 0/1/2, channels 1..67 (vector remainders), batch 2, bias,
// ReLU, weights transformed per call or beforehand. Tolerance: 2e-5 x max|portable| (the
// transforms' constants, up to 8 and 1/24, scale fp32 rounding; measured <= 1e-5).
TEST(OptimizedOps, WinogradMatchesPortable) {
  struct Case {
    int32_t n, cin, h, w, cout, pad;
    bool bias, relu;
  };
  const Case cases[] = {
      {1, 1, 6, 6, 1, 1, false, false},    {2, 3, 9, 11, 5, 0, true, false},
      {1, 16, 13, 7, 17, 1, true, true},   {2, 67, 10, 15, 33, 2, false, true},
      {1, 20, 31, 29, 67, 1, true, false},
  };
  for (const Case& c : cases) {
    const int32_t oh = c.h + 2 * c.pad - 2, ow = c.w + 2 * c.pad - 2;
    Owned x(ScalarType::Float, {c.n, c.cin, c.h, c.w});
    Owned wt(ScalarType::Float, {c.cout, c.cin, 3, 3});
    Owned b(ScalarType::Float, {c.cout});
    x.fill(21);
    wt.fill(22);
    b.fill(23);
    const int64_t one[] = {1, 1}, pad[] = {c.pad, c.pad}, out_pad[] = {0, 0};
    Owned ref(ScalarType::Float, {c.n, c.cout, oh, ow});
    ASSERT_EQ(run("aten::convolution.out", "portable",
                  {T(x), T(wt), c.bias ? T(b) : EValue(), int_list(one, 2), int_list(pad, 2),
                   int_list(one, 2), EValue::from_bool(false), int_list(out_pad, 2),
                   EValue::from_int(1), T(ref)}),
              Error::Ok)
        << last_error_message();
    float peak = 0.0f;
    for (int64_t i = 0; i < ref.tensor.numel(); ++i) {
      if (c.relu) ref.f()[i] = std::fmax(ref.f()[i], 0.0f);
      peak = std::fmax(peak, std::fabs(ref.f()[i]));
    }
    ConvShape s;
    s.batch = c.n;
    s.in_channels = c.cin;
    s.in_h = c.h;
    s.in_w = c.w;
    s.out_channels = c.cout;
    s.kernel_h = s.kernel_w = 3;
    s.out_h = oh;
    s.out_w = ow;
    s.pad_h = s.pad_w = c.pad;
    ASSERT_TRUE(optimized::winograd_supported(s));
    std::vector<float> u(static_cast<size_t>(optimized::winograd_weight_floats(c.cin, c.cout)));
    optimized::winograd_transform_weights(wt.f(), c.cin, c.cout, u.data());
    const float* pretransformed[] = {nullptr, u.data()};
    for (const float* pre : pretransformed) {
      Owned out(ScalarType::Float, {c.n, c.cout, oh, ow});
      static std::vector<uint8_t> scratch(16u << 20);
      MemoryAllocator allocator(scratch.data(), scratch.size());
      KernelContext ctx{&allocator};
      ASSERT_TRUE(optimized::winograd_conv(ctx, s, x.f(), wt.f(), pre, c.bias ? b.f() : nullptr,
                                           nullptr, out.f(), c.relu));
      for (int64_t i = 0; i < ref.tensor.numel(); ++i) {
        ASSERT_NEAR(out.f()[i], ref.f()[i], 2e-5 * peak)
            << "cin" << c.cin << " cout" << c.cout << " " << c.h << "x" << c.w << " pad" << c.pad
            << (pre ? " pretransformed" : "") << " at " << i;
      }
    }
  }
}

// pteron::convolution_add_relu (resnet's block ending) against the portable convolution, + other,
// ReLU: the direct form (other written into C first) and the transposed one (added as the
// result is transposed).
TEST(OptimizedOps, ConvolutionAddReluMatchesPortable) {
  for (int32_t cout : {6, 48}) {  // 49 pixels: 6 channels direct, 48 transposed
    Owned x(ScalarType::Float, {2, 5, 7, 7}), wt(ScalarType::Float, {cout, 5, 3, 3});
    Owned b(ScalarType::Float, {cout}), other(ScalarType::Float, {2, cout, 7, 7});
    x.fill(31);
    wt.fill(32);
    b.fill(33);
    other.fill(34);
    const int64_t one[] = {1, 1}, zero[] = {0, 0};
    Owned ref(ScalarType::Float, {2, cout, 7, 7}), out(ScalarType::Float, {2, cout, 7, 7});
    ASSERT_EQ(run("aten::convolution.out", "portable",
                  {T(x), T(wt), T(b), int_list(one, 2), int_list(one, 2), int_list(one, 2),
                   EValue::from_bool(false), int_list(zero, 2), EValue::from_int(1), T(ref)}),
              Error::Ok);
    for (int64_t i = 0; i < ref.tensor.numel(); ++i) {
      ref.f()[i] = std::fmax(ref.f()[i] + other.f()[i], 0.0f);
    }
    ASSERT_EQ(
        run("pteron::convolution_add_relu.out", "optimized",
            {T(x), T(wt), T(b), int_list(one, 2), int_list(one, 2), int_list(one, 2),
             EValue::from_bool(false), int_list(zero, 2), EValue::from_int(1), T(other), T(out)}),
        Error::Ok)
        << last_error_message();
    expect_same(out, ref, 1e-5, "convolution_add_relu cout " + std::to_string(cout));
  }
}

// Without scratch (a context with none, and one too small for the SGEMM's packing) the
// optimized convolution runs the portable kernel and still matches it.
TEST(OptimizedOps, ConvolutionWithoutScratchFallsBack) {
  Owned x(ScalarType::Float, {1, 16, 12, 12}), wt(ScalarType::Float, {24, 16, 3, 3});
  Owned b(ScalarType::Float, {24});
  x.fill(21);
  wt.fill(22);
  b.fill(23);
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  auto args = [&](Owned& out) {
    return std::vector<EValue>{T(x),
                               T(wt),
                               T(b),
                               int_list(one, 2),
                               int_list(one, 2),
                               int_list(one, 2),
                               EValue::from_bool(false),
                               int_list(zero, 2),
                               EValue::from_int(1),
                               T(out)};
  };
  Owned ref(ScalarType::Float, {1, 24, 12, 12});
  ASSERT_EQ(run("aten::convolution.out", "portable", args(ref)), Error::Ok);
  const KernelEntry* fn = kernel_in("aten::convolution.out", "optimized");
  ASSERT_NE(fn, nullptr);
  for (size_t bytes : {size_t{0}, size_t{256}}) {
    Owned out(ScalarType::Float, {1, 24, 12, 12});
    std::vector<EValue> values = args(out);
    std::vector<EValue*> ptrs;
    for (EValue& v : values) ptrs.push_back(&v);
    std::vector<uint8_t> scratch(bytes + 1);
    MemoryAllocator allocator(scratch.data(), bytes);
    KernelContext ctx{bytes == 0 ? nullptr : &allocator};
    ASSERT_EQ(call_kernel(*fn, ctx, Span<EValue*>(ptrs.data(), ptrs.size())), Error::Ok)
        << last_error_message();
    expect_same(out, ref, 1e-5, "convolution with " + std::to_string(bytes) + " bytes of scratch");
  }
}

// A grouped convolution runs an SGEMM per group and gives each one's scratch back before the
// next: its peak scratch is one group's (an ungrouped convolution of one group's shape), not the
// sum over its 8 groups; the result is the portable kernel's.
TEST(OptimizedOps, GroupedConvolutionReusesOneGroupsScratch) {
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  auto peak = [&](int32_t channels, int32_t groups, bool compare) {
    Owned x(ScalarType::Float, {1, channels, 20, 20});
    Owned wt(ScalarType::Float, {channels, channels / groups, 3, 3});
    Owned out(ScalarType::Float, {1, channels, 20, 20});
    x.fill(31);
    wt.fill(32);
    std::vector<EValue> values = {T(x),
                                  T(wt),
                                  EValue(),
                                  int_list(one, 2),
                                  int_list(one, 2),
                                  int_list(one, 2),
                                  EValue::from_bool(false),
                                  int_list(zero, 2),
                                  EValue::from_int(groups),
                                  T(out)};
    std::vector<EValue*> ptrs;
    for (EValue& v : values) ptrs.push_back(&v);
    std::vector<uint8_t> scratch(8u << 20);
    MemoryAllocator allocator(scratch.data(), scratch.size());
    KernelContext ctx{&allocator};
    const KernelEntry* fn = kernel_in("aten::convolution.out", "optimized");
    EXPECT_EQ(call_kernel(*fn, ctx, Span<EValue*>(ptrs.data(), ptrs.size())), Error::Ok)
        << last_error_message();
    if (compare) {
      Owned ref(ScalarType::Float, {1, channels, 20, 20});
      values.back() = T(ref);
      EXPECT_EQ(run("aten::convolution.out", "portable", values), Error::Ok);
      expect_same(out, ref, 1e-5, "grouped convolution");
    }
    return allocator.peak();
  };
  const size_t grouped = peak(64, 8, /*compare=*/true);
  const size_t one_group = peak(8, 1, /*compare=*/false);
  EXPECT_GT(grouped, 0u);
  EXPECT_LE(grouped, one_group + 256) << "one group's scratch, given back before the next";
}

// Max pool values and indices exactly as the portable kernel's (stride 2 and 1, padding,
// dilation).
TEST(OptimizedOps, MaxPoolMatchesPortable) {
  struct Case {
    int32_t h, w, k, stride, pad, dil;
  };
  for (const Case& c : {Case{15, 17, 3, 2, 1, 1}, Case{9, 10, 2, 2, 0, 1}, Case{13, 11, 3, 1, 1, 2},
                        Case{12, 12, 3, 3, 1, 1}}) {
    const int32_t oh = (c.h + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    const int32_t ow = (c.w + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
    Owned x(ScalarType::Float, {2, 3, c.h, c.w});
    x.fill(14);
    x.f()[5] = NAN;
    const int64_t k[] = {c.k, c.k}, st[] = {c.stride, c.stride}, pad[] = {c.pad, c.pad};
    const int64_t dil[] = {c.dil, c.dil};
    Owned o1(ScalarType::Float, {2, 3, oh, ow}), o2(ScalarType::Float, {2, 3, oh, ow});
    Owned i1(ScalarType::Long, {2, 3, oh, ow}), i2(ScalarType::Long, {2, 3, oh, ow});
    auto args = [&](Owned& out, Owned& idx) {
      return std::vector<EValue>{T(x),
                                 int_list(k, 2),
                                 int_list(st, 2),
                                 int_list(pad, 2),
                                 int_list(dil, 2),
                                 EValue::from_bool(false),
                                 T(out),
                                 T(idx)};
    };
    ASSERT_EQ(run("aten::max_pool2d_with_indices.out", "portable", args(o1, i1)), Error::Ok);
    ASSERT_EQ(run("aten::max_pool2d_with_indices.out", "optimized", args(o2, i2)), Error::Ok)
        << last_error_message();
    expect_same(o2, o1, 0.0, "max_pool values");
    for (int64_t i = 0; i < i1.tensor.numel(); ++i) {
      ASSERT_EQ(i1.tensor.data<int64_t>()[i], i2.tensor.data<int64_t>()[i]) << "index " << i;
    }
  }
}

// Scatters and gather split over threads (column blocks, narrow ones for a single row) and on
// one thread (1-D), with repeated indices: equal to the portable kernels bit for bit (each out
// element is reduced on one thread in index order).
TEST(OptimizedOps, ScatterGatherMatchPortable) {
  set_num_threads(2);
  struct Case {
    std::vector<int32_t> self;
    int64_t dim;
    int32_t k;
  };
  for (const Case& c :
       {Case{{256, 1024}, 1, 1024}, Case{{300000}, 0, 300000}, Case{{1024, 300}, 0, 900}}) {
    std::vector<int32_t> ishape = c.self;
    ishape[c.dim] = c.k;
    Owned x(ScalarType::Float, c.self), src(ScalarType::Float, ishape),
        idx(ScalarType::Long, ishape);
    x.fill(21);
    src.fill(22, 3.0f);
    std::mt19937 rng(23);
    for (int64_t i = 0; i < idx.tensor.numel(); ++i) {
      idx.tensor.data<int64_t>()[i] = static_cast<int64_t>(rng() % c.self[c.dim]);
    }
    src.f()[77] = NAN;
    const char* reduces[] = {"sum", "mean", "amax"};
    for (int op = 0; op < 5; ++op) {
      Owned a(ScalarType::Float, op == 0 ? ishape : c.self), b(ScalarType::Float, a.sizes);
      auto args = [&](Owned& out) -> std::vector<EValue> {
        if (op == 0)
          return {T(x), EValue::from_int(c.dim), T(idx), EValue::from_bool(false), T(out)};
        if (op == 1) return {T(x), EValue::from_int(c.dim), T(idx), T(src), T(out)};
        return {T(x),   EValue::from_int(c.dim),       T(idx),
                T(src), string_value(reduces[op - 2]), EValue::from_bool(op != 3),
                T(out)};
      };
      const char* name = op == 0   ? "aten::gather.out"
                         : op == 1 ? "aten::scatter_add.out"
                                   : "aten::scatter_reduce.two_out";
      ASSERT_EQ(run(name, "portable", args(a)), Error::Ok) << last_error_message();
      ASSERT_EQ(run(name, "optimized", args(b)), Error::Ok) << last_error_message();
      ASSERT_EQ(std::memcmp(a.f(), b.f(), a.tensor.nbytes()), 0) << name << " op " << op;
    }
  }
  set_num_threads(0);
}

// grid_sampler_2d: every mode the fast path takes agrees with the portable kernel: the same NaN
// positions and values within float rounding (|a - b| <= 1e-5 * (1 + |a|)). Not bit for bit: the
// compilers contract the interpolation's multiply-adds into FMAs differently per kernel on FMA
// targets such as aarch64 (seen under qemu-aarch64), so the last bits may differ there.
TEST(OptimizedOps, GridSamplerMatchesPortable) {
  set_num_threads(2);
  Owned x(ScalarType::Float, {2, 16, 40, 50}), grid(ScalarType::Float, {2, 96, 96, 2});
  x.fill(24);
  grid.fill(25, 1.3f);
  grid.f()[11] = NAN;
  grid.f()[40] = INFINITY;
  for (int mode = 0; mode < 2; ++mode) {
    for (int padding = 0; padding < 3; ++padding) {
      for (bool align : {false, true}) {
        Owned a(ScalarType::Float, {2, 16, 96, 96}), b(ScalarType::Float, {2, 16, 96, 96});
        auto args = [&](Owned& out) {
          return std::vector<EValue>{T(x),
                                     T(grid),
                                     EValue::from_int(mode),
                                     EValue::from_int(padding),
                                     EValue::from_bool(align),
                                     T(out)};
        };
        ASSERT_EQ(run("aten::grid_sampler_2d.out", "portable", args(a)), Error::Ok);
        ASSERT_EQ(run("aten::grid_sampler_2d.out", "optimized", args(b)), Error::Ok);
        const size_t n = a.tensor.nbytes() / sizeof(float);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; ++i) {
          const float p = a.f()[i], o = b.f()[i];
          const bool ok =
              std::isnan(p) ? std::isnan(o) : std::fabs(p - o) <= 1e-5f * (1 + std::fabs(p));
          if (!ok && bad++ == 0) first = i;
        }
        ASSERT_EQ(bad, 0u) << "mode " << mode << " padding " << padding << " align " << align
                           << ": first at " << first << ", portable " << a.f()[first]
                           << ", optimized " << b.f()[first];
      }
    }
  }
  set_num_threads(0);
}

}  // namespace
}  // namespace pteron
