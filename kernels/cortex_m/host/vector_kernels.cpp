#include "kernels/cortex_m/host/vector_kernels.h"

#include <pthreadpool.h>

#include "kernels/cortex_m/host/host_isa.h"
#include "kernels/cortex_m/host/in_place_input.h"
#include "runtime/threads/threadpool.h"

namespace pteron::cortex_m::host {
namespace {

// The best table this CPU runs, or none.
const VectorKernels* kernels() {
  static const VectorKernels* chosen = []() -> const VectorKernels* {
#if defined(__x86_64__)
    if (has_avx512()) return &kAvx512Kernels;
    if (has_avx2()) return &kAvx2Kernels;
#endif
#if defined(__aarch64__)
    return &kNeonKernels;
#endif
    return nullptr;
  }();
  return host_paths_enabled() ? chosen : nullptr;
}

// Depthwise convolutions of fewer multiply-adds (about 5 us: the rows run at 10-20 GMAC/s, a
// tenth of the convolution tiles) stay on the calling thread. mobilenet-v2's 14x14 and 7x7
// layers are above it: a fifth of its depthwise work, serial at the earlier 1 Mi.
constexpr int64_t kMinParallelMacs = int64_t{1} << 17;

struct DepthwiseJob {
  DepthwiseRows rows;
  const VectorKernels* k;
  int64_t rows_per_task, total_rows;
};

void depthwise_task(void* context, size_t task) {
  const DepthwiseJob& j = *static_cast<const DepthwiseJob*>(context);
  const int64_t first = static_cast<int64_t>(task) * j.rows_per_task;
  const int64_t last =
      first + j.rows_per_task < j.total_rows ? first + j.rows_per_task : j.total_rows;
  j.k->depthwise_rows(j.rows, first, last);
}

// quantized_add over threads: chunks of whole cache lines, each read and written by one task
// (an output on its operand's bytes, as the planner allows, stays safe).
constexpr int64_t kMinParallelAdd = int64_t{1} << 15;  // elements: smaller ones stay inline

struct AddJob {
  const VectorKernels* k;
  const int8_t *a, *b;
  int8_t* out;
  int64_t n, chunk;
  const AddParams* p;
};

void add_task(void* context, size_t task) {
  const AddJob& j = *static_cast<const AddJob*>(context);
  const int64_t first = static_cast<int64_t>(task) * j.chunk;
  const int64_t count = j.n - first < j.chunk ? j.n - first : j.chunk;
  j.k->add(j.a + first, j.b + first, j.out + first, count, *j.p);
}

}  // namespace

bool quantize(const float* in, int8_t* out, int64_t n, float inv_scale, int32_t zp, int32_t qmin,
              int32_t qmax) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  k->quantize(in, out, n, inv_scale, zp, qmin, qmax);
  return true;
}

bool add(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  pthreadpool_t pool = n >= kMinParallelAdd ? shared_threadpool() : nullptr;
  if (pool == nullptr) {
    k->add(a, b, out, n, p);
    return true;
  }
  const int64_t threads = static_cast<int64_t>(pthreadpool_get_threads_count(pool));
  AddJob job{k, a, b, out, n, (n + 2 * threads - 1) / (2 * threads), &p};
  job.chunk = (job.chunk + 63) / 64 * 64;
  pthreadpool_parallelize_1d(pool, &add_task, &job,
                             static_cast<size_t>((n + job.chunk - 1) / job.chunk),
                             pool_call_flags());
  return true;
}

bool max_pool(const int8_t* in, int8_t* out, const MaxPoolParams& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  k->max_pool(in, out, p);
  return true;
}

bool depthwise(KernelContext& ctx, const int8_t* in, const int8_t* weight, int8_t* out,
               const ConvParams& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr || p.depth_multiplier != 1) return false;
  const int64_t taps = static_cast<int64_t>(p.kh) * p.kw;
  const int64_t channels = (p.cout + 15) / 16 * 16;
  auto* scratch = static_cast<int32_t*>(
      ctx.allocate_scratch(static_cast<size_t>((taps + 3) * channels) * sizeof(int32_t), 64));
  if (scratch == nullptr) return false;
  int32_t* weights = scratch;
  int32_t* base = weights + taps * channels;
  int32_t* left = base + channels;
  int32_t* right = left + channels;
  for (int64_t c = 0; c < channels; ++c) {
    const bool real = c < p.cout;
    int32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      const int32_t w = real ? weight[t * p.cout + c] : 0;
      weights[t * channels + c] = w;
      sum += w;
    }
    base[c] = real ? (p.bias ? p.bias[c] : 0) + p.in_off * sum : 0;
    const int32_t shift = real ? p.shift[c] : 0;
    left[c] = requantize_left_shift(shift);
    right[c] = requantize_right_shift(shift);
  }
  DepthwiseJob job{
      {in, out, &p, weights, channels, base, left, right}, k, 1, static_cast<int64_t>(p.n) * p.oh};
  const int64_t macs = job.total_rows * p.ow * p.cout * taps;
  pthreadpool_t pool = macs >= kMinParallelMacs ? shared_threadpool() : nullptr;
  if (pool != nullptr) {
    job.rows.in = input_for_threads(ctx, in, static_cast<int64_t>(p.n) * p.h * p.w * p.cin, out,
                                    job.total_rows * p.ow * p.cout, &pool);
  }
  const int64_t threads = pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
  // About four tasks per thread, whole output rows each.
  job.rows_per_task = (job.total_rows + 4 * threads - 1) / (4 * threads);
  if (job.rows_per_task < 1) job.rows_per_task = 1;
  const size_t tasks =
      static_cast<size_t>((job.total_rows + job.rows_per_task - 1) / job.rows_per_task);
  pthreadpool_parallelize_1d(pool, &depthwise_task, &job, tasks, pool_call_flags());
  return true;
}

}  // namespace pteron::cortex_m::host
