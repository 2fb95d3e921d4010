// Partitioning: an ordered list of partitioners, each claiming connected regions of the nodes
// the earlier ones left, and saying for every node it refuses why. Unclaimed nodes go to the
// target's kernel libraries. A partitioner never throws: refusals are data.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct SupportDecision {
  bool supported = false;
  std::string reason;  // when refused: what about the op, dtype, shape, attribute or quantization

  static SupportDecision yes() { return {true, {}}; }
  static SupportDecision no(std::string why) { return {false, std::move(why)}; }
};

// A connected set of nodes one backend runs as one delegate call.
struct Region {
  size_t partitioner = 0;           // index into the partitioner list
  std::vector<ir::NodeId> nodes;    // topological order
  std::vector<ir::ValueId> inputs;  // values read from outside (graph inputs, constants excluded)
  std::vector<ir::ValueId> outputs; // values used outside the region or by the graph's outputs
};

// What lowering a region produced: the payload the backend's runtime reads, or why not.
struct LoweredRegion {
  bool ok = false;
  std::string reason;                 // when !ok
  std::vector<uint8_t> payload;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> compile_specs;
  // Per region input / output: the dim order the payload expects that tensor in (empty: the
  // value's own). The compiler converts outside the delegate where the value's differs.
  std::vector<std::vector<uint8_t>> input_dim_orders, output_dim_orders;
  // The backend's own figures for the compile report, a JSON object (e.g. Vela's estimate).
  std::string report_json;
  // Program named data the payload references by key, as ExecuTorch's XNNPACK payloads
  // reference their weights: the weights several regions share (an unrolled recurrent model's)
  // are stored once. Keys name content: one key always holds the same bytes, and the program
  // stores each key once.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> named_data;
};

class Partitioner {
 public:
  virtual ~Partitioner() = default;
  virtual std::string name() const = 0;  // as users write it in --backends ("xnnpack")
  // The id the runtime's backend registry knows ("PteronXnnpackBackend").
  virtual std::string backend_id() const = 0;
  // Lowers a claimed region to the backend's payload. A failure gives the region back to the
  // later partitioners and the kernel libraries, with the reason.
  virtual LoweredRegion lower(const ir::Graph& graph, const Region& region) const = 0;
  // Called once with every region this partitioner claimed, before lower() runs on each, for a
  // backend whose compiler costs most per call rather than per region (Ethos-U: Vela is a
  // Python process) to compile them all in one go; lower() must still give the same result
  // without it. Never throws. The default does nothing.
  virtual void prepare(const ir::Graph& graph, const std::vector<Region>& regions) const {}
  virtual SupportDecision supports(const ir::Graph& graph, const ir::Node& node) const = 0;
  // Nodes reading or writing a dynamic (bounded) tensor, or with run-time sizes: partition()
  // refuses them with this reason before asking supports(), since no pteron backend runs
  // dynamic shapes yet (they stay on the kernels, which resize their outputs every call).
  virtual std::string dynamic_shape_refusal() const {
    return "dynamic shape: the backend compiles static shapes only";
  }
  // Whether a region repays the cost of crossing into the backend and back. The default keeps
  // every region; backends override it with their cost rule (and say why they give one back).
  // A cost rule may weigh the kernels the nodes would run on otherwise: while compile_graph()
  // partitions, compiling_kernel_libraries() names them ("optimized", "portable"), and a
  // backend may refuse a node in supports() because a library kernel is faster for it (the
  // XNNPACK partitioner does, with the reason "optimized kernel faster: ...").
  virtual SupportDecision worth_delegating(const ir::Graph& graph, const Region& region) const {
    return SupportDecision::yes();
  }
};

struct PartitionResult {
  std::vector<Region> regions;
  // For every node no partitioner claimed: each partitioner's reason, "name: reason".
  std::unordered_map<ir::NodeId, std::vector<std::string>> refusals;
  std::unordered_map<ir::NodeId, size_t> region_of;  // claimed node -> index into regions
};

// The kernel libraries (--backends names, most preferred first) of the compile in progress on
// this thread, for partitioners whose cost rule compares against them; nullptr outside one
// (e.g. partition() called directly), which a partitioner reads as "no library but portable".
const std::vector<std::string>* compiling_kernel_libraries();
bool compiling_with_kernel_library(const std::string& name);
struct CompilingKernelLibraries {
  explicit CompilingKernelLibraries(const std::vector<std::string>& names);
  ~CompilingKernelLibraries();
  const std::vector<std::string>* previous;
};

// Runs the partitioners in order. Regions never form a cycle with the rest of the graph (the
// graph with each region contracted to one node stays acyclic).
PartitionResult partition(const ir::Graph& graph, const std::vector<const Partitioner*>& partitioners);

// The region inputs and outputs of `nodes`, as Region defines them.
void compute_region_boundary(const ir::Graph& graph, Region& region);

// An execution order for the contracted graph: each entry is either a node outside every region
// or the first node of a region (standing for the whole region). Topologically valid.
std::vector<ir::NodeId> contracted_order(const ir::Graph& graph, const PartitionResult& result);

}  // namespace pteron::compiler
