#include "kernels/optimized/util/sgemm.h"

#include <atomic>
#include <cstring>
#include <new>
#include <thread>

#include "kernels/optimized/util/sgemm_kernels.h"
#include "runtime/host/host_constant_cache.h"
#include "runtime/threads/threadpool.h"

namespace pteron::optimized {
namespace {

// Cache blocking. Per K block of kKC steps, a micro-kernel's B panel (kKC x NR: 32 KiB for
// AVX-512's 32 columns) stays in L1 while the packed A block of a task (up to kMaxTaskRows x kKC)
// stays in L2. A task covers at most kMaxTaskCols columns, so its packed B block fits in L2 too.
constexpr int64_t kKC = 256;
constexpr int64_t kMaxTaskRows = 256;
constexpr int64_t kMaxTaskCols = 512;
// Aim for this many tasks per thread, so a thread the OS preempts does not hold up the others.
constexpr int64_t kTasksPerThread = 8;
// Rows of a matrix-vector product per task: at most this many, and fewer when that gives each
// thread at least kTasksPerThread / 2 tasks (768 rows are 3 tasks of 256 on 2 threads: one
// thread idles a third of the time; 256 rows one task, on one thread).
constexpr int64_t kGemvRowsPerTask = 256;
constexpr int64_t kGemvMinRowsPerTask = 16;
// Products with fewer multiply-adds than this run on the calling thread: waking the pool costs
// more than they take.
constexpr int64_t kMinParallelMacs = int64_t{1} << 18;

int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

struct KernelTable {
  const SgemmKernel* entries[8];
  int count = 0;
  int best = 0;
};

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    for (const SgemmKernel* k : {sgemm_scalar_kernel(), sgemm_vec128_kernel(), sgemm_neon_kernel(),
                                 sgemm_avx2_kernel(), sgemm_avx512_kernel()}) {
      if (k == nullptr) continue;
      if (k->supported()) t.best = t.count;  // entries are ordered by speed
      t.entries[t.count++] = k;
    }
    return t;
  }();
  return table;
}

// Runs fn(context, i) for i in [0, count) on the shared pool, or inline without one.
void parallel_for(pthreadpool_t pool, void (*fn)(void*, size_t), void* context, size_t count) {
  if (pool == nullptr || count <= 1) {
    for (size_t i = 0; i < count; ++i) fn(context, i);
    return;
  }
  pthreadpool_parallelize_1d(pool, fn, context, count, pool_call_flags());
}

// Multiplies step k of `panels` (panels of kc x width, step k's width values contiguous) by
// scale[k]: a K scale applied as its operand is packed, while the panel is in L1.
void scale_panel_steps(float* panels, int64_t count, int64_t kc, int width, const float* scale) {
  for (int64_t q = 0; q < count; ++q, panels += kc * width)
    for (int64_t k = 0; k < kc; ++k)
      for (int i = 0; i < width; ++i) panels[k * width + i] *= scale[k];
}

// Packs rows [i0, i0 + mc) x columns [k0, k0 + kc) of A as ceil(mc / MR) panels of kc x MR
// (zero past mc).
void pack_a(const SgemmKernel& kern, const float* a, int64_t rs, int64_t cs, int64_t i0, int64_t mc,
            int64_t k0, int64_t kc, float* dst) {
  const int MR = kern.mr;
  for (int64_t p = 0; p < mc; p += MR, dst += kc * MR) {
    const int64_t mr = min64(MR, mc - p);
    const float* base = a + (i0 + p) * rs + k0 * cs;
    if (rs == 1 && mr == MR) {  // column-major A: each step is MR contiguous values
      for (int64_t k = 0; k < kc; ++k) std::memcpy(dst + k * MR, base + k * cs, MR * sizeof(float));
      continue;
    }
    if (cs == 1) {  // row-major A (activations): the kernel's transposing packer
      kern.pack_transposed(base, rs, kc, static_cast<int>(mr), MR, dst);
      continue;
    }
    for (int64_t i = 0; i < mr; ++i) {
      const float* row = base + i * rs;
      if (cs == 1) {
        for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = row[k];
      } else {
        for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = row[k * cs];
      }
    }
    for (int64_t i = mr; i < MR; ++i)
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = 0.0f;
  }
}

