#include "runtime/host/host_method.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "runtime/executor/plan_choice.h"
#include "runtime/loader/file_data_loader.h"
#include "schema/program_generated.h"

namespace pteron {
namespace {

uint8_t* aligned_bytes(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size == 0 ? 64 : size) != 0) return nullptr;
  return static_cast<uint8_t*>(p);
}

// Load-time memory a delegate declares it needs beyond its handle, as the compile spec
// "pteron.method_bytes" (decimal text), e.g. the Ethos-U emulated driver's planned arena.
size_t declared_method_bytes(const fb::BackendDelegate& d) {
  if (d.compile_specs() == nullptr) return 0;
  for (const fb::CompileSpec* spec : *d.compile_specs()) {
    if (spec->key() == nullptr || spec->value() == nullptr ||
        std::strcmp(spec->key()->c_str(), "pteron.method_bytes") != 0) {
      continue;
    }
    size_t n = 0;
    for (uint8_t c : *spec->value()) {
      if (c < '0' || c > '9' || n > (size_t(1) << 40)) return 0;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return 0;
}

// Load-time memory a method needs: value table, tensor metadata, lists and instruction args.
size_t method_allocator_bytes(const fb::ExecutionPlan& plan) {
  size_t bytes = 4096;
  for (const fb::EValue* v : *plan.values()) {
    bytes += sizeof(EValue) + 16;
    if (v->val_type() == fb::KernelTypes::Tensor) {
      // + 8 per dimension: a dynamic input's bounds.
      bytes += sizeof(Tensor) + 17 * v->val_as_Tensor()->sizes()->size() + 72;
    } else if (v->val_type() == fb::KernelTypes::IntList) {
      bytes += 8 * v->val_as_IntList()->items()->size() + 32;  // + its refresh entry
    } else if (v->val_type() == fb::KernelTypes::TensorList) {
      bytes += 8 * v->val_as_TensorList()->items()->size() + 16;
    } else if (v->val_type() == fb::KernelTypes::OptionalTensorList) {
      bytes += 8 * v->val_as_OptionalTensorList()->items()->size() + 16;
    }
  }
  const size_t n_ops = plan.operators() ? plan.operators()->size() : 0;
  bytes += n_ops * 96;
  const size_t n_delegates = plan.delegates() ? plan.delegates()->size() : 0;
  bytes += n_delegates * 256;
  if (plan.delegates() != nullptr) {
    for (const fb::BackendDelegate* d : *plan.delegates()) {
      bytes += (d->compile_specs() ? d->compile_specs()->size() : 0) * 32;
      bytes += declared_method_bytes(*d);
    }
  }
  for (const fb::Chain* c : *plan.chains()) {
    for (const fb::Instruction* ins : *c->instructions()) {
      bytes += 64;
      if (ins->instr_args_type() == fb::InstructionArguments::KernelCall) {
        bytes += 8 * ins->instr_args_as_KernelCall()->args()->size();
      } else if (ins->instr_args_type() == fb::InstructionArguments::DelegateCall) {
        bytes += 8 * ins->instr_args_as_DelegateCall()->args()->size();
      }
    }
  }
  return bytes;
}

}  // namespace

void HostMethod::AlignedFree::operator()(uint8_t* p) const { std::free(p); }

Result<std::unique_ptr<HostProgram>> HostProgram::open(const char* path) {
  PTERON_ASSIGN_OR_RETURN(MmapDataLoader loader, MmapDataLoader::open(path));
  std::unique_ptr<HostProgram> hp(new HostProgram());
  hp->loader_ = std::make_unique<MmapDataLoader>(std::move(loader));
  PTERON_ASSIGN_OR_RETURN(Program program, Program::load(hp->loader_.get()));
  hp->program_.emplace(std::move(program));
  hp->start_constant_cache(/*file_mapped=*/true);
  return hp;
}

Result<std::unique_ptr<HostProgram>> HostProgram::from_bytes(const void* bytes, size_t size) {
  std::unique_ptr<HostProgram> hp(new HostProgram());
  hp->owned_bytes_.resize((size + 7) / 8);
  if (size > 0) std::memcpy(hp->owned_bytes_.data(), bytes, size);
  hp->loader_ = std::make_unique<BufferDataLoader>(hp->owned_bytes_.data(), size);
  PTERON_ASSIGN_OR_RETURN(Program program, Program::load(hp->loader_.get()));
  hp->program_.emplace(std::move(program));
  hp->start_constant_cache(/*file_mapped=*/false);
  return hp;
}

void HostProgram::start_constant_cache(bool file_mapped) {
  const char* env = std::getenv("PTERON_CONSTANT_CACHE");
  if (env != nullptr && std::strcmp(env, "off") == 0) return;
  // The whole file: the flatbuffer (inline constant buffers) and every segment (the constant
  // segment), a view of the mapping or of owned_bytes_, immutable while the program lives.
  Result<FreeableBuffer> whole = loader_->load(0, loader_->size());
  if (!whole.ok()) return;  // kernels then pack per call, as without a cache
  file_bytes_.emplace(std::move(whole.get()));
  constant_cache_->register_memory({file_bytes_->bytes(), file_bytes_->size()}, file_mapped);
}

namespace {

// True when every tensor `plan` places in memory id `mem_id` lies inside one of its state
// tensors (planned, with an initial value): the arena then holds nothing but state and the
// in-place updates of it, and methods may share it. ExecuTorch's share_mutable_buffers plans
// state so (memory id 2); its default plan mixes state with activations, which stay private.
bool holds_only_state(const fb::ExecutionPlan& plan, uint32_t mem_id) {
  struct Range {
    uint64_t offset, nbytes;
    bool state;
  };
  std::vector<Range> ranges;
  for (const fb::EValue* v : *plan.values()) {
    if (v->val_type() != fb::KernelTypes::Tensor) continue;
    const fb::Tensor* t = v->val_as_Tensor();
    const fb::AllocationDetails* a = t->allocation_info();
    if (a == nullptr || a->memory_id() != mem_id) continue;
    uint64_t nbytes = element_size(static_cast<ScalarType>(t->scalar_type()));
    for (int32_t s : *t->sizes()) nbytes *= static_cast<uint64_t>(s);
    const uint64_t offset =
        (static_cast<uint64_t>(a->memory_offset_high()) << 32) | a->memory_offset_low();
    ranges.push_back({offset, nbytes, t->data_buffer_idx() != 0});
  }
  bool any_state = false;
  for (const Range& r : ranges) {
    if (r.state) {
      any_state = true;
      continue;
    }
    bool inside = false;
    for (const Range& s : ranges) {
      inside |= s.state && r.offset >= s.offset && r.offset + r.nbytes <= s.offset + s.nbytes;
    }
    if (!inside) return false;
  }
  return any_state;
}

}  // namespace

Span<uint8_t> HostProgram::shared_state_arena(uint32_t mem_id, size_t max_bytes) const {
  for (size_t k = 0; k < state_arenas_.size(); ++k) {
    if (state_arenas_[k].first == mem_id) return state_spans_[k];
  }
  size_t size = 0;
  const Program& p = program();
  for (size_t m = 0; m < p.num_methods(); ++m) {
    const fb::ExecutionPlan* plan =
        p.flatbuffer()->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(m));
    const auto* sizes = plan->non_const_buffer_sizes();
    if (sizes != nullptr && mem_id < sizes->size()) {
      const int64_t s = sizes->Get(mem_id);
      if (s > 0 && static_cast<uint64_t>(s) > size) size = static_cast<size_t>(s);
    }
  }
  if (size > max_bytes) return {};
  ZeroedArena arena(size);
  if (arena.data() == nullptr) return {};
  state_spans_.emplace_back(arena.data(), size);
  state_arenas_.emplace_back(mem_id, std::move(arena));
  return state_spans_.back();
}

