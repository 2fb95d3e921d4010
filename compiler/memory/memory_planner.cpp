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

// Starts a tensor may not take because of one tensor placed before it and alive with it: the
// open interval (lo, hi). Apart, a tensor of `size` bytes must end by the other's offset or
// start at its end: lo = offset - size, hi = end.
struct Forbidden {
  int64_t lo = 0;
  int64_t hi = 0;
};

// The lowest-waste start in one arena: after one of the forbidden intervals (or at 0), the one
// leaving the least room before the next forbidden interval begins (best fit), else after them
// all. Linear after sorting, which keeps large graphs cheap.
uint64_t best_fit_offset(std::vector<Forbidden> forbidden, uint64_t alignment) {
  std::sort(forbidden.begin(), forbidden.end(),
            [](const Forbidden& a, const Forbidden& b) { return a.lo < b.lo; });
  // Merge overlapping intervals (touching ones keep the start between them free).
  std::vector<Forbidden> merged;
  for (const Forbidden& f : forbidden) {
    if (f.hi <= 0 || f.hi <= f.lo + 1) continue;  // no start >= 0 inside it
    if (!merged.empty() && f.lo < merged.back().hi) {
      merged.back().hi = std::max(merged.back().hi, f.hi);
    } else {
      merged.push_back(f);
    }
  }
  uint64_t best = UINT64_MAX, best_slack = UINT64_MAX;
  // Candidates: 0, then the end of each merged interval; each must come before the next
  // interval's start (or at it: the interval is open).
  for (size_t k = 0; k <= merged.size(); ++k) {
    const int64_t after = k == 0 ? 0 : merged[k - 1].hi;
    const auto candidate = static_cast<int64_t>(align_up(static_cast<uint64_t>(after), alignment));
    if (k == 0 && !merged.empty() && merged[0].lo < 0) continue;  // 0 lies inside the first
    if (k == merged.size()) {
      if (best == UINT64_MAX) best = static_cast<uint64_t>(candidate);
      break;
    }
    const int64_t next = merged[k].lo;
    if (candidate > next) continue;
    const auto slack = static_cast<uint64_t>(next - candidate);
    if (slack < best_slack) {
      best_slack = slack;
      best = static_cast<uint64_t>(candidate);
    }
  }
  return best;
}

// The tensors an in-place pair relates to each tensor: (the other, lag, whether this one is the
// output).
struct Partner {
  size_t other = 0;
  uint64_t lag = 0;
  bool is_output = false;
};
std::vector<std::vector<Partner>> partners_of(size_t count, const std::vector<InPlacePair>& pairs) {
  std::vector<std::vector<Partner>> partners(count);
  for (const InPlacePair& p : pairs) {
    partners[p.output].push_back({p.input, p.lag, true});
    partners[p.input].push_back({p.output, p.lag, false});
  }
  return partners;
}

// Where `t` (of `size` bytes) may not start given `o` placed at [offset, offset + o_size):
// apart, or, for an in-place pair, the output at least `lag` bytes before the input.
Forbidden forbidden_starts(uint64_t size, uint64_t offset, uint64_t o_size,
                           const Partner* partner) {
  const auto off = static_cast<int64_t>(offset), end = static_cast<int64_t>(offset + o_size);
  if (partner == nullptr) return {off - static_cast<int64_t>(size), end};
  if (partner->is_output)  // t is the output: at or below offset - lag, or apart
    return {off - static_cast<int64_t>(std::min(partner->lag, size)), end};
  // t is the input: at or above the output's offset + lag, or apart
  return {off - static_cast<int64_t>(size),
          off + static_cast<int64_t>(std::min(partner->lag, o_size))};
}

const Partner* find_partner(const std::vector<Partner>& partners, size_t other) {
  for (const Partner& p : partners)
    if (p.other == other) return &p;
  return nullptr;
}