// Packs rows [k0, k0 + kc) x columns [j0, j0 + nc) of B as ceil(nc / NR) panels of kc x NR.
void pack_b(const SgemmKernel& kern, const float* b, int64_t rs, int64_t cs, int64_t k0, int64_t kc,
            int64_t j0, int64_t nc, float* dst) {
  const int NR = kern.nr;
  for (int64_t p = 0; p < nc; p += NR, dst += kc * NR) {
    const int nr = static_cast<int>(min64(NR, nc - p));
    const float* base = b + k0 * rs + (j0 + p) * cs;
    if (rs == 1 && cs != 1) {  // B stored [N, K] (linear weights)
      kern.pack_transposed(base, cs, kc, nr, NR, dst);
      continue;
    }
    for (int64_t k = 0; k < kc; ++k) {
      const float* row = base + k * rs;
      float* d = dst + k * NR;
      if (cs == 1) {
        std::memcpy(d, row, nr * sizeof(float));
      } else {
        for (int j = 0; j < nr; ++j) d[j] = row[j * cs];
      }
      for (int j = nr; j < NR; ++j) d[j] = 0.0f;
    }
  }
}

struct GemmPlan {
  const SgemmProblem* p;
  const SgemmKernel* kern;
  bool load_c;  // beta is 1 (other betas were applied to C beforehand)
  int64_t kc, task_rows, task_cols;
  int64_t panels_m, tasks_m, tasks_n, tasks;
  float* apack;  // all of A: batch x panels_m panels of K x MR
  // Per A panel (batch x panels_m): kUnpacked, kPacking or kPacked.
  std::atomic<int32_t>* a_state;
  float* bpack;  // per worker: one K block of a task's columns
  int64_t bpack_floats;
  // A constant's panels packed once (constant_panels): A's panels of every batch entry are
  // these, and B's K block at k0 is b_panels + k0 * b_panels_ld, whole panels of kc x NR.
  const float* a_panels = nullptr;
  const float* b_panels = nullptr;
  int64_t b_panels_ld = 0;
  std::atomic<int64_t> next_task{0};
};

enum : int32_t { kUnpacked = 0, kPacking = 1, kPacked = 2 };

// A is packed once, all of K, panel by panel: every task of a row block shares the panels.
// A task packs each panel of its row block that nobody has claimed, then waits for the ones
// others are packing (they are running, never queued behind the waiter: no deadlock).
void ensure_a_packed(GemmPlan& plan, int64_t bi, int64_t m0, int64_t mc) {
  const SgemmProblem& p = *plan.p;
  const int MR = plan.kern->mr;
  const int64_t first = bi * plan.panels_m + m0 / MR, count = ceil_div(mc, MR);
  for (int64_t i = 0; i < count; ++i) {
    std::atomic<int32_t>& state = plan.a_state[first + i];
    int32_t expected = kUnpacked;
    if (state.load(std::memory_order_relaxed) != kUnpacked ||
        !state.compare_exchange_strong(expected, kPacking, std::memory_order_acquire)) {
      continue;
    }
    const int64_t i0 = m0 + i * MR;
    float* panel = plan.apack + (first + i) * p.K * MR;
    pack_a(*plan.kern, p.a + bi * p.a_bs, p.a_rs, p.a_cs, i0, min64(MR, p.M - i0), 0, p.K, panel);
    if (p.a_col_scale != nullptr) scale_panel_steps(panel, 1, p.K, MR, p.a_col_scale);
    state.store(kPacked, std::memory_order_release);
  }
  for (int64_t i = 0; i < count; ++i) {
    while (plan.a_state[first + i].load(std::memory_order_acquire) != kPacked) {
      std::this_thread::yield();
    }
  }
}

// Asks the caches for rows [k0, k0 + kc) x columns [j0, j0 + nc) of B, which the next K block
// packs: the weights come from memory once per product, and fetching them while the current
// block computes hides most of that time.
void prefetch_b(const float* b, int64_t rs, int64_t cs, int64_t k0, int64_t kc, int64_t j0,
                int64_t nc) {
  constexpr int64_t kLine = 64 / sizeof(float);
  if (rs == 1) {  // columns contiguous along K
    for (int64_t j = 0; j < nc; ++j) {
      const float* col = b + (j0 + j) * cs + k0;
      for (int64_t k = 0; k < kc; k += kLine) __builtin_prefetch(col + k, 0, 2);
      __builtin_prefetch(col + kc - 1, 0, 2);
    }
  } else if (cs == 1) {  // rows contiguous along N
    for (int64_t k = 0; k < kc; ++k) {
      const float* row = b + (k0 + k) * rs + j0;
      for (int64_t j = 0; j < nc; j += kLine) __builtin_prefetch(row + j, 0, 2);
      __builtin_prefetch(row + nc - 1, 0, 2);
    }
  }
}

