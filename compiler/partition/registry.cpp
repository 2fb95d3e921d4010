#include "compiler/partition/registry.h"

#include <map>

#include "compiler/compile_error.h"
#include "compiler/passes/attention_kv.h"
#include "compiler/passes/fuse_attention.h"
#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/passes/fuse_linear_relu.h"
#include "compiler/passes/fuse_rms_norm.h"
#include "compiler/passes/fuse_silu_mul.h"
#include "compiler/passes/quantized_linear.h"
#include "compiler/passes/winograd_conv.h"

namespace pteron::compiler {
namespace {

std::map<std::string, PartitionerFactory>& factories() {
  static std::map<std::string, PartitionerFactory> f;
  return f;
}

std::map<std::string, KernelLibrary>& libraries() {
  static std::map<std::string, KernelLibrary> l = {
      {"portable", KernelLibrary{"portable", "portable", {}}},
      // Hosted SIMD/threaded kernels (kernels/optimized); its fusions need its own ops.
      // quantized_linear first: it rewrites torchao's aten::linear / embedding patterns;
      // attention_kv after fuse_attention, whose pteron::sdpa it rewrites.
      {"optimized", KernelLibrary{"optimized",
                                  "optimized",
                                  {{"quantized_linear", quantized_linear},
                                   {"fuse_attention", fuse_attention},
                                   {"attention_kv", attention_kv},
                                   {"fuse_linear_relu", fuse_linear_relu},
                                   {"fuse_silu_mul", fuse_silu_mul},
                                   {"fuse_rms_norm", fuse_rms_norm},
                                   {"fuse_conv_relu", fuse_conv_relu},
                                   {"winograd_conv", winograd_conv}}}}};
  return l;
}

}  // namespace

bool is_kernel_library(const std::string& name) { return libraries().count(name) != 0; }

bool register_kernel_library(KernelLibrary library) {
  const std::string name = library.name;
  return libraries().emplace(name, std::move(library)).second;
}

const KernelLibrary* find_kernel_library(const std::string& name) {
  auto it = libraries().find(name);
  return it == libraries().end() ? nullptr : &it->second;
}

bool register_partitioner(const std::string& name, PartitionerFactory factory) {
  return factories().emplace(name, std::move(factory)).second;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const auto& [name, _] : factories()) names.push_back(name);
  for (const auto& [name, _] : libraries()) names.push_back(name);
  return names;
}

std::vector<std::unique_ptr<Partitioner>> make_partitioners(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Partitioner>> out;
  for (const std::string& name : names) {
    if (is_kernel_library(name)) continue;
    auto it = factories().find(name);
    if (it == factories().end()) {
      std::string known;
      for (const std::string& n : available_backends()) known += (known.empty() ? "" : ", ") + n;
      throw CompileError("unknown backend '" + name + "' (available: " + known + ")");
    }
    out.push_back(it->second());
  }
  return out;
}

}  // namespace pteron::compiler
