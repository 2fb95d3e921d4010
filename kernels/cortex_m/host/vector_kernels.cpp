#include "kernels/cortex_m/host/vector_kernels.h"

#include <pthreadpool.h>

#include <algorithm>

#include "kernels/cortex_m/host/depthwise_vnni.h"
#include "kernels/cortex_m/host/host_isa.h"
#include "kernels/cortex_m/host/in_place_input.h"
#include "runtime/host/host_constant_cache.h"
#include "runtime/platform/cpu_isa.h"
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

// Per channel (`channels`: C rounded up, zeros past C) of a depthwise convolution whose taps
// read x + input_offset - `offset`: what every pixel starts from, bias + offset * the channel's
// weight sum (`sums`, which may be `base`), and the shift's left and right parts.
void channel_constants(const ConvParams& p, int64_t channels, int32_t offset, const int32_t* sums,
                       int32_t* base, int32_t* left, int32_t* right) {
  for (int64_t c = 0; c < channels; ++c) {
    const bool real = c < p.cout;
    base[c] = real ? (p.bias ? p.bias[c] : 0) + offset * sums[c] : 0;
    const int32_t shift = real ? p.shift[c] : 0;
    left[c] = requantize_left_shift(shift);
    right[c] = requantize_right_shift(shift);
  }
}

// How a depthwise convolution's output rows (n * oh) are split over the thread pool: about four
// tasks per thread, whole rows each; small ones stay on the calling thread (pool null).
struct RowTasks {
  pthreadpool_t pool;
  const int8_t* in;  // the input the tasks read (input_for_threads)
  int64_t rows_per_task, total_rows;
  size_t count;
};

RowTasks split_rows(KernelContext& ctx, const int8_t* in, int8_t* out, const ConvParams& p) {
  RowTasks t{nullptr, in, 1, static_cast<int64_t>(p.n) * p.oh, 1};
  const int64_t macs = t.total_rows * p.ow * p.cout * p.kh * p.kw;
  t.pool = macs >= kMinParallelMacs ? shared_threadpool() : nullptr;
  if (t.pool != nullptr) {
    t.in = input_for_threads(ctx, in, static_cast<int64_t>(p.n) * p.h * p.w * p.cin, out,
                             t.total_rows * p.ow * p.cout, &t.pool);
  }
  const int64_t threads = t.pool != nullptr ? pthreadpool_get_threads_count(t.pool) : 1;
  t.rows_per_task = (t.total_rows + 4 * threads - 1) / (4 * threads);
  if (t.rows_per_task < 1) t.rows_per_task = 1;
  t.count = static_cast<size_t>((t.total_rows + t.rows_per_task - 1) / t.rows_per_task);
  return t;
}

// Task `task`'s rows [first, last).
int64_t first_row(const RowTasks& t, size_t task) {
  return static_cast<int64_t>(task) * t.rows_per_task;
}
int64_t last_row(const RowTasks& t, size_t task) {
  const int64_t end = first_row(t, task) + t.rows_per_task;
  return end < t.total_rows ? end : t.total_rows;
}

struct DepthwiseJob {
  DepthwiseRows rows;
  const VectorKernels* k;
  RowTasks tasks;
};

void depthwise_task(void* context, size_t task) {
  const DepthwiseJob& j = *static_cast<const DepthwiseJob*>(context);
  j.k->depthwise_rows(j.rows, first_row(j.tasks, task), last_row(j.tasks, task));
}

#if defined(__x86_64__)
struct DepthwiseVnniJob {
  DepthwiseVnni rows;
  RowTasks tasks;
  int8_t* columns;  // per task, column_bytes apart
  int64_t column_bytes;
};

void depthwise_vnni_task(void* context, size_t task) {
  const DepthwiseVnniJob& j = *static_cast<const DepthwiseVnniJob*>(context);
  depthwise_vnni_rows(j.rows, first_row(j.tasks, task), last_row(j.tasks, task),
                      j.columns + static_cast<int64_t>(task) * j.column_bytes);
}