// One task: C rows [m0, m0 + mc) x columns [n0, n0 + nc) of one batch entry, over all of K.
void run_task(GemmPlan& plan, int64_t task, float* bpack) {
  const SgemmProblem& p = *plan.p;
  const SgemmKernel& kern = *plan.kern;
  const int MR = kern.mr, NR = kern.nr;
  const int64_t per_batch = plan.tasks_m * plan.tasks_n;
  const int64_t bi = task / per_batch;
  const int64_t mi = task % per_batch / plan.tasks_n, ni = task % plan.tasks_n;
  const int64_t m0 = mi * plan.task_rows, mc = min64(plan.task_rows, p.M - m0);
  const int64_t n0 = ni * plan.task_cols, nc = min64(plan.task_cols, p.N - n0);
  const float* apanels;
  if (plan.a_panels != nullptr) {
    apanels = plan.a_panels + m0 / MR * p.K * MR;
  } else {
    ensure_a_packed(plan, bi, m0, mc);
    apanels = plan.apack + (bi * plan.panels_m + m0 / MR) * p.K * MR;
  }
  const float* b = p.b + bi * p.b_bs;
  float* c = p.c + bi * p.c_bs + m0 * p.c_rs + n0;
  // An addend (and the row bias with it) goes into the task's C block first (in L2, on the
  // task's own thread); the first K block then accumulates onto it. A row bias alone is added
  // by the micro-kernels with the first K block: writing it first cost a pass over C that,
  // for a pointwise convolution of few input channels, took as long as the product.
  const bool init_c = p.addend != nullptr;
  if (init_c) {
    for (int64_t i = 0; i < mc; ++i) {
      float* row = c + i * p.c_rs;
      const float rb = p.row_bias != nullptr ? p.row_bias[m0 + i] : 0.0f;
      const float* add =
          p.addend != nullptr ? p.addend + bi * p.c_bs + (m0 + i) * p.c_rs + n0 : nullptr;
      for (int64_t j = 0; j < nc; ++j) {
        const float v = (plan.load_c ? row[j] : 0.0f) + rb;
        row[j] = add != nullptr ? v + add[j] : v;
      }
    }
  }
  for (int64_t pc = 0; pc < p.K; pc += plan.kc) {
    const int64_t kc = min64(plan.kc, p.K - pc);
    const float* bblock = bpack;
    if (plan.b_panels != nullptr) {
      bblock = plan.b_panels + pc * plan.b_panels_ld + n0 / NR * kc * NR;
    } else if (p.b_packer != nullptr) {
      p.b_packer->pack(p.b_packer->context, bi, pc, kc, n0, nc, NR, bpack);
    } else {
      pack_b(kern, b, p.b_rs, p.b_cs, pc, kc, n0, nc, bpack);
    }
    if (p.b_row_scale != nullptr && plan.b_panels == nullptr)
      scale_panel_steps(bpack, ceil_div(nc, NR), kc, NR, p.b_row_scale + pc);
    const bool first = pc == 0;
    const bool load_c = !first || plan.load_c || init_c;
    const float bounds[2] = {p.activation.lo, p.activation.hi};
    const float* clamp = p.activation.clamps() ? bounds : nullptr;
    // What to prefetch while this block computes: B's next K block, or on the last block the
    // first block of the task likely to run next (tasks are taken in order).
    const float* next_b = b;
    int64_t next_k0 = pc + kc, next_kc = min64(plan.kc, p.K - pc - kc), next_n0 = n0;
    int64_t next_nc = nc;
    if (next_kc <= 0) {
      const int64_t t = plan.next_task.load(std::memory_order_relaxed);
      next_kc = 0;
      if (t < plan.tasks) {
        next_b = p.b + t / per_batch * p.b_bs;
        next_k0 = 0;
        next_kc = min64(plan.kc, p.K);
        next_n0 = t % plan.tasks_n * plan.task_cols;
        next_nc = min64(plan.task_cols, p.N - next_n0);
      }
    }
    // Spread over the micro-kernel calls of this block, a few columns each, so that the
    // requests never pile up.
    const int64_t calls = ceil_div(nc, NR) * ceil_div(mc, MR);
    const int64_t share = ceil_div(next_nc, calls);
    int64_t call = 0;
    for (int64_t jr = 0; jr < nc; jr += NR) {
      const float* bp = bblock + jr / NR * kc * NR;
      const float* bias = first && p.bias != nullptr ? p.bias + n0 + jr : nullptr;
      const float* row_bias = first && !init_c && p.row_bias != nullptr ? p.row_bias + m0 : nullptr;
      const int nr = static_cast<int>(min64(NR, nc - jr));
      for (int64_t ir = 0; ir < mc; ir += MR, ++call) {
        const int64_t j = call * share;
        // Packed constant panels are read in order: the hardware prefetcher follows them.
        if (next_kc > 0 && j < next_nc && p.b_packer == nullptr && plan.b_panels == nullptr) {
          prefetch_b(next_b, p.b_rs, p.b_cs, next_k0, next_kc, next_n0 + j,
                     min64(share, next_nc - j));
        }
        // The last K block clamps the tile in registers (a fused ReLU / ReLU6).
        kern.ukernel(static_cast<int>(min64(MR, mc - ir)), nr, kc,
                     apanels + ir / MR * p.K * MR + pc * MR, bp, c + ir * p.c_rs + jr, p.c_rs,
                     p.alpha, load_c, bias, row_bias != nullptr ? row_bias + ir : nullptr,
                     pc + kc == p.K ? clamp : nullptr);
      }
    }
  }
  // A SiLU or hardswish goes over the finished block while it is still in L2.
  p.activation.apply_function_rows(c, p.c_rs, mc, nc);
}

