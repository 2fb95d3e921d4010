#include "kernels/cortex_m/host/conv_host.h"

#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "kernels/cortex_m/host/host_isa.h"
#include "kernels/cortex_m/host/in_place_input.h"
#include "kernels/cortex_m/host/int8_tile.h"
#include "runtime/host/host_constant_cache.h"
#include "runtime/platform/cpu_isa.h"
#include "runtime/threads/threadpool.h"

namespace pteron::cortex_m::host {
namespace {

using TileFn = void (*)(const Int8Tile&);

struct Isa {
  TileFn tile;
  TileLayout layout;
};

constexpr int64_t kTaskPixels = 64;     // output pixels per task
constexpr int64_t kTaskChannels = 128;  // output channels per task (whole blocks)
// Below this much work (about 10 us on the dot-product tiles) a convolution stays on the
// calling thread: handing half of it to a worker would cost about as much as it saves (ds-cnn's
// 512 Ki-MAC pointwise layers ran slower on 2 threads than on 1).
constexpr int64_t kMinParallelMacs = int64_t{1} << 20;
constexpr uint32_t kPackedFiltersKind = 0x49384346;  // "FC8I"
constexpr uint32_t kPackedLinearKind = 0x4c384346;   // "FC8L": from the packed linear layout

// The best tile this CPU runs (host_isa.h, cpu_isa.h), or none.
const Isa* isa() {
  static const Isa* chosen = []() -> const Isa* {
#if defined(__x86_64__)
    static const Isa vnni{&int8_tile_avx512vnni, kAvx512VnniLayout};
    static const Isa avx2{&int8_tile_avx2, kAvx2Layout};
    if (int8_dot_product_allowed() && has_avx512()) return &vnni;
    if (has_avx2()) return &avx2;
#endif
#if defined(__aarch64__)
    static const Isa neon_dot{&int8_tile_neon_dot, kNeonDotLayout};
    if (int8_dot_product_allowed()) return &neon_dot;
#endif
    return nullptr;
  }();
  return host_paths_enabled() ? chosen : nullptr;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

struct Shape {
  TileLayout layout;
  int32_t cout;
  int64_t k, kgroups, blocks;
  int64_t block_bytes() const {
    return kgroups * layout.group * layout.block_channels * layout.element_bytes();
  }
  int64_t weight_bytes() const { return blocks * block_bytes(); }
  int64_t channels() const { return blocks * layout.block_channels; }
  // The packed filters, then one int32 filter sum per channel of every block.
  size_t packed_bytes() const { return static_cast<size_t>(weight_bytes() + channels() * 4); }
};

struct PackJob {
  const int8_t* w;  // OHWI: cout rows of k bytes, or the packed linear layout
  Shape s;
  WeightLayout layout;
  int64_t chunks;  // the packed linear layout's chunks of K
  int8_t at(int64_t oc, int64_t k) const {
    return layout == WeightLayout::kRows ? w[oc * s.k + k] : w[linear_packed_index(oc, k, chunks)];
  }
};

void pack_filters(const void* context, void* dst) {
  const PackJob& j = *static_cast<const PackJob*>(context);
  const TileLayout& l = j.s.layout;
  auto* packed = static_cast<uint8_t*>(dst);
  std::memset(packed, 0, j.s.packed_bytes());
  auto* sums = reinterpret_cast<int32_t*>(packed + j.s.weight_bytes());
  for (int32_t oc = 0; oc < j.s.cout; ++oc) {
    uint8_t* block = packed + (oc / l.block_channels) * j.s.block_bytes();
    const int64_t channel = oc % l.block_channels;
    int32_t sum = 0;
    for (int64_t k = 0; k < j.s.k; ++k) {
      const int64_t element = ((k / l.group) * l.block_channels + channel) * l.group + k % l.group;
      const int8_t f = j.at(oc, k);
      if (l.element_bytes() == 1) {
        block[element] = static_cast<uint8_t>(f);
      } else {
        const int16_t w = f;
        std::memcpy(block + 2 * element, &w, 2);
      }
      sum += f;
    }
    sums[oc] = sum;
  }
}

// The filters packed: from the program's constant cache where the weight is a constant of a
// loaded program (packed on its first call), else packed now into scratch; nullptr when neither
// has room.
const uint8_t* packed_filters(KernelContext& ctx, const Tensor& weight, const Shape& s,
                              WeightLayout layout) {
  const PackJob job{static_cast<const int8_t*>(weight.const_data()), s, layout, linear_chunks(s.k)};
  const size_t source = weight.nbytes();
  if (ConstantCache* cache = constant_cache_for(job.w, source)) {
    const ConstantKey key{job.w,
                          layout == WeightLayout::kRows ? kPackedFiltersKind : kPackedLinearKind,
                          {s.cout, s.k, s.kgroups, s.layout.block_channels, s.layout.group,
                           static_cast<int64_t>(s.layout.format)}};
    if (const void* block =
            cache->get_or_derive(key, source, s.packed_bytes(), &pack_filters, &job))
      return static_cast<const uint8_t*>(block);
  }
  void* scratch = ctx.allocate_scratch(s.packed_bytes(), 64);
  if (scratch == nullptr) return nullptr;
  pack_filters(&job, scratch);
  return static_cast<const uint8_t*>(scratch);
}

// n bytes of x as x + 128 (x ^ 0x80), eight at a time.
void copy_flipped(const int8_t* x, int64_t n, uint8_t* d) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    uint64_t v;
    std::memcpy(&v, x + c, 8);
    v ^= 0x8080808080808080ull;
    std::memcpy(d + c, &v, 8);
  }
  for (; c < n; ++c) d[c] = static_cast<uint8_t>(x[c]) ^ 0x80u;
}

// n values of x as int16 x + offset.
void copy_offset(const int8_t* x, int64_t n, int32_t offset, int16_t* d) {
  for (int64_t c = 0; c < n; ++c) d[c] = static_cast<int16_t>(x[c] + offset);
}

template <RowFormat F>
using RowElement =
    std::conditional_t<F == RowFormat::kOffsetInt16, int16_t,
                       std::conditional_t<F == RowFormat::kUnsignedBytes, uint8_t, int8_t>>;

// n input values as format F's row elements.
template <RowFormat F>
void put_elements(const int8_t* x, int64_t n, int32_t in_off, RowElement<F>* d) {
  if constexpr (F == RowFormat::kUnsignedBytes) {
    copy_flipped(x, n, d);
  } else if constexpr (F == RowFormat::kSignedBytes) {
    std::memcpy(d, x, static_cast<size_t>(n));
  } else {
    copy_offset(x, n, in_off, d);
  }
}

// One output pixel's im2col row in format F (int8_tile.h): every tap's input channels, taps
// outside the input as the format's padding, then zeros up to `length` elements. `p` is a
// copy: stores through the row cannot alias it, so its fields stay in registers.
template <RowFormat F>
void im2col_row(const int8_t* in, const ConvParams p, int64_t pixel, int64_t length, void* row) {
  using Element = RowElement<F>;
  auto put = [&](Element* d, const int8_t* x, int64_t n) { put_elements<F>(x, n, p.in_off, d); };
  Element pad{0};
  if constexpr (F == RowFormat::kUnsignedBytes) pad = static_cast<Element>((-p.in_off) ^ 0x80);
  if constexpr (F == RowFormat::kSignedBytes) pad = static_cast<Element>(-p.in_off);
  const int64_t plane = static_cast<int64_t>(p.oh) * p.ow;
  const int64_t b = pixel / plane, rest = pixel % plane;
  const int32_t y0 = static_cast<int32_t>(rest / p.ow) * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = static_cast<int32_t>(rest % p.ow) * p.win.stride[1] - p.win.padding[1];
  const int64_t cin = p.cin, span = p.kw * cin;  // elements of one kernel row
  const bool whole_rows = p.win.dilation[1] == 1 && x0 >= 0 && x0 + p.kw <= p.w;
  Element* d = static_cast<Element*>(row);
  Element* const end = d + length;
  for (int32_t ky = 0; ky < p.kh; ++ky) {
    const int32_t iy = y0 + ky * p.win.dilation[0];
    if (iy < 0 || iy >= p.h) {
      std::fill(d, d + span, pad);
      d += span;
      continue;
    }
    const int8_t* line = in + (b * p.h + iy) * p.w * cin;
    if (whole_rows) {  // the kernel row's pixels are adjacent in NHWC: one copy
      put(d, line + x0 * cin, span);
      d += span;
      continue;
    }
    for (int32_t kx = 0; kx < p.kw; ++kx, d += cin) {
      const int32_t ix = x0 + kx * p.win.dilation[1];
      if (ix < 0 || ix >= p.w) {
        std::fill(d, d + cin, pad);
      } else {
        put(d, line + ix * cin, cin);
      }
    }
  }
  std::fill(d, end, Element{0});
}

// The rows of pixels [first, first + count), row_bytes apart, in format F.
template <RowFormat F>
void im2col_rows_as(const int8_t* in, const ConvParams& p, int64_t first, int64_t count,
                    int64_t length, int64_t row_bytes, uint8_t* rows) {
  using Element = RowElement<F>;
  const bool pointwise = p.kh == 1 && p.kw == 1 && p.win.stride[0] == 1 && p.win.stride[1] == 1 &&
                         p.win.padding[0] == 0 && p.win.padding[1] == 0;
  if (pointwise) {  // output pixel i reads input pixel i alone: its channels are the row
    for (int64_t i = 0; i < count; ++i) {
      Element* d = reinterpret_cast<Element*>(rows + i * row_bytes);
      put_elements<F>(in + (first + i) * p.cin, p.cin, p.in_off, d);
      std::fill(d + p.cin, d + length, Element{0});
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) im2col_row<F>(in, p, first + i, length, rows + i * row_bytes);
}

void im2col_rows(RowFormat format, const int8_t* in, const ConvParams& p, int64_t first,
                 int64_t count, int64_t length, int64_t row_bytes, uint8_t* rows) {
  switch (format) {
    case RowFormat::kUnsignedBytes:
      return im2col_rows_as<RowFormat::kUnsignedBytes>(in, p, first, count, length, row_bytes,
                                                       rows);
    case RowFormat::kSignedBytes:
      return im2col_rows_as<RowFormat::kSignedBytes>(in, p, first, count, length, row_bytes, rows);
    case RowFormat::kOffsetInt16:
      return im2col_rows_as<RowFormat::kOffsetInt16>(in, p, first, count, length, row_bytes, rows);
  }
}

struct Job {
  const int8_t* in;
  int8_t* out;
  const ConvParams* p;
  const Isa* isa;
  Shape s;
  const uint8_t* filters;
  const int32_t *corr, *mult, *left, *right;  // s.channels() each
  int64_t pixels, pixel_tasks, block_tasks, blocks_per_task;
  uint8_t* rows;  // kTaskPixels rows of row_bytes per worker slot
  int64_t row_bytes, row_elements;
  std::atomic<int64_t> next{0};
};

// One worker slot: takes tasks until none is left; keeps its pixels' rows while consecutive
// tasks share them (tasks go pixel block by pixel block, channel blocks inside).
void run_slot(void* context, size_t slot) {
  Job& j = *static_cast<Job*>(context);
  const ConvParams& p = *j.p;
  const TileLayout& l = j.s.layout;
  uint8_t* rows = j.rows + static_cast<int64_t>(slot) * kTaskPixels * j.row_bytes;
  int64_t rows_of = -1;
  for (int64_t task;
       (task = j.next.fetch_add(1, std::memory_order_relaxed)) < j.pixel_tasks * j.block_tasks;) {
    const int64_t pixel_task = task / j.block_tasks, block_task = task % j.block_tasks;
    const int64_t first = pixel_task * kTaskPixels;
    const int64_t count = j.pixels - first < kTaskPixels ? j.pixels - first : kTaskPixels;
    if (rows_of != pixel_task) {
      im2col_rows(l.format, j.in, p, first, count, j.row_elements, j.row_bytes, rows);
      rows_of = pixel_task;
    }
    const int64_t block_end = (block_task + 1) * j.blocks_per_task < j.s.blocks
                                  ? (block_task + 1) * j.blocks_per_task
                                  : j.s.blocks;
    for (int64_t b = block_task * j.blocks_per_task; b < block_end; ++b) {
      const int64_t c0 = b * l.block_channels;
      Int8Tile t{};
      t.row_stride = j.row_bytes;
      t.weights = j.filters + b * j.s.block_bytes();
      t.kgroups = j.s.kgroups;
      t.corr = j.corr + c0, t.mult = j.mult + c0, t.left = j.left + c0, t.right = j.right + c0;
      t.channels =
          static_cast<int>(p.cout - c0 < l.block_channels ? p.cout - c0 : l.block_channels);
      t.out_stride = p.cout;
      t.out_off = p.out_off, t.act_min = p.act_min, t.act_max = p.act_max;
      for (int64_t r = 0; r < count; r += l.rows) {
        t.rows = rows + r * j.row_bytes;
        t.row_count = static_cast<int>(count - r < l.rows ? count - r : l.rows);
        t.out = j.out + (first + r) * p.cout + c0;
        j.isa->tile(t);
      }
    }
  }
}

}  // namespace

bool conv2d(KernelContext& ctx, const int8_t* in, const Tensor& weight, int8_t* out,
            const ConvParams& p, WeightLayout layout) {
  const Isa* chosen = isa();
  if (chosen == nullptr) return false;
  const TileLayout& l = chosen->layout;
  Shape s{};
  s.layout = l;
  s.cout = p.cout;
  s.k = static_cast<int64_t>(p.kh) * p.kw * p.cin;
  s.kgroups = round_up(round_up(s.k, l.group) / l.group, l.group_multiple);
  s.blocks = round_up(p.cout, l.block_channels) / l.block_channels;
  const int64_t pixels = static_cast<int64_t>(p.n) * p.oh * p.ow;
  const int64_t row_elements = s.kgroups * l.group;
  const int64_t row_bytes = round_up(row_elements * l.element_bytes(), 64);
  const int64_t channels = s.channels();

  pthreadpool_t pool = pixels * p.cout * s.k >= kMinParallelMacs ? shared_threadpool() : nullptr;
  if (pool != nullptr)
    in = input_for_threads(ctx, in, static_cast<int64_t>(p.n) * p.h * p.w * p.cin, out,
                           pixels * p.cout, &pool);
  const size_t slots = pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
  const size_t records = static_cast<size_t>(4 * channels) * sizeof(int32_t);
  const size_t row_space = slots * static_cast<size_t>(kTaskPixels * row_bytes);
  auto* scratch = static_cast<uint8_t*>(ctx.allocate_scratch(records + row_space, 64));
  if (scratch == nullptr) return false;
  const uint8_t* filters = packed_filters(ctx, weight, s, layout);
  if (filters == nullptr) return false;

  // The input offset's share the rows leave out (int8_tile.h).
  const int32_t offset_weight = l.format == RowFormat::kUnsignedBytes ? p.in_off - 128
                                : l.format == RowFormat::kSignedBytes ? p.in_off
                                                                      : 0;
  auto* corr = reinterpret_cast<int32_t*>(scratch);
  int32_t* mult = corr + channels;
  int32_t* left = mult + channels;
  int32_t* right = left + channels;
  const auto* sums = reinterpret_cast<const int32_t*>(filters + s.weight_bytes());
  for (int64_t c = 0; c < channels; ++c) {
    const bool real = c < p.cout;
    const int32_t shift = real ? p.shift[c] : 0;
    corr[c] = real ? (p.bias ? p.bias[c] : 0) + offset_weight * sums[c] : 0;
    mult[c] = real ? p.mult[c] : 0;
    left[c] = requantize_left_shift(shift);
    right[c] = requantize_right_shift(shift);
  }

  Job job;
  job.in = in, job.out = out, job.p = &p, job.isa = chosen, job.s = s, job.filters = filters;
  job.corr = corr, job.mult = mult, job.left = left, job.right = right;
  job.pixels = pixels;
  job.pixel_tasks = (pixels + kTaskPixels - 1) / kTaskPixels;
  job.blocks_per_task = kTaskChannels / l.block_channels;
  job.block_tasks = (s.blocks + job.blocks_per_task - 1) / job.blocks_per_task;
  job.rows = scratch + records;
  job.row_bytes = row_bytes;
  job.row_elements = row_elements;
  pthreadpool_parallelize_1d(pool, &run_slot, &job, slots, pool_call_flags());
  return true;
}

}  // namespace pteron::cortex_m::host
