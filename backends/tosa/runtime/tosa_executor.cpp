#include "backends/tosa/runtime/tosa_executor.h"

#include <cstring>

#include "backends/tosa/runtime/ops/tosa_ops.h"

namespace pteron::tosa_rt {
namespace {

constexpr size_t kAlign = 16;

size_t align_up(size_t v) { return (v + kAlign - 1) & ~(kAlign - 1); }

// Carves typed tables out of the caller's block; with base == nullptr it only measures.
class Carver {
 public:
  Carver(uint8_t* base, size_t capacity) : base_(base), capacity_(capacity) {}
  template <typename T>
  T* take(size_t count) {
    size_t at = align_up(used_);
    used_ = at + count * sizeof(T);
    if (base_ == nullptr || used_ > capacity_) return nullptr;
    T* p = reinterpret_cast<T*>(base_ + at);
    for (size_t i = 0; i < count; ++i) new (&p[i]) T();
    return p;
  }
  size_t used() const { return align_up(used_); }

 private:
  uint8_t* base_;
  size_t capacity_;
  size_t used_ = 0;
};

int32_t find_tensor(const TosaTensor* tensors, int32_t n, const flatbuffers::String* name) {
  if (name == nullptr) return -1;
  for (int32_t i = 0; i < n; ++i) {
    if (std::strcmp(tensors[i].name, name->c_str()) == 0) return i;
  }
  return -1;
}

Error fill_tensor(const tosa::TosaTensor* t, TosaTensor* out) {
  out->name = t->name() ? t->name()->c_str() : "";
  out->dtype = t->type();
  if (dtype_size(out->dtype) == 0) {
    return fail(Error::NotSupported,
                "TOSA graph: tensor '%s' has dtype %s, which the executor "
                "does not handle",
                out->name, tosa::EnumNameDType(out->dtype));
  }
  if (t->is_unranked() || t->variable()) {
    return fail(Error::NotSupported, "TOSA graph: tensor '%s' is unranked or variable", out->name);
  }
  const auto* shape = t->shape();
  out->rank = shape ? int32_t(shape->size()) : 0;
  if (out->rank > kMaxRank) {
    return fail(Error::NotSupported, "TOSA graph: tensor '%s' has rank %d (at most %d)", out->name,
                out->rank, kMaxRank);
  }
  out->numel = 1;
  for (int32_t d = 0; d < out->rank; ++d) {
    int32_t v = shape->Get(d);
    if (v < 0 || (v > 0 && out->numel > (int64_t(1) << 40) / v)) {
      return fail(Error::InvalidProgram, "TOSA graph: tensor '%s' has dimension %d = %d", out->name,
                  d, v);
    }
    out->shape[d] = v;
    out->numel *= v;
  }
  if (t->data() != nullptr && t->data()->size() > 0) {
    if (t->data()->size() != tensor_bytes(*out)) {
      return fail(Error::InvalidProgram,
                  "TOSA graph: constant '%s' holds %u bytes, its shape and dtype need %zu",
                  out->name, t->data()->size(), tensor_bytes(*out));
    }
    out->data = const_cast<uint8_t*>(t->data()->data());
    out->is_const = true;
  }
  return Error::Ok;
}

// Places the intermediates in the arena: largest first, each at the lowest offset that does
// not overlap a placed tensor whose lifetime overlaps its own. Returns the arena size.
size_t plan_arena(TosaTensor* tensors, int32_t n, bool* placed) {
  size_t arena = 0;
  for (int32_t i = 0; i < n; ++i) placed[i] = false;
  auto planned = [&](const TosaTensor& t) {
    return t.producer >= 0 && !t.is_output && !t.is_const;
  };
  for (;;) {
    int32_t pick = -1;
    for (int32_t i = 0; i < n; ++i) {
      if (placed[i] || !planned(tensors[i])) continue;
      if (pick < 0 || tensor_bytes(tensors[i]) > tensor_bytes(tensors[pick])) pick = i;
    }
    if (pick < 0) break;
    TosaTensor& t = tensors[pick];
    size_t size = align_up(tensor_bytes(t));
    int32_t begin = t.producer, end = t.last_use > t.producer ? t.last_use : t.producer;
    // Candidate offsets: 0 and the end of every conflicting placed tensor.
    size_t best = SIZE_MAX;
    for (int32_t c = -1; c < n; ++c) {
      size_t offset = 0;
      if (c >= 0) {
        const TosaTensor& o = tensors[c];
        if (!placed[c]) continue;
        offset = o.arena_offset + align_up(tensor_bytes(o));
      }
      if (offset >= best) continue;
      bool fits = true;
      for (int32_t j = 0; j < n && fits; ++j) {
        if (!placed[j]) continue;
        const TosaTensor& o = tensors[j];
        int32_t ob = o.producer, oe = o.last_use > o.producer ? o.last_use : o.producer;
        bool live_overlap = !(oe < begin || end < ob);
        size_t os = o.arena_offset, oz = align_up(tensor_bytes(o));
        bool byte_overlap = offset < os + oz && os < offset + size;
        if (live_overlap && byte_overlap) fits = false;
      }
      if (fits) best = offset;
    }
    t.arena_offset = best;
    placed[pick] = true;
    if (best + size > arena) arena = best + size;
  }
  return arena;
}

}  // namespace

Error TosaExecutor::build(const void* fb, size_t size, uint8_t* memory, size_t capacity,
                          TosaExecutor* out, size_t* used) {
  if (fb == nullptr || size < 8) {
    return fail(Error::InvalidProgram, "TOSA graph: %zu bytes is too short to be a flatbuffer",
                size);
  }
  if (!flatbuffers::BufferHasIdentifier(fb, tosa::TosaGraphIdentifier())) {
    return fail(Error::InvalidProgram, "TOSA graph: missing file identifier \"TOSA\"");
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(fb), size);
  if (!tosa::VerifyTosaGraphBuffer(verifier)) {
    return fail(Error::InvalidProgram, "TOSA graph: flatbuffer failed verification");
  }
  const tosa::TosaGraph* graph = tosa::GetTosaGraph(fb);
  if (graph->regions() == nullptr || graph->regions()->size() != 1) {
    return fail(Error::NotSupported, "TOSA graph: expected one region, found %u",
                graph->regions() ? graph->regions()->size() : 0);
  }
  const tosa::TosaRegion* region = graph->regions()->Get(0);
  if (region->blocks() == nullptr || region->blocks()->size() != 1) {
    return fail(Error::NotSupported,
                "TOSA graph: expected one basic block (no control flow), found %u",
                region->blocks() ? region->blocks()->size() : 0);
  }
  const tosa::TosaBasicBlock* block = region->blocks()->Get(0);
  int32_t n_tensors = block->tensors() ? int32_t(block->tensors()->size()) : 0;
  int32_t n_shapes = block->shapes() ? int32_t(block->shapes()->size()) : 0;
  int32_t n_ops = block->operators() ? int32_t(block->operators()->size()) : 0;
  int32_t n_in = block->inputs() ? int32_t(block->inputs()->size()) : 0;
  int32_t n_out = block->outputs() ? int32_t(block->outputs()->size()) : 0;
  int32_t n_args = 0;
  for (int32_t i = 0; i < n_ops; ++i) {
    const tosa::TosaOperator* op = block->operators()->Get(i);
    n_args +=
        (op->inputs() ? op->inputs()->size() : 0) + (op->outputs() ? op->outputs()->size() : 0);
  }
  int32_t n_all = n_tensors + n_shapes;

  // Align the caller's block; the slack is part of what memory_required() reports.
  uint8_t* base = nullptr;
  size_t cap = 0;
  if (memory != nullptr) {
    size_t mis = reinterpret_cast<uintptr_t>(memory) % kAlign;
    size_t skip = mis ? kAlign - mis : 0;
    base = capacity >= skip ? memory + skip : nullptr;
    cap = capacity >= skip ? capacity - skip : 0;
  }
  Carver carver(base, cap);
  TosaTensor* tensors = carver.take<TosaTensor>(n_all);
  TosaOpRecord* ops = carver.take<TosaOpRecord>(n_ops);
  int32_t* args = carver.take<int32_t>(n_args);
  int32_t* in_ids = carver.take<int32_t>(n_in);
  int32_t* out_ids = carver.take<int32_t>(n_out);
  bool* placed = carver.take<bool>(n_all);
  size_t tables = carver.used();
  bool measuring = base == nullptr || tensors == nullptr || placed == nullptr;
  if (measuring && memory != nullptr) {
    return fail(Error::OutOfMemory, "TOSA executor: %zu bytes given, the tables alone need %zu",
                capacity, tables + kAlign);
  }
  if (measuring) {
    *used = tables + kAlign;
    return Error::Ok;
  }

  for (int32_t i = 0; i < n_tensors; ++i) {
    PTERON_TRY(fill_tensor(block->tensors()->Get(i), &tensors[i]));
  }
  for (int32_t i = 0; i < n_shapes; ++i) {
    const tosa::TosaShape* s = block->shapes()->Get(i);
    TosaTensor& t = tensors[n_tensors + i];
    t.name = s->name() ? s->name()->c_str() : "";
    t.dtype = tosa::DType::SHAPE;
    t.is_shape = true;
    t.rank = 1;
    t.shape[0] = int32_t(s->rank());
    t.numel = s->rank();
    if (s->data() != nullptr && s->data()->size() > 0) {
      if (s->data()->size() != tensor_bytes(t)) {
        return fail(Error::InvalidProgram,
                    "TOSA graph: shape '%s' holds %u bytes, rank %u needs %zu", t.name,
                    s->data()->size(), s->rank(), tensor_bytes(t));
      }
      t.data = const_cast<uint8_t*>(s->data()->data());
      t.is_const = true;
    }
  }
  for (int32_t i = 0; i < n_in; ++i) {
    int32_t id = find_tensor(tensors, n_all, block->inputs()->Get(i));
    if (id < 0) return fail(Error::InvalidProgram, "TOSA graph: input %d names no tensor", i);
    if (tensors[id].is_shape) {
      return fail(Error::NotSupported, "TOSA graph: input '%s' is a shape", tensors[id].name);
    }
    in_ids[i] = id;
    tensors[id].is_input = true;
  }
  for (int32_t i = 0; i < n_out; ++i) {
    int32_t id = find_tensor(tensors, n_all, block->outputs()->Get(i));
    if (id < 0) return fail(Error::InvalidProgram, "TOSA graph: output %d names no tensor", i);
    if (tensors[id].is_shape) {
      return fail(Error::NotSupported, "TOSA graph: output '%s' is a shape", tensors[id].name);
    }
    out_ids[i] = id;
    tensors[id].is_output = true;
  }

  int32_t next_arg = 0;
  for (int32_t i = 0; i < n_ops; ++i) {
    const tosa::TosaOperator* fbop = block->operators()->Get(i);
    TosaOpRecord& rec = ops[i];
    rec.op = fbop->op();
    rec.fb = fbop;
    rec.first_arg = next_arg;
    rec.num_inputs = fbop->inputs() ? int32_t(fbop->inputs()->size()) : 0;
    rec.num_outputs = fbop->outputs() ? int32_t(fbop->outputs()->size()) : 0;
    const char* opname = tosa::EnumNameOp(rec.op);
    if (opname == nullptr || opname[0] == '\0') opname = "UNKNOWN";
    if (!op_supported(rec.op)) {
      return fail(Error::NotSupported,
                  "TOSA graph: operator %d is %s, which the TOSA executor does not implement", i,
                  opname);
    }
    for (int32_t k = 0; k < rec.num_inputs; ++k) {
      int32_t id = find_tensor(tensors, n_all, fbop->inputs()->Get(k));
      if (id < 0) {
        return fail(Error::InvalidProgram, "TOSA graph: operator %d (%s) input %d names no tensor",
                    i, opname, k);
      }
      TosaTensor& t = tensors[id];
      if (!t.is_const && !t.is_input && t.producer < 0) {
        return fail(Error::InvalidProgram,
                    "TOSA graph: operator %d (%s) reads '%s' before anything writes it", i, opname,
                    t.name);
      }
      t.last_use = i;
      args[next_arg++] = id;
    }
    for (int32_t k = 0; k < rec.num_outputs; ++k) {
      int32_t id = find_tensor(tensors, n_all, fbop->outputs()->Get(k));
      if (id < 0) {
        return fail(Error::InvalidProgram, "TOSA graph: operator %d (%s) output %d names no tensor",
                    i, opname, k);
      }
      TosaTensor& t = tensors[id];
      bool is_const_op = rec.op == tosa::Op::CONST || rec.op == tosa::Op::CONST_SHAPE;
      if (is_const_op) {
        if (!t.is_const) {
          return fail(Error::InvalidProgram, "TOSA graph: %s '%s' has no data", opname, t.name);
        }
      } else if (t.is_const || t.is_input || t.producer >= 0) {
        return fail(Error::InvalidProgram,
                    "TOSA graph: operator %d (%s) writes '%s', which is already defined", i, opname,
                    t.name);
      } else {
        t.producer = i;
      }
      args[next_arg++] = id;
    }
  }
  for (int32_t i = 0; i < n_out; ++i) {
    const TosaTensor& t = tensors[out_ids[i]];
    if (!t.is_const && !t.is_input && t.producer < 0) {
      return fail(Error::InvalidProgram, "TOSA graph: output '%s' is never written", t.name);
    }
  }

  size_t arena = plan_arena(tensors, n_all, placed);
  *used = tables + kAlign + arena;
  if (*used > capacity) {
    return fail(Error::OutOfMemory, "TOSA executor: %zu bytes given, the graph needs %zu", capacity,
                *used);
  }
  uint8_t* arena_base = base + tables;
  for (int32_t i = 0; i < n_all; ++i) {
    TosaTensor& t = tensors[i];
    if (t.producer >= 0 && !t.is_output && !t.is_const) t.data = arena_base + t.arena_offset;
  }
  out->tensors_ = tensors;
  out->num_tensors_ = n_all;
  out->ops_ = ops;
  out->num_ops_ = n_ops;
  out->args_ = args;
  out->input_ids_ = in_ids;
  out->output_ids_ = out_ids;
  out->num_inputs_ = size_t(n_in);
  out->num_outputs_ = size_t(n_out);
  out->arena_ = arena_base;
  out->stats_.table_bytes = tables;
  out->stats_.arena_bytes = arena;
  out->stats_.num_ops = n_ops;
  out->stats_.num_tensors = n_all;
  return Error::Ok;
}

Result<size_t> TosaExecutor::memory_required(const void* fb, size_t size) {
  // Tables are measured exactly; the arena is bounded by every non-constant tensor having
  // bytes of its own (the plan at create() shares bytes between tensors that are not live at
  // the same time, so it needs at most this; planned_bytes() reports the exact figure).
  size_t tables = 0;
  TosaExecutor probe;
  PTERON_TRY(build(fb, size, nullptr, 0, &probe, &tables));
  const tosa::TosaBasicBlock* block = tosa::GetTosaGraph(fb)->regions()->Get(0)->blocks()->Get(0);
  size_t arena = 0;
  if (block->tensors() != nullptr) {
    for (const tosa::TosaTensor* t : *block->tensors()) {
      if (t->data() != nullptr && t->data()->size() > 0) continue;
      TosaTensor info;
      PTERON_TRY(fill_tensor(t, &info));
      arena += align_up(tensor_bytes(info));
    }
  }
  return tables + arena;
}

Result<TosaExecutor> TosaExecutor::create(const void* fb, size_t size, Span<uint8_t> memory) {
  TosaExecutor ex;
  size_t used = 0;
  PTERON_TRY(build(fb, size, memory.data(), memory.size(), &ex, &used));
  return ex;
}

Error TosaExecutor::execute(Span<const void* const> inputs, Span<void* const> outputs) {
  if (inputs.size() != num_inputs_ || outputs.size() != num_outputs_) {
    return fail(Error::InvalidArgument,
                "TOSA executor: graph has %zu inputs and %zu outputs, given %zu and %zu",
                num_inputs_, num_outputs_, inputs.size(), outputs.size());
  }
  for (size_t i = 0; i < num_inputs_; ++i) {
    if (inputs[i] == nullptr) {
      return fail(Error::InvalidArgument, "TOSA executor: input %zu is null", i);
    }
    tensors_[input_ids_[i]].data = static_cast<uint8_t*>(const_cast<void*>(inputs[i]));
  }
  for (size_t i = 0; i < num_outputs_; ++i) {
    if (outputs[i] == nullptr) {
      return fail(Error::InvalidArgument, "TOSA executor: output %zu is null", i);
    }
    TosaTensor& t = tensors_[output_ids_[i]];
    if (t.is_const || t.is_input) continue;  // copied below
    t.data = static_cast<uint8_t*>(outputs[i]);
  }
  for (int32_t i = 0; i < num_ops_; ++i) {
    const TosaOpRecord& rec = ops_[i];
    if (rec.op == tosa::Op::CONST || rec.op == tosa::Op::CONST_SHAPE) continue;
    OpArgs a{rec.op,         rec.fb,
             tensors_,       args_ + rec.first_arg,
             rec.num_inputs, args_ + rec.first_arg + rec.num_inputs,
             rec.num_outputs};
    PTERON_TRY(tosa_rt::run_op(a));
  }
  for (size_t i = 0; i < num_outputs_; ++i) {
    const TosaTensor& t = tensors_[output_ids_[i]];
    if (t.is_const || t.is_input) std::memcpy(outputs[i], t.data, tensor_bytes(t));
  }
  return Error::Ok;
}

}  // namespace pteron::tosa_rt