// A worker takes tasks until none are left, packing B into its own part of the buffer.
void gemm_worker(void* context, size_t worker) {
  GemmPlan& plan = *static_cast<GemmPlan*>(context);
  float* bpack = plan.bpack + static_cast<int64_t>(worker) * plan.bpack_floats;
  for (;;) {
    const int64_t task = plan.next_task.fetch_add(1, std::memory_order_relaxed);
    if (task >= plan.tasks) return;
    run_task(plan, task, bpack);
  }
}

struct GemvPlan {
  const SgemmProblem* p;
  const SgemmKernel* kern;
  float beta;
  int64_t rows_per_task;
};

int64_t gemv_rows_per_task(int64_t n, int64_t threads) {
  const int64_t balanced = ceil_div(n, threads * (kTasksPerThread / 2));
  return balanced < kGemvMinRowsPerTask ? kGemvMinRowsPerTask
         : balanced > kGemvRowsPerTask  ? kGemvRowsPerTask
                                        : balanced;
}

// C row = alpha * a * B + beta * C + bias for B stored [N, K]: rows of B are dot products.
void gemv_task(void* context, size_t task) {
  const GemvPlan& plan = *static_cast<const GemvPlan*>(context);
  const SgemmProblem& p = *plan.p;
  const int64_t j0 = static_cast<int64_t>(task) * plan.rows_per_task;
  const int64_t n = min64(plan.rows_per_task, p.N - j0);
  plan.kern->gemv_rows(n, p.K, p.a, p.b + j0 * p.b_cs, p.b_cs, p.c + j0, p.alpha, plan.beta,
                       p.bias != nullptr ? p.bias + j0 : nullptr);
  p.activation.apply_rows(p.c + j0, 0, 1, n);
}

// C = beta * C + bias (then the clamp), for an empty inner dimension and for betas other than 0
// and 1 (applied before the product, with no clamp).
void scale_c(const SgemmProblem& p, float beta, const float* bias,
             const OutputActivation& activation, bool extras) {
  for (int64_t bi = 0; bi < p.batch; ++bi)
    for (int64_t i = 0; i < p.M; ++i) {
      float* row = p.c + bi * p.c_bs + i * p.c_rs;
      const float* add = p.addend != nullptr ? p.addend + bi * p.c_bs + i * p.c_rs : nullptr;
      for (int64_t j = 0; j < p.N; ++j) {
        float v = beta == 0.0f ? 0.0f : beta * row[j];
        if (bias != nullptr) v += bias[j];
        if (extras && p.row_bias != nullptr) v += p.row_bias[i];
        if (extras && add != nullptr) v += add[j];
        row[j] = activation.apply(v);
      }
    }
}

}  // namespace

int sgemm_kernel_count() { return kernel_table().count; }

const char* sgemm_kernel_name(int index) {
  return index >= 0 && index < sgemm_kernel_count() ? kernel_table().entries[index]->name : "";
}

bool sgemm_kernel_supported(int index) {
  return index >= 0 && index < sgemm_kernel_count() && kernel_table().entries[index]->supported();
}

