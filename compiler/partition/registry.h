// Partitioners by the names users give `--backends` ("xnnpack,portable"). "portable" (and any
// kernel library name) means "the target's kernels", which need no partitioner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/partition/partitioner.h"

namespace pteron::compiler {

using PartitionerFactory = std::function<std::unique_ptr<Partitioner>()>;

// Called once per backend at start-up (static registration in the backend's aot/ folder).
bool register_partitioner(const std::string& name, PartitionerFactory factory);

// The partitioners for `names`, in order, skipping kernel-library names. Throws CompileError
// for a name that is neither, listing what is available.
std::vector<std::unique_ptr<Partitioner>> make_partitioners(const std::vector<std::string>& names);

std::vector<std::string> available_backends();

// Kernel libraries a backends list may name ("portable", "optimized").
bool is_kernel_library(const std::string& name);
// The kernel-library names in `names`, in order.
std::vector<std::string> kernel_libraries_in(const std::vector<std::string>& names);

}  // namespace pteron::compiler
