#include "compiler/memory/memory_planner.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace pteron::compiler {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

bool lifetimes_overlap(const TensorLifetime& a, const TensorLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Lowest-waste offset in one arena for tensor `t`, given the tensors already placed there.
// Returns the offset; `end` receives offset + size.
uint64_t best_fit_offset(const TensorLifetime& t, uint64_t size,
                         const std::vector<std::pair<uint64_t, uint64_t>>& busy,
                         uint64_t alignment) {
  // `busy`: [offset, end) of placed tensors alive at the same time, sorted by offset.
  uint64_t best = UINT64_MAX, best_gap = UINT64_MAX;
  uint64_t cursor = 0;
  for (const auto& [start, end] : busy) {
    const uint64_t candidate = align_up(cursor, alignment);
    if (start >= candidate && start - candidate >= size) {
      const uint64_t gap = start - candidate;
      if (gap < best_gap) {
        best_gap = gap;
        best = candidate;
      }
    }
    cursor = std::max(cursor, end);
  }
  if (best == UINT64_MAX) best = align_up(cursor, alignment);
  (void)t;
  return best;
}

}  // namespace

// Places tensors in the given order, each at its best-fit offset in the first arena with room.
MemoryPlan place_in_order(const std::vector<TensorLifetime>& tensors,
                          const std::vector<size_t>& order, const std::vector<MemoryArena>& arenas,
                          uint64_t alignment) {
  MemoryPlan plan;
  plan.placements.resize(tensors.size());
  for (const MemoryArena& r : arenas) plan.arenas.push_back({r.name, r.mem_id, r.capacity, 0});

  // Lower bound: the most bytes alive at once (each tensor rounded to the alignment).
  int horizon = 0;
  for (const auto& t : tensors) horizon = std::max(horizon, t.last + 1);
  std::vector<uint64_t> live(static_cast<size_t>(horizon) + 1, 0);
  for (const auto& t : tensors) {
    for (int i = t.first; i <= t.last; ++i)
      live[static_cast<size_t>(i)] += align_up(t.bytes, alignment);
  }
  plan.peak_live_bytes = live.empty() ? 0 : *std::max_element(live.begin(), live.end());

  std::vector<std::vector<size_t>> placed(arenas.size());
  for (size_t idx : order) {
    const TensorLifetime& t = tensors[idx];
    const uint64_t size = t.bytes;
    bool done = false;
    for (size_t r = 0; r < arenas.size() && !done; ++r) {
      std::vector<std::pair<uint64_t, uint64_t>> busy;
      for (size_t other : placed[r]) {
        if (lifetimes_overlap(t, tensors[other])) {
          busy.emplace_back(plan.placements[other].offset,
                            plan.placements[other].offset + tensors[other].bytes);
        }
      }
      std::sort(busy.begin(), busy.end());
      const uint64_t offset = best_fit_offset(t, size, busy, alignment);
      if (arenas[r].capacity != 0 && offset + size > arenas[r].capacity) continue;
      plan.placements[idx] = {arenas[r].mem_id, offset};
      placed[r].push_back(idx);
      plan.arenas[r].used = std::max(plan.arenas[r].used, align_up(offset + size, alignment));
      done = true;
    }
    if (!done) {
      plan.fits = false;
      char why[256];
      uint64_t capacity = 0;
      for (const auto& r : arenas) capacity += r.capacity;
      std::snprintf(
          why, sizeof(why),
          "a %llu-byte tensor (live at instructions %d..%d) does not fit: %llu bytes must be "
          "live at once at the peak, the target's planned memory holds %llu",
          static_cast<unsigned long long>(t.bytes), t.first, t.last,
          static_cast<unsigned long long>(plan.peak_live_bytes),
          static_cast<unsigned long long>(capacity));
      plan.why_not = why;
      return plan;
    }
  }
  for (const auto& r : plan.arenas) plan.total_arena_bytes += r.used;
  return plan;
}

