// The int8 kernel library's host paths (kernels/cortex_m/host) against its scalar reference, in
// the same process on the same inputs, bit for bit: the convolution's tile (AVX-512 VNNI, AVX2,
// or NEON sdot, whichever this CPU has), and the vector loops (quantize, add, max pool,
// depthwise). A plain gtest, so the aarch64 cross build runs the NEON paths under qemu; the x86
// paths are also checked from Python against an int64 reference (tests/kernels/test_cortex_m.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cortex_m/host/host_isa.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "runtime/core/evalue.h"
#include "runtime/kernel/kernel.h"
#include "runtime/threads/threadpool.h"

namespace pteron {
namespace {

const KernelEntry* cortex_m_kernel(const char* name) {
  for (const KernelEntry& e : registered_kernels())
    if (std::strcmp(e.name, name) == 0 && std::strcmp(e.library, "cortex_m") == 0) return &e;
  return nullptr;
}

// A contiguous tensor owning its storage.
struct Owned {
  std::vector<int32_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  std::vector<int64_t> storage;
  Tensor tensor;
  Owned(ScalarType dtype, std::vector<int32_t> shape) : sizes(std::move(shape)) {
    const int32_t dim = static_cast<int32_t>(sizes.size());
    strides.assign(sizes.size(), 1);
    int64_t numel = 1;
    for (int32_t d = dim - 1; d >= 0; --d) {
      strides[d] = static_cast<int32_t>(numel);
      numel *= sizes[d];
      dim_order.insert(dim_order.begin(), static_cast<uint8_t>(d));
    }
    storage.assign(static_cast<size_t>(numel) + 1, 0);
    tensor = Tensor(dtype, dim, sizes.data(), dim_order.data(), strides.data(), storage.data());
  }
  template <typename T>
  T* data() {
    return tensor.data<T>();
  }
  std::vector<uint8_t> bytes() const {
    const auto* p = static_cast<const uint8_t*>(tensor.const_data());
    return {p, p + tensor.nbytes()};
  }
};

EValue T(Owned& t) { return EValue::from_tensor(&t.tensor); }
EValue I(int64_t v) { return EValue::from_int(v); }
EValue L(const std::vector<int64_t>& v) {
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(v.data(), v.size());
  return e;
}

// Runs `op` with the host paths on or off; the out tensor is the last argument.
void run(const char* op, std::vector<EValue> args, bool host) {
  const KernelEntry* fn = cortex_m_kernel(op);
  ASSERT_NE(fn, nullptr) << op;
  cortex_m::host::set_host_paths_enabled(host);
  std::vector<EValue*> ptrs;
  for (EValue& v : args) ptrs.push_back(&v);
  static std::vector<uint8_t> scratch(16u << 20);
  MemoryAllocator allocator(scratch.data(), scratch.size());
  KernelContext ctx{&allocator};
  EXPECT_EQ(call_kernel(*fn, ctx, Span<EValue*>(ptrs.data(), ptrs.size())), Error::Ok) << op;
  cortex_m::host::set_host_paths_enabled(true);
}

std::mt19937 rng(11);
void fill_i8(Owned& t) {
  std::uniform_int_distribution<int> d(-128, 127);
  for (int64_t i = 0; i < t.tensor.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
}
void fill_weights(Owned& t) {
  std::uniform_int_distribution<int> d(-127, 127);
  for (int64_t i = 0; i < t.tensor.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
}
// Per-channel Q31 multipliers and shifts, left shifts included.
void fill_requant(Owned& mult, Owned& shift, int32_t channels) {
  std::uniform_int_distribution<int32_t> m(1 << 30, std::numeric_limits<int32_t>::max());
  const int32_t shifts[] = {2, 0, -1, -6, -9, -13, -20, -31};
  for (int32_t c = 0; c < channels; ++c) {
    mult.data<int32_t>()[c] = m(rng);
    shift.data<int32_t>()[c] = shifts[c % 8];
  }
}

struct ConvCase {
  int32_t n, h, w, cin, cout, k, stride, pad, in_off;
};

class HostConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(HostConv, MatchesTheScalarReference) {
  const ConvCase c = GetParam();
  set_num_threads(2);  // the larger cases run on the pool
  const int32_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1,
                ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  Owned in(ScalarType::Char, {c.n, c.h, c.w, c.cin}),
      wt(ScalarType::Char, {c.cout, c.k, c.k, c.cin});
  Owned bias(ScalarType::Int, {c.cout}), mult(ScalarType::Int, {c.cout}),
      shift(ScalarType::Int, {c.cout});
  fill_i8(in), fill_weights(wt), fill_requant(mult, shift, c.cout);
  for (int32_t i = 0; i < c.cout; ++i) bias.data<int32_t>()[i] = (i * 7919) % 40001 - 20000;
  const std::vector<int64_t> stride = {c.stride, c.stride}, pad = {c.pad, c.pad}, dil = {1, 1};
  std::vector<uint8_t> results[2];
  for (int host = 0; host < 2; ++host) {
    Owned out(ScalarType::Char, {c.n, oh, ow, c.cout});
    run("cortex_m::quantized_conv2d_nhwc.out",
        {T(in), T(wt), T(bias), L(stride), L(pad), L(dil), I(c.in_off), I(-3), T(mult), T(shift),
         I(-100), I(120), EValue(), T(out)},
        host == 1);
    results[host] = out.bytes();
  }
  EXPECT_EQ(results[0], results[1]);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, HostConv,
    ::testing::Values(ConvCase{1, 11, 13, 5, 70, 3, 1, 1, 0},     // K, channel and pixel tails
                      ConvCase{2, 16, 16, 64, 64, 3, 1, 1, 128},  // threads; offset 128
                      ConvCase{1, 9, 9, 16, 40, 1, 2, 0, -127},   // strided 1x1; offset -127
                      ConvCase{2, 14, 15, 21, 48, 1, 1, 0, 7},    // pointwise: rows are pixels
                      ConvCase{1, 30, 30, 96, 24, 1, 1, 0, 128},  // pointwise on threads
                      ConvCase{1, 12, 10, 3, 33, 7, 2, 3, 5}),    // a first layer
    [](const ::testing::TestParamInfo<ConvCase>& info) {
      const ConvCase& c = info.param;
      return "cin" + std::to_string(c.cin) + "_cout" + std::to_string(c.cout) + "_k" +
             std::to_string(c.k) + "_s" + std::to_string(c.stride) + "_n" + std::to_string(c.n);
    });

// The window sizes with weights in registers (3x3, 5x5) and one read per tap (3x5, 7x7);
// strides, paddings, dilations and batches that give rows with and without interior columns.
// Each with an input offset inside the range, at both of its ends (the VNNI rows read x + 128 and
// fold the offset into the start value) and a narrower activation range, and once with biases
// near +-2^30, where the accumulators
// and their requantisation (left shifts included) reach the ends of int32.
struct DepthwiseCase {
  int32_t n, kh, kw, stride_h, stride_w, pad_h, pad_w, dilation;
};

TEST(HostVectorKernels, DepthwiseMatchesTheScalarReference) {
  set_num_threads(2);
  const DepthwiseCase cases[] = {{1, 3, 3, 2, 1, 1, 1, 1}, {1, 3, 3, 1, 1, 0, 0, 1},
                                 {2, 5, 5, 2, 2, 2, 2, 1}, {1, 3, 5, 1, 2, 1, 2, 1},
                                 {1, 7, 7, 1, 1, 3, 3, 1}, {1, 3, 3, 1, 1, 2, 2, 2},
                                 {1, 3, 3, 1, 1, 1, 0, 1}, {1, 1, 3, 1, 3, 0, 1, 1}};
  struct Offsets {
    int32_t in_off, bias_scale, act_min, act_max;
  };
  for (const DepthwiseCase& c : cases) {
    for (const int32_t channels : {19, 96}) {
      for (const Offsets o : {Offsets{11, 0, -128, 127}, Offsets{128, 0, -128, 127},
                              Offsets{-127, 0, -20, 100}, Offsets{3, 1, -128, 127}}) {
        const int32_t h = 20, w = 17;
        const int32_t oh = (h + 2 * c.pad_h - c.dilation * (c.kh - 1) - 1) / c.stride_h + 1;
        const int32_t ow = (w + 2 * c.pad_w - c.dilation * (c.kw - 1) - 1) / c.stride_w + 1;
        Owned in(ScalarType::Char, {c.n, h, w, channels});
        Owned wt(ScalarType::Char, {1, c.kh, c.kw, channels});
        Owned bias(ScalarType::Int, {channels}), mult(ScalarType::Int, {channels});
        Owned shift(ScalarType::Int, {channels});
        fill_i8(in), fill_weights(wt), fill_requant(mult, shift, channels);
        for (int32_t i = 0; i < channels; ++i) {
          bias.data<int32_t>()[i] =
              o.bias_scale ? (i % 2 ? 1 : -1) * ((1 << 30) - i * 4099) : i * 37 - 500;
        }
        const std::vector<int64_t> stride = {c.stride_h, c.stride_w}, pad = {c.pad_h, c.pad_w},
                                   dil = {c.dilation, c.dilation};
        std::vector<uint8_t> results[2];
        for (int host = 0; host < 2; ++host) {
          Owned out(ScalarType::Char, {c.n, oh, ow, channels});
          run("cortex_m::quantized_depthwise_conv2d_nhwc.out",
              {T(in), T(wt), T(bias), L(stride), L(pad), L(dil), I(1), I(o.in_off), I(-6), T(mult),
               T(shift), I(o.act_min), I(o.act_max), EValue(), T(out)},
              host == 1);
          results[host] = out.bytes();
        }
        EXPECT_EQ(results[0], results[1])
            << channels << " channels, " << c.kh << "x" << c.kw << " stride " << c.stride_h << ","
            << c.stride_w << " padding " << c.pad_h << "," << c.pad_w << " dilation " << c.dilation
            << " batch " << c.n << " input offset " << o.in_off << " bias scale " << o.bias_scale;
      }
    }
  }
}

// quantized_linear_packed on the convolution tiles: rows x K -> N with K and N tails, one row
// (a matrix-vector product) and enough rows for the thread pool. The last case gives channel 3
// a record with both a left and a right shift, which the host path leaves to the scalar path.
struct LinearCase {
  int32_t rows, k, n;
  bool both_shifts;
};

TEST(HostLinear, MatchesTheScalarReference) {
  set_num_threads(2);
  for (const LinearCase& c : {LinearCase{1, 37, 70, false}, LinearCase{5, 16, 9, false},
                              LinearCase{130, 200, 300, false}, LinearCase{3, 40, 12, true}}) {
    const int32_t groups = static_cast<int32_t>(cortex_m::linear_groups(c.n));
    const int32_t chunks = static_cast<int32_t>(cortex_m::linear_chunks(c.k));
    Owned in(ScalarType::Char, {c.rows, c.k});
    Owned w(ScalarType::Char, {groups, chunks, cortex_m::kLinearGroup, cortex_m::kLinearChunk});
    Owned quant(ScalarType::Int, {groups, cortex_m::kLinearQuantFields, cortex_m::kLinearGroup});
    Owned mult(ScalarType::Int, {c.n}), shift(ScalarType::Int, {c.n});
    fill_i8(in), fill_requant(mult, shift, c.n);
    std::memset(w.data<int8_t>(), 0, static_cast<size_t>(w.tensor.nbytes()));
    std::memset(quant.data<int32_t>(), 0, static_cast<size_t>(quant.tensor.nbytes()));
    std::uniform_int_distribution<int> weight(-127, 127), sum(-30000, 30000);
    for (int32_t n = 0; n < c.n; ++n) {
      for (int32_t k = 0; k < c.k; ++k)
        w.data<int8_t>()[cortex_m::linear_packed_index(n, k, chunks)] =
            static_cast<int8_t>(weight(rng));
      int32_t* q = quant.data<int32_t>();
      const int32_t s = shift.data<int32_t>()[n];
      q[cortex_m::linear_quant_index(n, cortex_m::kLinearKernelSum)] = sum(rng);
      q[cortex_m::linear_quant_index(n, cortex_m::kLinearMultiplier)] = mult.data<int32_t>()[n];
      q[cortex_m::linear_quant_index(n, cortex_m::kLinearLeftShift)] = s > 0 ? s : 0;
      q[cortex_m::linear_quant_index(n, cortex_m::kLinearRightShift)] = s < 0 ? s : 0;
    }
    if (c.both_shifts) {
      quant.data<int32_t>()[cortex_m::linear_quant_index(3, cortex_m::kLinearLeftShift)] = 2;
      quant.data<int32_t>()[cortex_m::linear_quant_index(3, cortex_m::kLinearRightShift)] = -5;
    }
    std::vector<uint8_t> results[2];
    for (int host = 0; host < 2; ++host) {
      Owned out(ScalarType::Char, {c.rows, c.n});
      run("cortex_m::quantized_linear_packed.out",
          {T(in), T(w), T(quant), I(-3), I(-100), I(120), T(out)}, host == 1);
      results[host] = out.bytes();
    }
    EXPECT_EQ(results[0], results[1]) << c.rows << " x " << c.k << " -> " << c.n;
  }
}

TEST(HostVectorKernels, AddMulMaxPoolAndQuantizeMatchTheScalarReference) {
  set_num_threads(2);
  // Whole vectors and a tail on every instruction set; the larger runs on the pool, once into
  // its own buffer and once over its first operand (the in-place plan).
  for (const int32_t n : {1003, 100003}) {
    Owned a(ScalarType::Char, {n}), b(ScalarType::Char, {n});
    fill_i8(a), fill_i8(b);
    std::vector<uint8_t> sums[2];
    for (int host = 0; host < 2; ++host) {
      Owned out(ScalarType::Char, {n});
      run("cortex_m::quantized_add.out",
          {T(a), I(3), I(1518500250), I(-1), T(b), I(-7), I(1073741824), I(0), I(-2), I(1395864371),
           I(-19), I(-20), I(127), T(out)},
          host == 1);
      sums[host] = out.bytes();
    }
    EXPECT_EQ(sums[0], sums[1]) << n << " elements";
    run("cortex_m::quantized_add.out",
        {T(a), I(3), I(1518500250), I(-1), T(b), I(-7), I(1073741824), I(0), I(-2), I(1395864371),
         I(-19), I(-20), I(127), T(a)},
        true);
    EXPECT_EQ(a.bytes(), sums[0]) << n << " elements in place";
    // quantized_mul: (a - 5) * (b + 9) at a small and a large output scale (right and left
    // shifts).
    for (const int64_t shift : {int64_t{-9}, int64_t{1}}) {
      std::vector<uint8_t> products[2];
      for (int host = 0; host < 2; ++host) {
        Owned out(ScalarType::Char, {n});
        run("cortex_m::quantized_mul.out",
            {T(a), I(5), T(b), I(-9), I(-3), I(1395864371), I(shift), T(out)}, host == 1);
        products[host] = out.bytes();
      }
      EXPECT_EQ(products[0], products[1]) << n << " elements, shift " << shift;
    }
  }

  // quantized_mul with `other` broadcast as rows: NHWC squeeze-excite weights [N, 1, 1, C]
  // (rows of C), NCHW ones [N, C, 1, 1] (one value per row of H x W, a tail past the 64-byte
  // pieces), small and on the pool. Each path gives the bytes of the same-shape multiply by
  // `other` expanded to the full shape (a reference independent of the row walk).
  struct Broadcast {
    std::vector<int32_t> full, other;
  };
  for (const Broadcast& c : std::vector<Broadcast>{{{2, 5, 7, 24}, {2, 1, 1, 24}},
                                                   {{1, 40, 40, 48}, {1, 1, 1, 48}},
                                                   {{2, 24, 9, 11}, {2, 24, 1, 1}},
                                                   {{1, 32, 40, 41}, {1, 32, 1, 1}},
                                                   {{6, 33}, {33}}}) {
    Owned a(ScalarType::Char, c.full), b(ScalarType::Char, c.other), wide(ScalarType::Char, c.full);
    fill_i8(a), fill_i8(b);
    const int64_t n = static_cast<int64_t>(a.bytes().size());
    std::vector<int32_t> strides(c.full.size(), 0);  // other's element step along each full dim
    for (int64_t d = static_cast<int64_t>(c.other.size()) - 1, step = 1; d >= 0; --d) {
      const size_t full_d = d + c.full.size() - c.other.size();
      strides[full_d] = c.other[d] == 1 ? 0 : static_cast<int32_t>(step);
      step *= c.other[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, at = 0;
      for (int64_t d = static_cast<int64_t>(c.full.size()) - 1; d >= 0; --d) {
        at += rest % c.full[d] * strides[d];
        rest /= c.full[d];
      }
      wide.data<int8_t>()[i] = b.data<int8_t>()[at];
    }
    Owned expected(ScalarType::Char, c.full);
    run("cortex_m::quantized_mul.out",
        {T(a), I(5), T(wide), I(-9), I(-3), I(1395864371), I(-9), T(expected)}, false);
    for (int host = 0; host < 2; ++host) {
      Owned out(ScalarType::Char, c.full);
      run("cortex_m::quantized_mul.out",
          {T(a), I(5), T(b), I(-9), I(-3), I(1395864371), I(-9), T(out)}, host == 1);
      EXPECT_EQ(out.bytes(), expected.bytes()) << n << " elements broadcast, host " << host;
    }
  }
  // quantized_lut: every int8 value through a random table, at a tail length and on the pool,
  // into its own buffer and over its input (in place); each host path equals the scalar
  // lookup out[i] = table[in[i] + 128].
  for (const int32_t n : {255, 1003, 100003}) {
    Owned in(ScalarType::Char, {n}), table(ScalarType::Char, {256}), out(ScalarType::Char, {n});
    fill_i8(in), fill_i8(table);
    for (int32_t i = 0; i < 256 && i < n; ++i) in.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    std::vector<uint8_t> expected(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i)
      expected[i] = static_cast<uint8_t>(table.data<int8_t>()[in.data<int8_t>()[i] + 128]);
    for (int host = 0; host < 2; ++host) {
      run("cortex_m::quantized_lut.out", {T(in), T(table), T(out)}, host == 1);
      EXPECT_EQ(out.bytes(), expected) << n << " elements, host " << host;
    }
    run("cortex_m::quantized_lut.out", {T(in), T(table), T(in)}, true);
    EXPECT_EQ(in.bytes(), expected) << n << " elements in place";
  }
  {
    // Two runs of broadcast dimensions are not rows: refused, nothing written.
    Owned a(ScalarType::Char, {2, 24, 9, 11}), b(ScalarType::Char, {1, 24, 1, 11}),
        out(ScalarType::Char, {2, 24, 9, 11});
    std::vector<EValue> args = {T(a), I(5), T(b), I(-9), I(-3), I(1395864371), I(-9), T(out)};
    std::vector<EValue*> ptrs;
    for (EValue& v : args) ptrs.push_back(&v);
    MemoryAllocator none(nullptr, 0);
    KernelContext ctx{&none};
    EXPECT_EQ(call_kernel(*cortex_m_kernel("cortex_m::quantized_mul.out"), ctx,
                          Span<EValue*>(ptrs.data(), ptrs.size())),
              Error::InvalidArgument);
    EXPECT_EQ(out.bytes(), std::vector<uint8_t>(out.bytes().size(), 0));
  }

  // quantized_avg_pool2d_nhwc: global pools (one output row per image: channel blocks on the
  // pool, a partial block), a padded strided window over many rows (rows on the pool), a small
  // one inline; the host path's bytes are the scalar reference's.
  struct AvgPool {
    std::vector<int32_t> in, out;
    std::vector<int64_t> kernel, stride, pad;
  };
  for (const AvgPool& c :
       std::vector<AvgPool>{{{1, 56, 56, 96}, {1, 1, 1, 96}, {56, 56}, {1, 1}, {0, 0}},
                            {{2, 7, 9, 100}, {2, 1, 1, 100}, {7, 9}, {1, 1}, {0, 0}},
                            {{2, 33, 35, 40}, {2, 17, 18, 40}, {3, 3}, {2, 2}, {1, 1}},
                            {{1, 4, 6, 5}, {1, 2, 3, 5}, {2, 2}, {2, 2}, {0, 0}}}) {
    Owned in(ScalarType::Char, c.in);
    fill_i8(in);
    std::vector<uint8_t> means[2];
    for (int host = 0; host < 2; ++host) {
      Owned out(ScalarType::Char, c.out);
      run("cortex_m::quantized_avg_pool2d_nhwc.out",
          {T(in), L(c.kernel), L(c.stride), L(c.pad), EValue::from_bool(false), I(0), I(0), I(0),
           EValue(), T(out)},
          host == 1);
      means[host] = out.bytes();
    }
    EXPECT_EQ(means[0], means[1]) << c.in[1] << "x" << c.in[2] << "x" << c.in[3] << " window "
                                  << c.kernel[0] << "x" << c.kernel[1];
  }

  Owned image(ScalarType::Char, {2, 7, 9, 100});
  fill_i8(image);
  const std::vector<int64_t> kernel = {3, 3}, stride = {2, 2}, pad = {1, 1}, dil = {1, 1};
  std::vector<uint8_t> pooled[2];
  for (int host = 0; host < 2; ++host) {
    Owned out(ScalarType::Char, {2, 4, 5, 100});
    run("cortex_m::quantized_max_pool2d_nhwc.out",
        {T(image), L(kernel), L(stride), L(pad), L(dil), EValue::from_bool(false), I(3), I(-5),
         I(-120), I(110), T(out)},
        host == 1);
    pooled[host] = out.bytes();
  }
  EXPECT_EQ(pooled[0], pooled[1]);

  const int32_t n = 1003;
  Owned x(ScalarType::Float, {n});
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int32_t i = 0; i < n; ++i) x.data<float>()[i] = normal(rng);
  x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[1] = std::numeric_limits<float>::infinity();
  x.data<float>()[2] = -1e30f;
  x.data<float>()[3] = 2.5f * 0.037f;  // about halfway between two steps
  std::vector<uint8_t> quantized[2];
  for (int host = 0; host < 2; ++host) {
    Owned out(ScalarType::Char, {n});
    run("cortex_m::quantize_per_tensor.out",
        {T(x), EValue::from_double(0.037), I(-5), I(-100), I(127),
         I(static_cast<int64_t>(ScalarType::Char)), T(out)},
        host == 1);
    quantized[host] = out.bytes();
  }
  EXPECT_EQ(quantized[0], quantized[1]);
}

}  // namespace
}  // namespace pteron
