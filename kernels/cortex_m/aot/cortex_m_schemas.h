// Operator schemas of the cortex_m:: kernels, so compiler passes can create their nodes and the
// emitter finds their out-variants. ExecuTorch's Cortex-M names and argument lists
// (backends/cortex_m/ops/operators.yaml), except that the scratch tensor of the conv and pool
// ops is optional here: pteron kernels take scratch from the kernel context, sized ahead of time
// (kernels/cortex_m/scratch.h).
#pragma once

#include "compiler/ir/op_schema.h"

namespace pteron::cortex_m::aot {

// Adds every cortex_m op (functional "cortex_m::x.default" and "cortex_m::x.out") to the global
// registry once; later calls do nothing. Thread-compatible (called before compiling).
void register_cortex_m_schemas();

// The functional schema "cortex_m::<name>.default" (registering the schemas first).
const compiler::ir::OpSchema& cortex_m_op(const char* name);

}  // namespace pteron::cortex_m::aot