constexpr uint32_t kDepthwiseVnniKind = 0x49385744;  // "DW8I"

struct PackDepthwise {
  const ConvParams* p;
  const int8_t* weight;
};

void pack_depthwise(const void* context, void* dst) {
  const auto& job = *static_cast<const PackDepthwise*>(context);
  depthwise_vnni_pack(*job.p, job.weight, dst);
}

// The packed weights: from the program's constant cache where the weight is a constant of a
// loaded program (packed on its first call), else packed now into scratch; nullptr when neither
// has room.
const int8_t* packed_depthwise(KernelContext& ctx, const int8_t* weight, const ConvParams& p) {
  const PackDepthwise job{&p, weight};
  const auto bytes = static_cast<size_t>(depthwise_vnni_packed_bytes(p));
  const size_t source = static_cast<size_t>(p.kh) * p.kw * p.cout;
  if (ConstantCache* cache = constant_cache_for(weight, source)) {
    const ConstantKey key{weight, kDepthwiseVnniKind, {p.cout, p.kh, p.kw}};
    if (const void* block = cache->get_or_derive(key, source, bytes, &pack_depthwise, &job))
      return static_cast<const int8_t*>(block);
  }
  void* scratch = ctx.allocate_scratch(bytes, 64);
  if (scratch == nullptr) return nullptr;
  pack_depthwise(&job, scratch);
  return static_cast<const int8_t*>(scratch);
}

// The VNNI rows (depthwise_vnni.h); false, having written nothing, without scratch for them.
bool depthwise_on_vnni(KernelContext& ctx, const int8_t* in, const int8_t* weight, int8_t* out,
                       const ConvParams& p) {
  const int64_t channels = (p.cout + 15) / 16 * 16;
  const int8_t* packed = packed_depthwise(ctx, weight, p);
  auto* base = static_cast<int32_t*>(
      ctx.allocate_scratch(static_cast<size_t>(3 * channels) * sizeof(int32_t), 64));
  if (packed == nullptr || base == nullptr) return false;
  int32_t *left = base + channels, *right = left + channels;
  const auto* sums = reinterpret_cast<const int32_t*>(packed + depthwise_vnni_weight_bytes(p));
  // vpdpbusd reads x + 128: the start value takes the offset's other part.
  channel_constants(p, channels, p.in_off - 128, sums, base, left, right);
  DepthwiseVnniJob job{{in, out, &p, packed, base, left, right},
                       split_rows(ctx, in, out, p),
                       nullptr,
                       depthwise_vnni_column_bytes(p)};
  job.columns = static_cast<int8_t*>(
      ctx.allocate_scratch(static_cast<size_t>(job.column_bytes) * job.tasks.count, 64));
  if (job.columns == nullptr) return false;
  job.rows.in = job.tasks.in;
  pthreadpool_parallelize_1d(job.tasks.pool, &depthwise_vnni_task, &job, job.tasks.count,
                             pool_call_flags());
  return true;
}
#endif

// The element-wise kernels over threads: smaller ones stay inline.
constexpr int64_t kMinParallelElementwise = int64_t{1} << 15;  // elements

// Runs fn(first, last) over [0, items) on the shared thread pool, about two tasks per thread of
// a multiple of `align` items each (whole cache lines of an element-wise output: each byte read
// and written by one task, so an output on its operand's bytes, as the planner allows, stays
// safe), when `elements` (the work the items stand for) reaches kMinParallelElementwise; else
// in one call on this thread.
template <class Fn>
void split_over_threads(int64_t items, int64_t elements, int64_t align, const Fn& fn) {
  pthreadpool_t pool = elements >= kMinParallelElementwise ? shared_threadpool() : nullptr;
  if (pool == nullptr || items < 2) {
    fn(int64_t{0}, items);
    return;
  }
  const int64_t threads = static_cast<int64_t>(pthreadpool_get_threads_count(pool));
  struct Job {
    const Fn* fn;
    int64_t items, chunk;
  } job{&fn, items, ((items + 2 * threads - 1) / (2 * threads) + align - 1) / align * align};
  const auto task = [](void* context, size_t t) {
    const Job& j = *static_cast<const Job*>(context);
    const int64_t first = static_cast<int64_t>(t) * j.chunk;
    (*j.fn)(first, std::min(first + j.chunk, j.items));
  };
  pthreadpool_parallelize_1d(pool, task, &job,
                             static_cast<size_t>((items + job.chunk - 1) / job.chunk),
                             pool_call_flags());
}