MemoryPlan plan_memory(const std::vector<TensorLifetime>& tensors,
                       const std::vector<MemoryArena>& arenas, uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  // Greedy placement is order-sensitive; try the orders that win on different graph shapes and
  // keep the smallest plan: by size, by size x lifetime (area), and by first use.
  auto sorted = [&](auto less) {
    std::vector<size_t> order(tensors.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    return order;
  };
  auto area = [&](size_t i) {
    return tensors[i].bytes * static_cast<uint64_t>(tensors[i].last - tensors[i].first + 1);
  };
  auto span = [&](size_t i) { return tensors[i].last - tensors[i].first; };
  const std::vector<std::vector<size_t>> orders = {
      sorted([&](size_t a, size_t b) { return tensors[a].bytes > tensors[b].bytes; }),
      sorted([&](size_t a, size_t b) { return area(a) > area(b); }),
      sorted([&](size_t a, size_t b) { return tensors[a].first < tensors[b].first; }),
      sorted([&](size_t a, size_t b) { return span(a) > span(b); }),
      sorted([&](size_t a, size_t b) {
        return tensors[a].bytes != tensors[b].bytes ? tensors[a].bytes > tensors[b].bytes
                                                    : span(a) > span(b);
      }),
  };
  MemoryPlan best;
  bool have = false;
  for (const auto& order : orders) {
    MemoryPlan plan = place_in_order(tensors, order, arenas, alignment);
    const bool better = !have || (plan.fits && !best.fits) ||
                        (plan.fits == best.fits && plan.total_arena_bytes < best.total_arena_bytes);
    if (better) {
      best = std::move(plan);
      have = true;
    }
  }
  return best;
}

std::string check_memory_plan(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan) {
  if (plan.placements.size() != tensors.size()) return "plan has a different number of tensors";
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.placements[a].mem_id != plan.placements[b].mem_id
               ? plan.placements[a].mem_id < plan.placements[b].mem_id
               : plan.placements[a].offset < plan.placements[b].offset;
  });
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Placement& p = plan.placements[i];
    const auto arena = std::find_if(plan.arenas.begin(), plan.arenas.end(),
                                    [&](const ArenaUsage& r) { return r.mem_id == p.mem_id; });
    if (arena == plan.arenas.end())
      return "tensor " + std::to_string(i) + " is in an unknown arena";
    if (p.offset + tensors[i].bytes > arena->used) {
      return "tensor " + std::to_string(i) + " extends past its arena";
    }
  }
  // Sweep by offset: any two overlapping address ranges must have disjoint lifetimes.
  for (size_t a = 0; a < order.size(); ++a) {
    const size_t i = order[a];
    const uint64_t end_i = plan.placements[i].offset + tensors[i].bytes;
    for (size_t b = a + 1; b < order.size(); ++b) {
      const size_t j = order[b];
      if (plan.placements[j].mem_id != plan.placements[i].mem_id ||
          plan.placements[j].offset >= end_i)
        break;
      if (tensors[j].bytes == 0 || tensors[i].bytes == 0) continue;
      if (lifetimes_overlap(tensors[i], tensors[j])) {
        return "tensors " + std::to_string(i) + " and " + std::to_string(j) +
               " are alive together and overlap in arena " +
               std::to_string(plan.placements[i].mem_id);
      }
    }
  }
  return "";
}

std::string describe_memory_plan(const MemoryPlan& plan) {
  std::string s;
  char line[200];
  for (const auto& r : plan.arenas) {
    if (r.capacity) {
      std::snprintf(line, sizeof(line), "  arena %u (%s): %llu bytes of %llu (%.1f%%)\n", r.mem_id,
                    r.name.c_str(), static_cast<unsigned long long>(r.used),
                    static_cast<unsigned long long>(r.capacity),
                    100.0 * static_cast<double>(r.used) / static_cast<double>(r.capacity));
    } else {
      std::snprintf(line, sizeof(line), "  arena %u (%s): %llu bytes\n", r.mem_id, r.name.c_str(),
                    static_cast<unsigned long long>(r.used));
    }
    s += line;
  }
  std::snprintf(line, sizeof(line), "  lower bound (peak live bytes): %llu, efficiency %.1f%%\n",
                static_cast<unsigned long long>(plan.peak_live_bytes), 100.0 * plan.efficiency());
  s += line;
  return s;
}

}  // namespace pteron::compiler