namespace {

int pick_kernel_index(int kernel) {
  return sgemm_kernel_supported(kernel) ? kernel : kernel_table().best;
}

const SgemmKernel& pick_kernel(int kernel) {
  return *kernel_table().entries[pick_kernel_index(kernel)];
}

// The whole-matrix case (not a matrix-vector product, K > 0) split into tasks for `threads`
// threads, and the scratch it needs.
struct GemmLayout {
  int64_t kc, task_rows, task_cols, tasks_m, tasks_n, tasks, workers, panels_m;
  int64_t apack_floats, bpack_floats, a_panels;
  size_t buffer_bytes() const {
    return static_cast<size_t>(apack_floats + workers * bpack_floats) * sizeof(float);
  }
  size_t state_bytes() const {
    return static_cast<size_t>(a_panels) * sizeof(std::atomic<int32_t>);
  }
};

// `a_packed` / `b_packed`: that operand's panels come from the constant cache, so the layout
// reserves no scratch for them.
GemmLayout gemm_layout(const SgemmProblem& p, const SgemmKernel& kern, int64_t threads,
                       bool a_packed = false, bool b_packed = false) {
  const int MR = kern.mr, NR = kern.nr;
  GemmLayout l;
  // K blocks of equal depth (K = 768 is three blocks of 256, not 256 + 256 + 256 + 0).
  l.kc = ceil_div(p.K, ceil_div(p.K, kKC));
  l.task_rows = round_up(ceil_div(p.M, ceil_div(p.M, kMaxTaskRows)), MR);
  l.tasks_m = ceil_div(p.M, l.task_rows);
  const int64_t panels = ceil_div(p.N, NR);
  int64_t task_panels = min64(panels, kMaxTaskCols / NR > 0 ? kMaxTaskCols / NR : 1);
  while (task_panels > 1 &&
         p.batch * l.tasks_m * ceil_div(panels, task_panels) < kTasksPerThread * threads) {
    task_panels = ceil_div(task_panels, 2);
  }
  l.task_cols = task_panels * NR;
  l.tasks_n = ceil_div(p.N, l.task_cols);
  l.tasks = p.batch * l.tasks_m * l.tasks_n;
  l.workers = min64(threads, l.tasks);
  l.panels_m = ceil_div(p.M, MR);
  l.apack_floats = a_packed ? 0 : round_up(p.batch * l.panels_m * MR * p.K, 16);
  l.bpack_floats = b_packed ? 0 : round_up(l.kc * l.task_cols, 16);
  l.a_panels = a_packed ? 0 : p.batch * l.panels_m;
  return l;
}

bool is_gemv(const SgemmProblem& p) {
  return p.M == 1 && p.batch == 1 && p.a_cs == 1 && p.b_rs == 1 && p.b_cs != 1 &&
         p.b_packer == nullptr && p.row_bias == nullptr && p.addend == nullptr &&
         p.a_col_scale == nullptr && p.b_row_scale == nullptr;
}

// Many tiny products (capsule routing's 23040 [16, 8] x [8, 1], per-head 2 x 2 products): the
// panels and tiles cost more than the multiply-adds (270 ns an entry), so each entry is a
// direct loop, four outputs of a row at a time (independent sums), entries over threads. Only
// C = A B (no alpha, beta, biases, scales, activation, packer).
constexpr int64_t kTinyMacs = 2048;

bool is_tiny_batched(const SgemmProblem& p) {
  return p.batch >= 16 && p.M * p.N * p.K <= kTinyMacs && p.alpha == 1.0f && p.beta == 0.0f &&
         p.bias == nullptr && p.row_bias == nullptr && p.addend == nullptr &&
         p.b_packer == nullptr && p.a_col_scale == nullptr && p.b_row_scale == nullptr &&
         !p.activation.active();
}

// C's entries four at a time along a row (N >= 4), else down a column: four independent sums.
void tiny_entry(const SgemmProblem& p, int64_t b) {
  const float* a = p.a + b * p.a_bs;
  const float* bm = p.b + b * p.b_bs;
  float* c = p.c + b * p.c_bs;
  // Output (i, j)'s inputs: A's row i (step a_cs along k), B's column j (step b_rs along k).
  const bool along_rows = p.N >= 4;
  const int64_t lines = along_rows ? p.M : p.N, length = along_rows ? p.N : p.M;
  const int64_t step_a = along_rows ? 0 : p.a_rs, step_b = along_rows ? p.b_cs : 0;
  const int64_t step_c = along_rows ? 1 : p.c_rs;
  for (int64_t line = 0; line < lines; ++line) {
    const float* a0 = along_rows ? a + line * p.a_rs : a;
    const float* b0 = along_rows ? bm : bm + line * p.b_cs;
    float* c0 = along_rows ? c + line * p.c_rs : c + line;
    int64_t t = 0;
    for (; t + 4 <= length; t += 4) {
      float s[4] = {0, 0, 0, 0};
      for (int64_t k = 0; k < p.K; ++k) {
        for (int q = 0; q < 4; ++q) {
          s[q] += a0[(t + q) * step_a + k * p.a_cs] * b0[(t + q) * step_b + k * p.b_rs];
        }
      }
      for (int q = 0; q < 4; ++q) c0[(t + q) * step_c] = s[q];
    }
    for (; t < length; ++t) {
      float s0 = 0;
      for (int64_t k = 0; k < p.K; ++k)
        s0 += a0[t * step_a + k * p.a_cs] * b0[t * step_b + k * p.b_rs];
      c0[t * step_c] = s0;
    }
  }
}

void tiny_task(void* context, size_t task) {
  const SgemmProblem& p = *static_cast<const SgemmProblem*>(context);
  constexpr int64_t kEntries = 64;
  const int64_t end = min64(p.batch, (static_cast<int64_t>(task) + 1) * kEntries);
  for (int64_t b = static_cast<int64_t>(task) * kEntries; b < end; ++b) tiny_entry(p, b);
}

void run_gemm(const SgemmProblem& p, const SgemmKernel& kern, const GemmLayout& l, float* buffer,
              void* state_memory, pthreadpool_t pool, const float* a_panels = nullptr,
              const float* b_panels = nullptr) {
  auto* a_state = static_cast<std::atomic<int32_t>*>(state_memory);
  for (int64_t i = 0; i < l.a_panels; ++i) new (&a_state[i]) std::atomic<int32_t>(kUnpacked);
  if (p.beta != 0.0f && p.beta != 1.0f)
    scale_c(p, p.beta, nullptr, OutputActivation{}, /*extras=*/false);
  GemmPlan plan;
  plan.p = &p;
  plan.kern = &kern;
  plan.load_c = p.beta != 0.0f;
  plan.kc = l.kc;
  plan.task_rows = l.task_rows;
  plan.task_cols = l.task_cols;
  plan.panels_m = l.panels_m;
  plan.tasks_m = l.tasks_m;
  plan.tasks_n = l.tasks_n;
  plan.tasks = l.tasks;
  plan.apack = buffer;
  plan.bpack = buffer + l.apack_floats;
  plan.bpack_floats = l.bpack_floats;
  plan.a_state = a_state;
  plan.a_panels = a_panels;
  plan.b_panels = b_panels;
  plan.b_panels_ld = round_up(p.N, kern.nr);
  parallel_for(pool, &gemm_worker, &plan, static_cast<size_t>(l.workers));
}

// Where the atomics go in sgemm_serial's scratch: after the buffer, aligned for them.
size_t serial_state_offset(const GemmLayout& l) {
  const size_t align = alignof(std::atomic<int32_t>);
  return (l.buffer_bytes() + align - 1) / align * align;
}

// Packing a constant operand once (SgemmProblem::a_cache / b_cache). The panels are exactly
// what run_task would pack per call: B as K blocks of depth kc (the layout's, a function of K
// only), each ceil(N / NR) panels of kc x NR; A as ceil(M / MR) panels of K x MR. The key holds
// every input of that packing besides the constant's bytes (sizes, strides, the micro-kernel,
// the K blocking), so a weight seen through another view or by another ISA table gets its own.
constexpr uint32_t kPackedAKind = 0x53474141;  // "SGAA"
constexpr uint32_t kPackedBKind = 0x53474242;  // "SGBB"

struct PanelJob {
  const SgemmProblem* p;
  const SgemmKernel* kern;
  int64_t kc;
  float* dst;
};

// Task t packs K block t of B (all columns).
void pack_b_block_task(void* context, size_t t) {
  const PanelJob& job = *static_cast<const PanelJob*>(context);
  const SgemmProblem& p = *job.p;
  const int64_t k0 = static_cast<int64_t>(t) * job.kc;
  pack_b(*job.kern, p.b, p.b_rs, p.b_cs, k0, min64(job.kc, p.K - k0), 0, p.N,
         job.dst + k0 * round_up(p.N, job.kern->nr));
}

// Task t packs A's MR-row panel t over all of K.
void pack_a_panel_task(void* context, size_t t) {
  const PanelJob& job = *static_cast<const PanelJob*>(context);
  const SgemmProblem& p = *job.p;
  const int MR = job.kern->mr;
  const int64_t i0 = static_cast<int64_t>(t) * MR;
  pack_a(*job.kern, p.a, p.a_rs, p.a_cs, i0, min64(MR, p.M - i0), 0, p.K,
         job.dst + static_cast<int64_t>(t) * p.K * MR);
}

struct DeriveContext {
  PanelJob job;
  pthreadpool_t pool;
  bool is_b;
};

void derive_panels(const void* context, void* dst) {
  const DeriveContext& c = *static_cast<const DeriveContext*>(context);
  PanelJob job = c.job;
  job.dst = static_cast<float*>(dst);
  const SgemmProblem& p = *job.p;
  if (c.is_b) {
    parallel_for(c.pool, &pack_b_block_task, &job, static_cast<size_t>(ceil_div(p.K, job.kc)));
  } else {
    parallel_for(c.pool, &pack_a_panel_task, &job,
                 static_cast<size_t>(ceil_div(p.M, job.kern->mr)));
  }
}

// A's (is_b false) or B's panels from the operand's cache, packed on the first request (or,
// with `derive` false, only when an earlier request packed them); nullptr when the operand is
// not a cached constant of one matrix, or the cache has no room.
const float* constant_panels(const SgemmProblem& p, const SgemmKernel& kern, int kernel_index,
                             int64_t kc, pthreadpool_t pool, bool is_b, bool derive = true) {
  ConstantCache* cache = is_b ? p.b_cache : p.a_cache;
  if (cache == nullptr || (is_b && p.b_packer != nullptr)) return nullptr;
  if ((is_b ? p.b_row_scale : p.a_col_scale) != nullptr) return nullptr;  // scaled per call
  if (p.batch != 1 && (is_b ? p.b_bs : p.a_bs) != 0) return nullptr;
  ConstantKey key;
  size_t floats, source_floats;  // the derived panels; the operand's extent
  if (is_b) {
    key = ConstantKey{p.b, kPackedBKind, {p.K, p.N, p.b_rs, p.b_cs, kern.nr, kc, kernel_index}};
    floats = static_cast<size_t>(p.K * round_up(p.N, kern.nr));
    source_floats =
        p.K > 0 && p.N > 0 ? static_cast<size_t>((p.K - 1) * p.b_rs + (p.N - 1) * p.b_cs + 1) : 0;
  } else {
    key = ConstantKey{p.a, kPackedAKind, {p.M, p.K, p.a_rs, p.a_cs, kern.mr, 0, kernel_index}};
    floats = static_cast<size_t>(round_up(p.M, kern.mr) * p.K);
    source_floats =
        p.M > 0 && p.K > 0 ? static_cast<size_t>((p.M - 1) * p.a_rs + (p.K - 1) * p.a_cs + 1) : 0;
  }
  if (!derive) return static_cast<const float*>(cache->find(key));
  const DeriveContext context{{&p, &kern, kc, nullptr}, pool, is_b};
  return static_cast<const float*>(cache->get_or_derive(
      key, source_floats * sizeof(float), floats * sizeof(float), &derive_panels, &context));
}

// The bytes of a linear weight [N, K] (unit stride along K) that the matrix-vector path streams.
size_t linear_weight_bytes(const SgemmProblem& p) {
  return static_cast<size_t>((p.N - 1) * p.b_cs + p.K) * sizeof(float);
}

// A matrix product of a constant weight that row vectors have already streamed from the cache's
// copy of it (a first call of one token, then a longer prompt) reads that copy and packs per
// call: the file's pages of the weight were given back for the copy, and packing it into the
// cache would keep the weight resident twice for the program's life. Otherwise `p` as it is.
SgemmProblem read_streamed_weight_from_its_copy(const SgemmProblem& p) {
  SgemmProblem q = p;
  if (p.b_cache == nullptr || p.b_packer != nullptr || p.b_rs != 1 || p.b_cs == 1 ||
      (p.batch != 1 && p.b_bs != 0))
    return q;
  if (const void* copy = p.b_cache->find_streaming_copy(p.b, linear_weight_bytes(p))) {
    q.b = static_cast<const float*>(copy);
    q.b_cache = nullptr;
  }
  return q;
}

}  // namespace