template <class P>
using BinaryLoop = void (*)(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const P& p);

template <class P>
void run_binary(BinaryLoop<P> loop, const int8_t* a, const int8_t* b, int8_t* out, int64_t n,
                const P& p) {
  split_over_threads(n, n, 64, [&](int64_t first, int64_t last) {
    loop(a + first, b + first, out + first, last - first, p);
  });
}

// A broadcast binary op: tasks of whole rows (for_each_broadcast_row).
template <class P>
void run_broadcast(BinaryLoop<P> loop, const int8_t* a, const int8_t* b, int8_t* out,
                   const BroadcastRows& rows, const P& p) {
  split_over_threads(broadcast_row_count(rows), rows.outer * rows.mid * rows.inner, 1,
                     [&](int64_t first, int64_t last) {
                       for_each_broadcast_row(a, b, out, rows, first, last,
                                              [&](const int8_t* ra, const int8_t* rb, int8_t* ro,
                                                  int64_t n) { loop(ra, rb, ro, n, p); });
                     });
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
  run_binary(k->add, a, b, out, n, p);
  return true;
}

bool mul(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const MulParams& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  run_binary(k->mul, a, b, out, n, p);
  return true;
}

bool mul_broadcast(const int8_t* a, const int8_t* b, int8_t* out, const BroadcastRows& rows,
                   const MulParams& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  run_broadcast(k->mul, a, b, out, rows, p);
  return true;
}

bool lut(const int8_t* in, const int8_t* table, int8_t* out, int64_t n) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  split_over_threads(n, n, 64, [&](int64_t first, int64_t last) {
    k->lut(in + first, table, out + first, last - first);
  });
  return true;
}

bool avg_pool(const int8_t* in, int8_t* out, const PoolShape& p) {
  const VectorKernels* k = kernels();
  if (k == nullptr) return false;
  // Items: output rows by blocks of channels (a global pool has one row per image).
  const int64_t rows = static_cast<int64_t>(p.n) * p.oh;
  const int64_t blocks = (p.c + kAvgPoolChannels - 1) / kAvgPoolChannels;
  split_over_threads(rows * blocks, static_cast<int64_t>(p.n) * p.h * p.w * p.c, 1,
                     [&](int64_t first, int64_t last) {
                       for (int64_t item = first; item < last; ++item) {
                         const int64_t c_lo = item % blocks * kAvgPoolChannels;
                         k->avg_pool(in, out, p, item / blocks,
                                     std::min<int64_t>(c_lo + kAvgPoolChannels, p.c) - c_lo, c_lo);
                       }
                     });
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
#if defined(__x86_64__)
  if (k == &kAvx512Kernels && int8_dot_product_allowed() &&
      depthwise_on_vnni(ctx, in, weight, out, p))
    return true;
#endif
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
    base[c] = sum;  // channel_constants turns it into the start value
  }
  channel_constants(p, channels, p.in_off, base, base, left, right);
  DepthwiseJob job{
      {in, out, &p, weights, channels, base, left, right}, k, split_rows(ctx, in, out, p)};
  job.rows.in = job.tasks.in;
  pthreadpool_parallelize_1d(job.tasks.pool, &depthwise_task, &job, job.tasks.count,
                             pool_call_flags());
  return true;
}

}  // namespace pteron::cortex_m::host
