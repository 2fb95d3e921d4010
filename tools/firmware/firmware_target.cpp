#include "tools/firmware/firmware_target.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "runtime/executor/method.h"
#include "runtime/host/host_method.h"
#include "schema/program_generated.h"

namespace pteron::firmware {
namespace {

uint64_t size_key(const toml::table& t, const char* key, uint64_t fallback,
                  const std::string& where) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  const auto v = n->value<int64_t>();
  if (!v || *v < 0)
    throw std::runtime_error(where + ": '" + key + "' must be a size in bytes >= 0");
  return static_cast<uint64_t>(*v);
}

std::string kib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  return buf;
}

[[noreturn]] void runtime_failure(const std::string& path, Error e) {
  throw std::runtime_error(path + ": " +
                           (last_error_message()[0] ? last_error_message() : error_name(e)));
}

TensorSpec spec_of(const TensorInfo& info) {
  TensorSpec s;
  s.dtype = info.dtype;
  for (int32_t d : info.sizes) s.shape.push_back(d);
  for (uint8_t d : info.dim_order) s.dim_order.push_back(d);
  s.nbytes = info.nbytes;
  return s;
}

// A delegate's declared load-time bytes: compile spec "pteron.method_bytes" (decimal text).
uint64_t declared_delegate_bytes(const fb::BackendDelegate& d) {
  if (d.compile_specs() == nullptr) return 0;
  for (const fb::CompileSpec* spec : *d.compile_specs()) {
    if (spec->key() == nullptr || spec->value() == nullptr ||
        std::strcmp(spec->key()->c_str(), "pteron.method_bytes") != 0) {
      continue;
    }
    uint64_t n = 0;
    for (uint8_t c : *spec->value()) {
      if (c < '0' || c > '9' || n > (uint64_t(1) << 40)) return 0;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  return 0;
}

}  // namespace

FirmwareTarget load_firmware_target(const std::string& name_or_path) {
  FirmwareTarget ft;
  ft.target = compiler::load_target(name_or_path);
  const std::string& where = ft.target.path;
  const toml::table root = toml::parse_file(where);  // already parsed once without error
  if (const toml::table* fw = root["firmware"].as_table()) {
    ft.is_firmware = true;
    ft.platform = (*fw)["platform"].value_or(std::string("mps3_an547"));
    ft.qemu_machine = (*fw)["qemu_machine"].value_or(std::string("mps3-an547"));
    ft.program_region = (*fw)["program_region"].value_or(std::string("qspi"));
    for (const std::string* name : {&ft.qemu_machine, &ft.program_region}) {
      if (name->empty() ||
          name->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
        throw std::runtime_error(where + ": [firmware] '" + *name +
                                 "' is not a machine or region name (a-z, 0-9, - and _)");
    }
    if (ft.target.cpu_arch.rfind("cortex-m", 0) != 0) {
      throw std::runtime_error(where + ": [cpu] arch '" + ft.target.cpu_arch +
                               "' is not a Cortex-M core (firmware targets: cortex-m55, "
                               "cortex-m7, cortex-m4)");
    }
    ft.stack_size = size_key(*fw, "stack_size", ft.stack_size, where + ": [firmware]");
    if (const toml::array* regions = (*fw)["ram_regions"].as_array()) {
      for (const toml::node& n : *regions) {
        const toml::table* r = n.as_table();
        const auto name = r ? (*r)["name"].value<std::string>() : std::nullopt;
        if (!name)
          throw std::runtime_error(where +
                                   ": [firmware] ram_regions entries need a name and a size");
        ft.ram_regions.emplace_back(*name,
                                    size_key(*r, "size", 0, where + ": [firmware] ram_regions"));
      }
    }
  }
  if (const toml::table* b = root["budget"].as_table()) {
    ft.has_budget = true;
    const std::string w = where + ": [budget]";
    ft.ram_budget = size_key(*b, "ram", 0, w);
    ft.flash_budget = size_key(*b, "flash", 0, w);
    ft.code_flash_budget = size_key(*b, "code_flash", 0, w);
    ft.code_runtime_bytes = size_key(*b, "code_runtime_bytes", 0, w);
    ft.code_per_kernel_bytes = size_key(*b, "code_per_kernel_bytes", 0, w);
    ft.code_ethos_u_bytes = size_key(*b, "code_ethos_u_bytes", 0, w);
    if (const toml::table* by_ns = (*b)["code_per_kernel_bytes_by_namespace"].as_table()) {
      for (const auto& [ns, _] : *by_ns) {
        ft.code_per_kernel_bytes_by_namespace[std::string(ns.str())] = size_key(
            *by_ns, std::string(ns.str()).c_str(), 0, w + " code_per_kernel_bytes_by_namespace");
      }
    }
  }
  return ft;
}

std::string default_cross_build_name(const FirmwareTarget& t) {
  return "build-" + t.target.cpu_arch.substr(std::string("cortex-").size());
}

namespace {

// Runs the measurement on the target's kernel libraries and restores the host's preference.
class TargetKernels {
 public:
  explicit TargetKernels(const std::vector<std::string>& libraries) {
    for (std::string name : libraries) {
      // Targets name libraries as --backends does ("cortex-m"); the runtime's has "_".
      std::replace(name.begin(), name.end(), '-', '_');
      names_.push_back(name);
    }
    for (const std::string& n : names_) pointers_.push_back(n.c_str());
    if (!set_kernel_libraries(Span<const char* const>(pointers_.data(), pointers_.size()))) {
      throw std::runtime_error("the target lists more than " + std::to_string(kMaxKernelLibraries) +
                               " kernel libraries");
    }
  }
  ~TargetKernels() { set_kernel_libraries({}); }
  TargetKernels(const TargetKernels&) = delete;
  TargetKernels& operator=(const TargetKernels&) = delete;

 private:
  std::vector<std::string> names_;
  std::vector<const char*> pointers_;
};

// Which instruction's run raised the scratch allocator's peak, to name it in a refusal.
class ScratchPeakObserver : public ExecutionObserver {
 public:
  explicit ScratchPeakObserver(const MemoryAllocator& scratch) : scratch_(scratch) {}
  void end_instruction(size_t index) override {
    if (scratch_.peak() > peak_) {
      peak_ = scratch_.peak();
      instruction_ = index;
    }
  }
  size_t peak() const { return peak_; }
  size_t instruction() const { return instruction_; }

 private:
  const MemoryAllocator& scratch_;
  size_t peak_ = 0;
  size_t instruction_ = 0;
};

}  // namespace

ProgramNeeds measure_program(const std::string& pte_path, const std::string& method_name,
                             const std::vector<std::string>& kernel_libraries) {
  std::optional<TargetKernels> target_kernels;
  if (!kernel_libraries.empty()) target_kernels.emplace(kernel_libraries);
  auto opened = HostProgram::open(pte_path.c_str());
  if (!opened.ok()) runtime_failure(pte_path, opened.error());
  const Program& program = (*opened)->program();
  auto plan = program.plan(method_name.c_str());
  if (!plan.ok()) runtime_failure(pte_path, plan.error());
  const MethodMeta meta(*plan);

  ProgramNeeds needs;
  needs.program_bytes = program.file_size();
  if ((*plan)->operators() != nullptr) {
    for (const fb::Operator* op : *(*plan)->operators()) {
      std::string name = op->name()->str();
      if (op->overload() != nullptr && op->overload()->size() > 0)
        name += "." + op->overload()->str();
      needs.ops.push_back(name);
    }
  }
  needs.delegates = (*plan)->delegates() ? (*plan)->delegates()->size() : 0;
  if ((*plan)->delegates() != nullptr) {
    for (const fb::BackendDelegate* d : *(*plan)->delegates()) {
      needs.delegate_ids.push_back(d->id() ? d->id()->str() : std::string());
      needs.delegate_method_bytes += declared_delegate_bytes(*d);
    }
  }
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    auto info = meta.input_tensor(i);
    if (!info.ok()) runtime_failure(pte_path, info.error());
    needs.inputs.push_back(spec_of(*info));
  }
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    auto info = meta.output_tensor(i);
    if (!info.ok()) runtime_failure(pte_path, info.error());
    needs.outputs.push_back(spec_of(*info));
  }

  // Load and run once with zero inputs, counting the load-time and scratch bytes used; every
  // instruction once (both branches of a cond, each loop body once: zeros may take any way).
  std::vector<std::vector<uint8_t>> arena_memory;
  std::vector<Span<uint8_t>> arena_spans(1);
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i) {
    const auto size = static_cast<uint64_t>(meta.planned_buffer_size(i));
    needs.arenas.push_back(size);
    arena_memory.emplace_back(size + 64, 0);
  }
  for (auto& a : arena_memory) {
    // 64-byte aligned view, as the firmware's static arenas are at least 16-byte aligned.
    uint8_t* p = a.data();
    uint8_t* aligned = p + ((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64);
    arena_spans.emplace_back(aligned, a.size() - 64);
  }
  HierarchicalAllocator planned(Span<Span<uint8_t>>(arena_spans.data(), arena_spans.size()));
  std::vector<uint64_t> method_memory((size_t{64} << 20) / 8),
      scratch_memory((size_t{64} << 20) / 8);
  MemoryAllocator method_allocator(method_memory.data(), method_memory.size() * 8);
  MemoryAllocator scratch(scratch_memory.data(), scratch_memory.size() * 8);
  MemoryManager memory{&method_allocator, &planned, &scratch};
  auto method = Method::load(program, method_name.c_str(), &memory);
  if (!method.ok()) runtime_failure(pte_path, method.error());
  ScratchPeakObserver scratch_peak(scratch);
  method->set_observer(&scratch_peak);
  const Error e = method->execute_each_instruction_once();
  method->set_observer(nullptr);
  if (e != Error::Ok) runtime_failure(pte_path, e);
  if (scratch_peak.peak() > 0) {
    needs.scratch_peak_node = std::string(method->instruction_name(scratch_peak.instruction())) +
                              " (instruction " + std::to_string(scratch_peak.instruction()) + ")";
  }
  // The host run's allocation includes what the delegates took at init; never plan less than
  // they declare (their TOSA arena is sized by the compiler, the same on every machine).
  needs.method_bytes = std::max<uint64_t>(method_allocator.used(), needs.delegate_method_bytes);
  needs.scratch_bytes = scratch.peak();
  return needs;
}

