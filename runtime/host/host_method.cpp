#include "runtime/host/host_method.h"

#include <cstdlib>
#include <cstring>

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
  return hp;
}

Result<std::unique_ptr<HostProgram>> HostProgram::from_bytes(const void* bytes, size_t size) {
  std::unique_ptr<HostProgram> hp(new HostProgram());
  hp->owned_bytes_.resize((size + 7) / 8);
  if (size > 0) std::memcpy(hp->owned_bytes_.data(), bytes, size);
  hp->loader_ = std::make_unique<BufferDataLoader>(hp->owned_bytes_.data(), size);
  PTERON_ASSIGN_OR_RETURN(Program program, Program::load(hp->loader_.get()));
  hp->program_.emplace(std::move(program));
  return hp;
}

Result<std::unique_ptr<HostMethod>> HostMethod::load(const HostProgram& hp, const char* name,
                                                     const HostMethodOptions& options) {
  const Program& program = hp.program();
  // A program carrying a CPU fallback plan runs it when `name` needs an absent backend.
  char chosen[256], why[320];
  PTERON_ASSIGN_OR_RETURN(name, choose_plan(program, name, chosen, sizeof(chosen), why,
                                            sizeof(why)));
  PTERON_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, program.plan(name));
  std::unique_ptr<HostMethod> hm(new HostMethod());
  hm->plan_name_ = name;
  hm->fallback_reason_ = why;
  MethodMeta meta(plan);
  hm->arena_spans_.emplace_back();  // memory_id 0 is reserved
  uint64_t planned_total = 0;
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) planned_total += static_cast<uint64_t>(meta.planned_buffer_size(i));
  if (planned_total > options.max_planned_bytes) {
    return fail(Error::OutOfMemory, "method '%s' plans %llu bytes of arenas, above the limit of %zu",
                name, static_cast<unsigned long long>(planned_total), options.max_planned_bytes);
  }
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    const size_t size = static_cast<size_t>(meta.planned_buffer_size(i));
    uint8_t* p = aligned_bytes(size);
    if (p == nullptr) return fail(Error::OutOfMemory, "cannot allocate arena %zu (%zu bytes)", i + 1, size);
    hm->arenas_.emplace_back(p);
    hm->arena_spans_.emplace_back(p, size);
  }
  hm->planned_ = HierarchicalAllocator(Span<Span<uint8_t>>(hm->arena_spans_.data(), hm->arena_spans_.size()));
  const size_t method_bytes = method_allocator_bytes(*plan);
  hm->method_memory_.reset(aligned_bytes(method_bytes));
  hm->scratch_memory_.reset(aligned_bytes(options.scratch_bytes));
  if (!hm->method_memory_ || !hm->scratch_memory_) return fail(Error::OutOfMemory, "cannot allocate method memory");
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