Result<std::unique_ptr<HostMethod>> HostMethod::load(const HostProgram& hp, const char* name,
                                                     const HostMethodOptions& options) {
  const Program& program = hp.program();
  // A program carrying a CPU fallback plan runs it when `name` needs an absent backend.
  char chosen[256], why[320];
  PTERON_ASSIGN_OR_RETURN(name,
                          choose_plan(program, name, chosen, sizeof(chosen), why, sizeof(why)));
  PTERON_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, program.plan(name));
  std::unique_ptr<HostMethod> hm(new HostMethod());
  hm->plan_name_ = name;
  hm->fallback_reason_ = why;
  MethodMeta meta(plan);
  hm->arena_spans_.emplace_back();  // memory_id 0 is reserved
  uint64_t planned_total = 0;
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i)
    planned_total += static_cast<uint64_t>(meta.planned_buffer_size(i));
  if (planned_total > options.max_planned_bytes) {
    return fail(Error::OutOfMemory,
                "method '%s' plans %llu bytes of arenas, above the limit of %zu", name,
                static_cast<unsigned long long>(planned_total), options.max_planned_bytes);
  }
  // Planned arenas start zeroed, as ExecuTorch's Module allocates its planned buffers: a mutable
  // buffer exported without InitializedMutableBufferPass (export_llama's k_cache / v_cache) has
  // no initial value in the program and starts from what the arena holds, and masked attention
  // multiplies the unwritten positions by zero weights, which stays NaN for garbage NaNs. The
  // zeros are the OS's untouched pages (ZeroedArena), so a declared size costs nothing until the
  // method writes it. Only the arenas: the method and scratch reserves stay untouched.
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    const size_t size = static_cast<size_t>(meta.planned_buffer_size(i));
    if (holds_only_state(*plan, static_cast<uint32_t>(i + 1))) {
      // One state for the whole program: every method writes the same cache.
      const Span<uint8_t> shared =
          hp.shared_state_arena(static_cast<uint32_t>(i + 1), options.max_planned_bytes);
      if (shared.size() < size)
        return fail(Error::OutOfMemory, "cannot allocate state arena %zu (%zu bytes)", i + 1, size);
      hm->arena_spans_.emplace_back(shared.data(), size);
      continue;
    }
    ZeroedArena arena(size);
    if (arena.data() == nullptr)
      return fail(Error::OutOfMemory, "cannot allocate arena %zu (%zu bytes)", i + 1, size);
    hm->arena_spans_.emplace_back(arena.data(), size);
    hm->arenas_.push_back(std::move(arena));
  }
  hm->planned_ =
      HierarchicalAllocator(Span<Span<uint8_t>>(hm->arena_spans_.data(), hm->arena_spans_.size()));
  const size_t method_bytes = method_allocator_bytes(*plan);
  hm->method_memory_.reset(aligned_bytes(method_bytes));
  hm->scratch_memory_.reset(aligned_bytes(options.scratch_bytes));
  if (!hm->method_memory_ || !hm->scratch_memory_)
    return fail(Error::OutOfMemory, "cannot allocate method memory");
  hm->method_allocator_ = MemoryAllocator(hm->method_memory_.get(), method_bytes);
  hm->scratch_allocator_ = MemoryAllocator(hm->scratch_memory_.get(), options.scratch_bytes);
  hm->memory_ = MemoryManager{&hm->method_allocator_, &hm->planned_, &hm->scratch_allocator_};
  PTERON_ASSIGN_OR_RETURN(Method method, Method::load(program, name, &hm->memory_));
  hm->method_.emplace(std::move(method));
  return hm;
}

size_t HostMethod::planned_bytes() const {
  size_t total = 0;
  for (const Span<uint8_t>& s : arena_spans_) total += s.size();
  return total;
}

}  // namespace pteron