BudgetEstimate estimate_budget(const FirmwareTarget& t, const ProgramNeeds& needs) {
  BudgetEstimate b;
  for (uint64_t a : needs.arenas) b.arenas += a;
  b.scratch = needs.scratch_bytes;
  b.method = needs.method_bytes;
  b.stack = t.stack_size;
  b.state = kRuntimeStateBytes;
  std::vector<std::string> distinct = needs.ops;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  b.code = t.code_runtime_bytes;
  for (const std::string& op : distinct) {
    const auto ns = t.code_per_kernel_bytes_by_namespace.find(op.substr(0, op.find("::")));
    b.code +=
        ns != t.code_per_kernel_bytes_by_namespace.end() ? ns->second : t.code_per_kernel_bytes;
  }
  if (needs.delegates > 0) b.code += t.code_ethos_u_bytes;
  b.program = needs.program_bytes;
  std::string over;
  // The scratch is the most one kernel call takes at run time: name that call.
  const std::string scratch_by =
      needs.scratch_peak_node.empty() ? "" : " for " + needs.scratch_peak_node;
  if (t.ram_budget > 0 && b.ram() > t.ram_budget) {
    over = "RAM " + kib(b.ram()) + " > budget " + kib(t.ram_budget) + " (arenas " + kib(b.arenas) +
           ", scratch " + kib(b.scratch) + scratch_by + ", method " + kib(b.method) + ", stack " +
           kib(b.stack) + ", runtime state " + kib(b.state) + ")";
  }
  if (t.flash_budget > 0 && b.flash() > t.flash_budget) {
    over += (over.empty() ? "" : "; ") + std::string("flash ") + kib(b.flash()) + " > budget " +
            kib(t.flash_budget) + " (code " + kib(b.code) + " estimated, program " +
            kib(b.program) + ")";
  }
  if (t.code_flash_budget > 0 && b.code > t.code_flash_budget) {
    over += (over.empty() ? "" : "; ") + std::string("code ") + kib(b.code) + " > code flash " +
            kib(t.code_flash_budget);
  }
  // Each arena must also fit the region the planner gave it.
  for (size_t i = 0; i < needs.arenas.size(); ++i) {
    if (i >= t.target.memory.size()) {
      over += (over.empty() ? "" : "; ") + std::string("program has ") +
              std::to_string(needs.arenas.size()) + " arenas but the target has " +
              std::to_string(t.target.memory.size()) + " memory arenas";
      break;
    }
    const auto& region = t.target.memory[i];
    if (region.capacity > 0 && needs.arenas[i] > region.capacity) {
      over += (over.empty() ? "" : "; ") + std::string("arena ") + std::to_string(i + 1) + " " +
              kib(needs.arenas[i]) + " > region '" + region.name + "' " + kib(region.capacity) +
              " (compile the program for this target)";
    }
  }
  b.over = over;
  return b;
}

std::string describe_budget(const FirmwareTarget& t, const BudgetEstimate& b) {
  std::string s = "RAM " + kib(b.ram()) + " (arenas " + kib(b.arenas) + ", scratch " +
                  kib(b.scratch) + ", method " + kib(b.method) + ", stack " + kib(b.stack) +
                  ", runtime state " + kib(b.state) + ")";
  if (t.ram_budget) s += " of " + kib(t.ram_budget);
  s += "; flash " + kib(b.flash()) + " (code " + kib(b.code) + " estimated, program " +
       kib(b.program) + ")";
  if (t.flash_budget) s += " of " + kib(t.flash_budget);
  return s;
}

}  // namespace pteron::firmware
