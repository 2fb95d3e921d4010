// Partitioning: an ordered list of partitioners, each claiming connected regions of the nodes
// the earlier ones left, and saying for every node it refuses why. Unclaimed nodes go to the
// target's kernel libraries.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct Target;  // compiler/target/target.h
namespace cost {
struct Calibration;  // compiler/cost/cost_model.h
}

// What a partitioner may know of the compile it takes part in, passed to each call (rather
// than read from ambient state, so the same partitioner serves a main plan and its fallback).
struct PartitionContext {
  // The target compiled for; nullptr when partition() runs on its own (tests), which a
  // partitioner that needs the device (Ethos-U's [npu] table) reads as "nothing to compile for".
  const Target* target = nullptr;
  // The kernel libraries the nodes no partitioner claims run on, most preferred first
  // (--backends names: "optimized", "portable"). Cost rules weigh them: a backend may refuse a
  // node because a library kernel is faster for it (XNNPACK: "optimized kernel faster: ...").
  // Empty reads as "portable only".
  std::vector<std::string> kernel_libraries;
  // This machine's measured rates (`pteron tune`), when the compile is for the machine running
  // it and a calibration exists: cost rules then compare a region's estimated time in the
  // delegate and on the kernels (compiler/cost/cost_model.h) instead of fixed thresholds.
  const cost::Calibration* calibration = nullptr;

  bool has_kernel_library(const std::string& name) const;
};

struct SupportDecision {
  bool supported = false;
  std::string reason;  // when refused: what about the op, dtype, shape, attribute or quantization
  // When a cost rule kept a region: what it weighed, as JSON for the lowered region's report
  // (Region::kept_because); empty when it has nothing to say.
  std::string report_json;

  static SupportDecision yes(std::string report_json = {}) {
    return {true, {}, std::move(report_json)};
  }
  static SupportDecision no(std::string why) { return {false, std::move(why), {}}; }
};

// "This backend cannot take this node (or region), because ...": the one exception that counts
// as a refusal. supports(), worth_delegating() and lower() may throw it from any depth (the
// message is the reason); the node or region then stays with the later partitioners and the
// kernels, like SupportDecision::no or a LoweredRegion that is not ok. Any other exception
// from them is a bug or a broken invariant, not a reason to fall back: the compile fails
// with a CompileError naming the node (partition(), compile_graph()).
class Refusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
[[noreturn]] inline void refuse(const std::string& why) { throw Refusal(why); }

// A connected set of nodes one backend runs as one delegate call.
struct Region {
  size_t partitioner = 0;            // index into the partitioner list
  std::vector<ir::NodeId> nodes;     // topological order
  std::vector<ir::ValueId> inputs;   // values read from outside (graph inputs, constants excluded)
  std::vector<ir::ValueId> outputs;  // values used outside the region or by the graph's outputs
  // The report of the worth_delegating() decision that kept it (SupportDecision::report_json):
  // lower() passes it on instead of weighing the region again.
  std::string kept_because;
};

// What lowering a region produced: the payload the backend's runtime reads, or why not.
struct LoweredRegion {
  bool ok = false;
  std::string reason;  // when !ok
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

// A backend's options, written after its name in --backends ("vulkan:fp16=storage"): key ->
// value, only those given (each backend applies its own defaults). Registered and checked with
// the backend (compiler/partition/registry.h).
using BackendOptions = std::map<std::string, std::string>;

class Partitioner {
 public:
  explicit Partitioner(BackendOptions options = {}) : options_(std::move(options)) {}
  virtual ~Partitioner() = default;
  virtual std::string name() const = 0;  // as users write it in --backends ("xnnpack")
  const BackendOptions& options() const { return options_; }
  // name() with the options it was made with, as --backends writes it ("vulkan:fp16=on"):
  // what reports name its regions and refusals by.
  std::string label() const;
  // The id the runtime's backend registry knows ("PteronXnnpackBackend").
  virtual std::string backend_id() const = 0;
  // Lowers a claimed region to the backend's payload. A refusal (ok false, or a Refusal thrown)
  // gives the region back to the later partitioners and the kernel libraries, with the reason;
  // any other exception fails the compile.
  virtual LoweredRegion lower(const ir::Graph& graph, const Region& region,
                              const PartitionContext& context) const = 0;
  // Called once with every region this partitioner claimed, before lower() runs on each, for a
  // backend whose compiler costs most per call rather than per region (Ethos-U: Vela is a
  // Python process) to compile them all in one go; lower() must still give the same result
  // without it. Never throws. The default does nothing.
  virtual void prepare(const ir::Graph& graph, const std::vector<Region>& regions,
                       const PartitionContext& context) const {}
  virtual SupportDecision supports(const ir::Graph& graph, const ir::Node& node,
                                   const PartitionContext& context) const = 0;
  // Nodes reading or writing a dynamic (bounded) tensor, or with run-time sizes: partition()
  // refuses them with dynamic_shape_refusal() before asking supports(), unless the backend
  // resizes at run time (supports_dynamic_shapes(): its supports() then decides for them too,
  // with its own reasons). Refused nodes stay on the kernels, which resize their outputs.
  virtual bool supports_dynamic_shapes() const { return false; }
  virtual std::string dynamic_shape_refusal() const {
    return "dynamic shape: the backend compiles static shapes only";
  }
  // Whether a region repays the cost of crossing into the backend and back. The default keeps
  // every region; backends override it with their cost rule (and say why they give one back),
  // which may weigh the kernels the nodes would run on otherwise (context.kernel_libraries).
  virtual SupportDecision worth_delegating(const ir::Graph& graph, const Region& region,
                                           const PartitionContext& context) const {
    return SupportDecision::yes();
  }

 private:
  BackendOptions options_;
};

struct PartitionResult {
  std::vector<Region> regions;
  // For every node no partitioner claimed: each partitioner's reason, "name: reason".
  std::unordered_map<ir::NodeId, std::vector<std::string>> refusals;
  std::unordered_map<ir::NodeId, size_t> region_of;  // claimed node -> index into regions
};

// Runs the partitioners in order. Regions never form a cycle with the rest of the graph (the
// graph with each region contracted to one node stays acyclic).
PartitionResult partition(const ir::Graph& graph,
                          const std::vector<const Partitioner*>& partitioners,
                          const PartitionContext& context);

// The region inputs and outputs of `nodes`, as Region defines them.
void compute_region_boundary(const ir::Graph& graph, Region& region);

// An execution order for the contracted graph: each entry is either a node outside every region
// or the first node of a region (standing for the whole region). Topologically valid.
std::vector<ir::NodeId> contracted_order(const ir::Graph& graph, const PartitionResult& result);

}  // namespace pteron::compiler
