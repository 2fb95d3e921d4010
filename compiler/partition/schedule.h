// What partitioning and lowering hand the later stages (memory planning, emission): each
// lowered region as the delegate call that runs it, and the method's execution order.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/ids.h"

namespace pteron::compiler {

// A region a backend runs: one DelegateCall with the region's inputs then outputs as args.
struct LoweredDelegate {
  std::string backend_id;        // what the runtime looks up ("PteronXnnpackBackend")
  std::vector<uint8_t> payload;  // stored in its own segment
  std::vector<std::pair<std::string, std::vector<uint8_t>>> compile_specs;
  std::vector<ir::ValueId> inputs;
  std::vector<ir::ValueId> outputs;
  // Program named data the payload references by key (LoweredRegion::named_data). A key always
  // names the same bytes; the program stores each once, however many delegates name it.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> named_data;
};

// One instruction: a graph node (kernel call) or a delegate.
struct Step {
  ir::NodeId node = ir::kNoNode;  // kernel call when set
  int delegate = -1;              // index into the method's delegates otherwise
};

}  // namespace pteron::compiler