// `order` with each in-place output moved before its input (recursively: a chain's last
// output first), so that the input, placed second, can start its lag above the output: the
// output can never start below a tensor placed at offset 0 before it.
std::vector<size_t> outputs_first(const std::vector<size_t>& order,
                                  const std::vector<std::vector<Partner>>& partners) {
  std::vector<size_t> out;
  out.reserve(order.size());
  std::vector<bool> taken(order.size(), false);
  std::vector<std::pair<size_t, size_t>> stack;  // (tensor, next partner to look at)
  for (size_t first : order) {
    if (taken[first]) continue;
    stack.emplace_back(first, 0);
    taken[first] = true;
    while (!stack.empty()) {
      auto& [t, next] = stack.back();
      if (next < partners[t].size()) {
        const Partner& p = partners[t][next++];
        if (!p.is_output && !taken[p.other]) {  // t is p's input: its output goes first
          taken[p.other] = true;
          stack.emplace_back(p.other, 0);
        }
        continue;
      }
      out.push_back(t);
      stack.pop_back();
    }
  }
  return out;
}

// Places tensors in the given order, each at its best-fit offset in the first arena with room.
MemoryPlan place_in_order(const std::vector<TensorLifetime>& tensors,
                          const std::vector<size_t>& order, const std::vector<MemoryArena>& arenas,
                          uint64_t alignment, const std::vector<std::vector<Partner>>& partners) {
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
  for (size_t idx : outputs_first(order, partners)) {
    const TensorLifetime& t = tensors[idx];
    const uint64_t size = t.bytes;
    if (size == 0 && !arenas.empty()) {  // an empty tensor takes no bytes and bars none
      plan.placements[idx] = {arenas[0].mem_id, 0};
      continue;
    }
    bool done = false;
    for (size_t r = 0; r < arenas.size() && !done; ++r) {
      std::vector<Forbidden> forbidden;
      for (size_t other : placed[r]) {
        if (lifetimes_overlap(t, tensors[other])) {
          forbidden.push_back(forbidden_starts(size, plan.placements[other].offset,
                                               tensors[other].bytes,
                                               find_partner(partners[idx], other)));
        }
      }
      const uint64_t offset = best_fit_offset(std::move(forbidden), alignment);
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

}  // namespace

MemoryPlan plan_memory(const std::vector<TensorLifetime>& tensors,
                       const std::vector<MemoryArena>& arenas, uint64_t alignment,
                       const std::vector<InPlacePair>& in_place) {
  if (alignment == 0) alignment = 1;
  const std::vector<std::vector<Partner>> partners = partners_of(tensors.size(), in_place);
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
  // Each order with the in-place pairs and without them: overlapping a pair can cost more than
  // it saves elsewhere (a long chain of outputs each below its input drifts down the arena).
  const std::vector<std::vector<Partner>> apart(tensors.size());
  MemoryPlan best;
  bool have = false;
  for (size_t k = 0; k < 2 * orders.size(); ++k) {
    if (k >= orders.size() && in_place.empty()) break;
    MemoryPlan plan = place_in_order(tensors, orders[k % orders.size()], arenas, alignment,
                                     k < orders.size() ? partners : apart);
    const bool better = !have || (plan.fits && !best.fits) ||
                        (plan.fits == best.fits && plan.total_arena_bytes < best.total_arena_bytes);
    if (better) {
      best = std::move(plan);
      have = true;
    }
  }
  return best;
}

std::string check_memory_plan(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan,
                              const std::vector<InPlacePair>& in_place) {
  if (plan.placements.size() != tensors.size()) return "plan has a different number of tensors";
  // An in-place pair may overlap with the output at least its lag before the input.
  const std::vector<std::vector<Partner>> partners = partners_of(tensors.size(), in_place);
  auto allowed = [&](size_t a, size_t b) {
    const Partner* p = find_partner(partners[a], b);
    if (p == nullptr) return false;
    const size_t output = p->is_output ? a : b, input = p->is_output ? b : a;
    return plan.placements[output].offset + p->lag <= plan.placements[input].offset;
  };
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
      if (lifetimes_overlap(tensors[i], tensors[j]) && !allowed(i, j)) {
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
