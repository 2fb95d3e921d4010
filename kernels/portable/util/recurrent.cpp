#include "kernels/portable/util/recurrent.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {
namespace {

int gates_of(RecurrentCell cell) {
  return cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// The layer's shapes, read from the arguments and checked.
struct Layer {
  RecurrentCell cell;
  int64_t T, B, I, H, H_out, G;  // steps, batch, input size, hidden, output (projection), gates
  int64_t L, D;                  // layers, directions
  bool has_biases, has_projection, batch_first;
  const Tensor* input;
  const Tensor* h0;
  const Tensor* c0;  // LSTM only
  Span<Tensor* const> params;
  Tensor* output;
  Tensor* hy;
  Tensor* cy;  // LSTM only
  // Parameter `which` (0 w_ih, 1 w_hh, 2 b_ih, 3 b_hh, 4 w_hr) of layer l, direction d.
  const float* param(int64_t l, int64_t d, int which) const {
    const int64_t per = 2 + (has_biases ? 2 : 0) + (has_projection ? 1 : 0);
    int64_t at = which;
    if (which >= 2 && !has_biases) return nullptr;
    if (which == 4) at = has_biases ? 4 : 2;
    return params[static_cast<size_t>((l * D + d) * per + at)]->data<const float>();
  }
};

Error check_matrix(const char* op, const Tensor& t, int64_t rows, int64_t cols, const char* what,
                   int64_t l) {
  const bool vector = cols == 0;
  PTERON_CHECK(t.dtype() == ScalarType::Float && t.dim() == (vector ? 1 : 2) && t.size(0) == rows &&
                   (vector || t.size(1) == cols),
               Error::InvalidArgument, "%s: layer %lld's %s must be float32 [%lld%s%lld]", op,
               static_cast<long long>(l), what, static_cast<long long>(rows), vector ? "" : ", ",
               static_cast<long long>(vector ? 0 : cols));
  PTERON_CHECK(t.is_contiguous(), Error::NotSupported, "%s: layer %lld's %s must be contiguous", op,
               static_cast<long long>(l), what);
  return Error::Ok;
}

Error read_layer(const char* op, RecurrentCell cell, Span<EValue*> args, Layer* out) {
  const bool lstm = cell == RecurrentCell::Lstm;
  Layer& s = *out;
  s.cell = cell;
  s.input = args[0]->tensor;
  if (lstm) {
    PTERON_CHECK(args[1]->tensor_list.size() == 2, Error::InvalidArgument,
                 "%s: hx must be two tensors (h0, c0), got %zu", op, args[1]->tensor_list.size());
    s.h0 = args[1]->tensor_list[0];
    s.c0 = args[1]->tensor_list[1];
    PTERON_CHECK(s.h0 != nullptr && s.c0 != nullptr, Error::InvalidArgument, "%s: hx holds a None",
                 op);
  } else {
    s.h0 = args[1]->tensor;
    s.c0 = nullptr;
  }
  s.params = args[2]->tensor_list;
  s.has_biases = args[3]->b;
  s.L = args[4]->i;
  const double dropout = args[5]->scalar_as_double();
  const bool train = args[6]->b;
  s.D = args[7]->b ? 2 : 1;
  s.batch_first = args[8]->b;
  s.output = args[9]->tensor;
  s.hy = args[10]->tensor;
  s.cy = lstm ? args[11]->tensor : nullptr;
  s.G = gates_of(cell);
  PTERON_CHECK(!train || dropout == 0.0 || s.L == 1, Error::NotSupported,
               "%s: dropout in training mode is not supported (export the model in eval mode)", op);
  const Tensor& x = *s.input;
  PTERON_CHECK(x.dtype() == ScalarType::Float && x.dim() == 3, Error::InvalidArgument,
               "%s: input must be a 3-d float32 tensor, got %d-d %s", op, x.dim(),
               scalar_type_name(x.dtype()));
  s.T = x.size(s.batch_first ? 1 : 0);
  s.B = x.size(s.batch_first ? 0 : 1);
  s.I = x.size(2);
  PTERON_CHECK(s.L >= 1 && s.L <= 1024, Error::InvalidArgument, "%s: num_layers is %lld", op,
               static_cast<long long>(s.L));
  const Tensor& h0 = *s.h0;
  PTERON_CHECK(h0.dtype() == ScalarType::Float && h0.dim() == 3 && h0.size(0) == s.L * s.D &&
                   h0.size(1) == s.B,
               Error::InvalidArgument,
               "%s: the initial hidden state must be float32 [%lld, %lld, hidden], got %d-d", op,
               static_cast<long long>(s.L * s.D), static_cast<long long>(s.B), h0.dim());
  s.H_out = h0.size(2);
  s.H = s.H_out;
  if (lstm) {
    const Tensor& c0 = *s.c0;
    PTERON_CHECK(c0.dtype() == ScalarType::Float && c0.dim() == 3 && c0.size(0) == s.L * s.D &&
                     c0.size(1) == s.B,
                 Error::InvalidArgument,
                 "%s: the initial cell state must be float32 [%lld, %lld, hidden]", op,
                 static_cast<long long>(s.L * s.D), static_cast<long long>(s.B));
    s.H = c0.size(2);
  }
  s.has_projection = s.H_out != s.H;
  PTERON_CHECK(s.H >= 1 && s.H_out >= 1, Error::InvalidArgument, "%s: hidden size 0", op);
  const int64_t per = 2 + (s.has_biases ? 2 : 0) + (s.has_projection ? 1 : 0);
  PTERON_CHECK(static_cast<int64_t>(s.params.size()) == s.L * s.D * per, Error::InvalidArgument,
               "%s: %zu parameters given, %lld layer(s) x %lld direction(s) take %lld", op,
               s.params.size(), static_cast<long long>(s.L), static_cast<long long>(s.D),
               static_cast<long long>(s.L * s.D * per));
  for (size_t k = 0; k < s.params.size(); ++k)
    PTERON_CHECK(s.params[k] != nullptr, Error::InvalidArgument, "%s: parameter %zu is None", op,
                 k);
  for (int64_t l = 0; l < s.L; ++l) {
    const int64_t in = l == 0 ? s.I : s.D * s.H_out;
    for (int64_t d = 0; d < s.D; ++d) {
      const int64_t base = (l * s.D + d) * per;
      const auto p = [&](int64_t k) -> const Tensor& {
        return *s.params[static_cast<size_t>(base + k)];
      };
      PTERON_TRY(check_matrix(op, p(0), s.G * s.H, in, "w_ih", l));
      PTERON_TRY(check_matrix(op, p(1), s.G * s.H, s.H_out, "w_hh", l));
      if (s.has_biases) {
        PTERON_TRY(check_matrix(op, p(2), s.G * s.H, 0, "b_ih", l));
        PTERON_TRY(check_matrix(op, p(3), s.G * s.H, 0, "b_hh", l));
      }
      if (s.has_projection) PTERON_TRY(check_matrix(op, p(per - 1), s.H_out, s.H, "w_hr", l));
    }
  }
  const int32_t out_sizes[] = {static_cast<int32_t>(s.batch_first ? s.B : s.T),
                               static_cast<int32_t>(s.batch_first ? s.T : s.B),
                               static_cast<int32_t>(s.D * s.H_out)};
  PTERON_TRY(expect_dtype(op, *s.output, ScalarType::Float, "output"));
  PTERON_TRY(expect_out_shape(op, *s.output, out_sizes, 3));
  PTERON_TRY(expect_dtype(op, *s.hy, ScalarType::Float, "hy"));
  PTERON_TRY(expect_out_shape(op, *s.hy, h0.sizes().data(), 3));
  if (lstm) {
    PTERON_TRY(expect_dtype(op, *s.cy, ScalarType::Float, "cy"));
    PTERON_TRY(expect_out_shape(op, *s.cy, s.c0->sizes().data(), 3));
  }
  return Error::Ok;
}

// One step's cell for batch row b: `x` the input projection (with b_ih), `g` the hidden
// product (with b_hh), both G*H; updates h (H, before any projection) and c in place.
void cell_step(RecurrentCell cell, int64_t H, const float* x, const float* g, float* h, float* c) {
  switch (cell) {
    case RecurrentCell::Lstm:
      for (int64_t j = 0; j < H; ++j) {
        const float i = sigmoid(x[j] + g[j]);
        const float f = sigmoid(x[H + j] + g[H + j]);
        const float n = std::tanh(x[2 * H + j] + g[2 * H + j]);
        const float o = sigmoid(x[3 * H + j] + g[3 * H + j]);
        c[j] = f * c[j] + i * n;
        h[j] = o * std::tanh(c[j]);
      }
      break;
    case RecurrentCell::Gru:
      for (int64_t j = 0; j < H; ++j) {
        const float r = sigmoid(x[j] + g[j]);
        const float z = sigmoid(x[H + j] + g[H + j]);
        const float n = std::tanh(x[2 * H + j] + r * g[2 * H + j]);
        h[j] = (1.0f - z) * n + z * h[j];
      }
      break;
    case RecurrentCell::RnnTanh:
      for (int64_t j = 0; j < H; ++j) h[j] = std::tanh(x[j] + g[j]);
      break;
    case RecurrentCell::RnnRelu:
      for (int64_t j = 0; j < H; ++j) h[j] = std::max(x[j] + g[j], 0.0f);
      break;
  }
}

void run_product(void (*library)(KernelContext&, const RecurrentProduct&,
                                 const GemmWorkspace<float>&),
                 KernelContext& ctx, const RecurrentProduct& p, const GemmWorkspace<float>& ws) {
  if (library != nullptr) {
    library(ctx, p, ws);
  } else {
    recurrent_product(p, ws);
  }
}

// Element (step t, batch b, feature k) of a strided [T, B, F] / [B, T, F] tensor.
int64_t offset_of(const Tensor& t, bool batch_first, int64_t step, int64_t b, int64_t k) {
  return (batch_first ? b * t.stride(0) + step * t.stride(1)
                      : step * t.stride(0) + b * t.stride(1)) +
         k * t.stride(2);
}

}  // namespace

void recurrent_product(const RecurrentProduct& p, const GemmWorkspace<float>& workspace) {
  for (int64_t m = 0; m < p.M; ++m) {
    float* row = p.c.data + m * p.c.rs;
    for (int64_t n = 0; n < p.N; ++n) row[n * p.c.cs] = p.bias ? p.bias[n] : 0.0f;
  }
  gemm<float>(workspace, p.M, p.N, p.K, p.a, MatrixRef<const float>{p.w, 1, p.K}, p.c, 1.0f, 1.0f);
}

Error run_recurrent(KernelContext& ctx, const char* op, RecurrentCell cell, Span<EValue*> args,
                    const RecurrentProducts& products) {
  Layer s{};  // read_layer fills it; zeroed so no path reads an indeterminate field
  PTERON_TRY(read_layer(op, cell, args, &s));
  const bool lstm = cell == RecurrentCell::Lstm;
  const int64_t T = s.T, B = s.B, H = s.H, Ho = s.H_out, GH = s.G * s.H, D = s.D;
  if (T == 0 || B == 0) {  // nothing to run: the final states are the initial ones
    PTERON_TRY(copy_tensor(op, *s.h0, *s.hy));
    if (lstm) PTERON_TRY(copy_tensor(op, *s.c0, *s.cy));
    return Error::Ok;
  }
  // Scratch: every step's input projection, two layer outputs (time-major [T, B, D*Ho]: one
  // read, one written), the step's hidden product, and h (pre-projection), h_out and c.
  const int64_t wide = std::max(s.I, D * Ho);
  const size_t floats = static_cast<size_t>(T * B * GH + (s.L > 1 ? 2 : 0) * T * B * D * Ho +
                                            B * GH + 2 * B * H + B * Ho + T * B * s.I);
  float* scratch = static_cast<float*>(ctx.allocate_scratch(floats * sizeof(float), 64));
  PTERON_CHECK(scratch != nullptr, Error::OutOfMemory,
               "%s: needs %zu bytes of scratch memory for %lld steps", op, floats * sizeof(float),
               static_cast<long long>(T));
  float* xproj = scratch;
  float* layers[2] = {xproj + T * B * GH, xproj + T * B * GH + T * B * D * Ho};
  float* hidden = xproj + T * B * GH + (s.L > 1 ? 2 : 0) * T * B * D * Ho;
  float* h = hidden + B * GH;
  float* c = h + B * H;
  float* h_out = c + B * H;  // the projected h (the same as h without a projection)
  float* gathered = h_out + B * Ho;
  const GemmWorkspace<float> ws =
      make_gemm_workspace<float>(ctx, T * B, std::max(GH, Ho), std::max(wide, H));

  // Layer 0's input as a matrix of T*B rows: time-major rows (t*B + b) when the strides allow
  // one row stride, else gathered into scratch first.
  const Tensor& x = *s.input;
  const int64_t ts = x.stride(s.batch_first ? 1 : 0), bs = x.stride(s.batch_first ? 0 : 1);
  MatrixRef<const float> first{x.data<const float>(), B == 1 ? ts : bs, x.stride(2)};
  if (B > 1 && T > 1 && ts != B * bs) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < s.I; ++k)
          gathered[(t * B + b) * s.I + k] =
              x.data<const float>()[offset_of(x, s.batch_first, t, b, k)];
    first = {gathered, s.I, 1};
  }
  float* out = s.output->data<float>();
  const Tensor& o = *s.output;
  for (int64_t l = 0; l < s.L; ++l) {
    const bool last = l == s.L - 1;
    const int64_t in = l == 0 ? s.I : D * Ho;
    const MatrixRef<const float> a =
        l == 0 ? first : MatrixRef<const float>{layers[(l - 1) % 2], D * Ho, 1};
    float* written = last ? nullptr : layers[l % 2];
    for (int64_t d = 0; d < D; ++d) {
      RecurrentProduct all;
      all.M = T * B;
      all.N = GH;
      all.K = in;
      all.a = a;
      all.w = s.param(l, d, 0);
      all.bias = s.param(l, d, 2);
      all.c = {xproj, GH, 1};
      run_product(products.all_steps, ctx, all, ws);
      const int64_t state = l * D + d;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < Ho; ++k)
          h_out[b * Ho + k] = s.h0->data<const float>()[state * s.h0->stride(0) +
                                                        b * s.h0->stride(1) + k * s.h0->stride(2)];
        for (int64_t k = 0; k < H; ++k) {
          c[b * H + k] = lstm ? s.c0->data<const float>()[state * s.c0->stride(0) +
                                                          b * s.c0->stride(1) + k * s.c0->stride(2)]
                              : 0.0f;
          if (!lstm) h[b * H + k] = h_out[b * Ho + k];  // H == Ho without a projection
        }
      }
      RecurrentProduct step;
      step.M = B;
      step.N = GH;
      step.K = Ho;
      step.a = {h_out, Ho, 1};
      step.w = s.param(l, d, 1);
      step.bias = s.param(l, d, 3);
      step.c = {hidden, GH, 1};
      RecurrentProduct project;
      project.M = B;
      project.N = Ho;
      project.K = H;
      project.a = {h, H, 1};
      project.w = s.has_projection ? s.param(l, d, 4) : nullptr;
      project.c = {h_out, Ho, 1};
      for (int64_t n = 0; n < T; ++n) {
        const int64_t t = d == 0 ? n : T - 1 - n;
        run_product(products.one_step, ctx, step, ws);
        for (int64_t b = 0; b < B; ++b)
          cell_step(cell, H, xproj + (t * B + b) * GH, hidden + b * GH, h + b * H, c + b * H);
        if (s.has_projection) {
          run_product(products.one_step, ctx, project, ws);
        } else {
          std::memcpy(h_out, h, static_cast<size_t>(B * H) * sizeof(float));
        }
        for (int64_t b = 0; b < B; ++b) {
          const float* hb = h_out + b * Ho;
          if (written != nullptr) {
            std::memcpy(written + (t * B + b) * D * Ho + d * Ho, hb,
                        static_cast<size_t>(Ho) * sizeof(float));
          } else {
            for (int64_t k = 0; k < Ho; ++k)
              out[offset_of(o, s.batch_first, t, b, d * Ho + k)] = hb[k];
          }
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < Ho; ++k)
          s.hy->data<float>()[state * s.hy->stride(0) + b * s.hy->stride(1) + k * s.hy->stride(2)] =
              h_out[b * Ho + k];
        for (int64_t k = 0; lstm && k < H; ++k)
          s.cy->data<float>()[state * s.cy->stride(0) + b * s.cy->stride(1) + k * s.cy->stride(2)] =
              c[b * H + k];
      }
    }
  }
  return Error::Ok;
}

}  // namespace pteron
