// Partitioners by the names users give `--backends` ("xnnpack,portable"), each optionally with
// options ("vulkan:fp16=storage"). "portable" (and any kernel library name) means "the target's
// kernels", which need no partitioner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/ir/in_place.h"
#include "compiler/partition/partitioner.h"

namespace pteron::compiler {

// Makes the partitioner with the options given (checked against its BackendOption list).
using PartitionerFactory = std::function<std::unique_ptr<Partitioner>(const BackendOptions&)>;

// An option a backend takes: its key, the values it accepts (the first is the default) and
// what it does, for --help and the error naming a wrong one.
struct BackendOption {
  std::string key;
  std::vector<std::string> values;
  std::string help;
};

// Called once per backend at start-up (static registration in the backend's aot/ folder).
bool register_partitioner(const std::string& name, PartitionerFactory factory,
                          std::vector<BackendOption> options = {});

// An older spelling of a backend with options ("vulkan-fp16" for "vulkan:fp16=on"), accepted
// with a note saying the new one, for scripts written before the option existed.
bool register_backend_alias(const std::string& alias, const std::string& spelling);

// One --backends entry: "name[:key=value]...".
struct BackendSpec {
  std::string name;
  BackendOptions options;
  std::string note;  // set when `name` was an alias: what to write instead
};

// Parses one entry, resolving aliases. Throws CompileError (one line) for an unknown backend,
// an option the backend does not take, a value it does not accept, or options on a kernel
// library.
BackendSpec parse_backend_spec(const std::string& text);

// The partitioners for `names`, in order, skipping kernel-library names. Throws CompileError
// for a name that is neither, listing what is available. An alias's note goes to `notes`.
std::vector<std::unique_ptr<Partitioner>> make_partitioners(
    const std::vector<std::string>& names, std::vector<std::string>* notes = nullptr);

std::vector<std::string> available_backends();

// One line per registered option, "vulkan:fp16=off|on|storage: what it does", for --help.
std::vector<std::string> backend_option_help();

// A kernel library a program may call into: its name in --backends ("optimized", "cortex-m"),
// the library name its kernels register under in the runtime (PTERON_KERNEL_LIBRARY), and graph
// passes that rewrite nodes into its ops (fusions, dq->op->q lowering). Passes run after
// partitioning, on the nodes no delegate claimed (`delegated` must be left alone, and so must
// any value a delegated node reads or writes); each returns how many nodes it changed. The
// context is the one the partitioners saw (the target: Cortex-M kernels pick their vector path
// by the core's features).
using LibraryPass =
    std::function<int(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                      const PartitionContext& context)>;
// A pass that needs only the graph (most fusions) as a LibraryPass.
LibraryPass context_free(int (*pass)(ir::Graph&, const std::unordered_set<ir::NodeId>&));
struct KernelLibrary {
  std::string name;
  std::string runtime_library;
  std::vector<std::pair<std::string, LibraryPass>> passes;  // (pass name, pass), run in order
  // Ops ("ns::op.overload" as graph nodes name them) whose kernels here may write their output
  // over a tensor input, each with the rule saying how (elementwise_in_place: the same bytes;
  // a convolution: starting some bytes before them): the memory planner runs them in place
  // where it proves the input dead (plan_graph_memory).
  std::vector<std::pair<std::string, InPlaceRule>> in_place_ops = {};
  // Ops whose kernels do nothing: their output is memory the planner reserves for the node that
  // reads it (a kernel's scratch). They are planned like any step, then get no instruction, so
  // the loaded method keeps no call, argument or kernel for them.
  std::vector<std::string> allocation_ops = {};
};

// Called once per library at start-up; "portable" is built in. False if the name is taken.
bool register_kernel_library(KernelLibrary library);
const KernelLibrary* find_kernel_library(const std::string& name);

// Whether `name` is a kernel library ("portable", "optimized", ...) rather than a partitioner.
bool is_kernel_library(const std::string& name);

}  // namespace pteron::compiler