ConstantCache* constant_cache_of(const Tensor& t) {
  if (t.numel() <= 0) return nullptr;
  size_t last = 0;  // offset of the last element (the runtime's strides are non-negative)
  for (int32_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) return nullptr;
    last += static_cast<size_t>(t.size(d) - 1) * static_cast<size_t>(t.stride(d));
  }
  return constant_cache_for(t.const_data(), (last + 1) * t.element_size());
}

void sgemm_pack_rows(const float* src, int64_t ld, int64_t kc, int nr, int NR, float* dst) {
  pick_kernel(-1).pack_transposed(src, ld, kc, nr, NR, dst);
}

bool sgemm(KernelContext& ctx, const SgemmProblem& problem, int kernel) {
  const SgemmKernel& kern = pick_kernel(kernel);
  const SgemmProblem p = is_gemv(problem) ? problem : read_streamed_weight_from_its_copy(problem);
  if (p.M <= 0 || p.N <= 0 || p.batch <= 0) return true;
  if (p.K <= 0) {
    scale_c(p, p.beta, p.bias, p.activation, /*extras=*/true);
    return true;
  }
  const bool small = static_cast<double>(p.batch) * p.M * p.N * p.K < kMinParallelMacs;
  pthreadpool_t pool = small ? nullptr : shared_threadpool();
  const int64_t threads =
      pool != nullptr ? static_cast<int64_t>(pthreadpool_get_threads_count(pool)) : 1;

  if (is_tiny_batched(p)) {
    SgemmProblem q = p;
    parallel_for(pool, &tiny_task, &q, static_cast<size_t>(ceil_div(p.batch, 64)));
    return true;
  }
  const int64_t kc = gemm_layout(p, kern, threads).kc;
  const int index = pick_kernel_index(kernel);
  const auto run_gemv = [&] {
    // A constant weight streams from the cache's copy of it in huge pages where the host makes
    // one (a program mapped from its file; ConstantCache::streaming_copy), else as stored.
    SgemmProblem q = p;
    if (p.b_cache != nullptr)
      q.b = static_cast<const float*>(p.b_cache->streaming_copy(p.b, linear_weight_bytes(p)));
    GemvPlan plan{&q, &kern, p.beta, gemv_rows_per_task(p.N, threads)};
    parallel_for(pool, &gemv_task, &plan, static_cast<size_t>(ceil_div(p.N, plan.rows_per_task)));
    return true;
  };
  const float* a_panels = nullptr;
  const float* b_panels = nullptr;
  if (is_gemv(p)) {
    // A row vector reads the weight's panels when a matrix product (a prefill before this
    // decode step) has packed it, in the same single pass over the weight: the stored pages may
    // have been given back to the OS for the panels, and reading them would bring them back
    // beside the panels. Otherwise it streams the weight as run_gemv says. (Packing it here
    // instead would hold a weight only row vectors read, an LLM's output projection, twice
    // while it is packed: +98 MiB of peak RSS on llama-110m.)
    b_panels = constant_panels(p, kern, index, kc, pool, /*is_b=*/true, /*derive=*/false);
    if (b_panels == nullptr) return run_gemv();
  } else {
    a_panels = constant_panels(p, kern, index, kc, pool, /*is_b=*/false);
    b_panels = constant_panels(p, kern, index, kc, pool, /*is_b=*/true);
  }
  const GemmLayout l = gemm_layout(p, kern, threads, a_panels != nullptr, b_panels != nullptr);
  float* buffer = static_cast<float*>(ctx.allocate_scratch(l.buffer_bytes(), 64));
  void* state_memory = ctx.allocate_scratch(l.state_bytes(), alignof(std::atomic<int32_t>));
  if (buffer == nullptr || state_memory == nullptr) return is_gemv(p) ? run_gemv() : false;
  run_gemm(p, kern, l, buffer, state_memory, pool, a_panels, b_panels);
  return true;
}

size_t sgemm_serial_scratch_bytes(const SgemmProblem& p) {
  if (p.M <= 0 || p.N <= 0 || p.batch <= 0 || p.K <= 0 || is_gemv(p)) return 0;
  const GemmLayout l = gemm_layout(p, pick_kernel(-1), 1);
  return serial_state_offset(l) + l.state_bytes();
}

void sgemm_serial(const SgemmProblem& p, void* scratch) {
  const SgemmKernel& kern = pick_kernel(-1);
  if (p.M <= 0 || p.N <= 0 || p.batch <= 0) return;
  if (p.K <= 0) {
    scale_c(p, p.beta, p.bias, p.activation, /*extras=*/true);
    return;
  }
  if (is_gemv(p)) {
    GemvPlan plan{&p, &kern, p.beta, kGemvRowsPerTask};
    parallel_for(nullptr, &gemv_task, &plan, static_cast<size_t>(ceil_div(p.N, kGemvRowsPerTask)));
    return;
  }
  const GemmLayout l = gemm_layout(p, kern, 1);
  char* base = static_cast<char*>(scratch);
  run_gemm(p, kern, l, reinterpret_cast<float*>(base), base + serial_state_offset(l), nullptr);
}

}  // namespace pteron::optimized
