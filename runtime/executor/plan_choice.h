// Choosing an execution plan for this device. A program compiled with a fallback
// (`pteron compile --backends vulkan,portable --fallback xnnpack,portable`) carries, next to
// each method `name`, a CPU plan `name:cpu` compiled ahead of time from the same graph. At
// load time the runtime runs `name` when every backend it delegates to is available here, and
// `name:cpu` otherwise. Programs without a fallback plan load exactly as before (a missing
// backend is then the method's load error), and ExecuTorch's runtime sees two ordinary methods.
#pragma once

#include <cstddef>

#include "runtime/core/result.h"
#include "runtime/executor/program.h"

namespace pteron {

// Suffix of a method's CPU fallback plan.
constexpr const char* kFallbackPlanSuffix = ":cpu";

// Why plan `name` cannot run here ("backend 'X' is not available on this device: ..."), or ""
// when every backend it delegates to is registered and available. Writes into `why`.
const char* plan_unavailable_reason(const Program& program, const char* name, char* why,
                                    size_t size);

// `name`, or its fallback plan's name (written into `buf`) when `name` cannot run here and the
// program carries `name:cpu`. `why` receives the reason the fallback was chosen, "" when it
// was not.
Result<const char*> choose_plan(const Program& program, const char* name, char* buf,
                                size_t buf_size, char* why, size_t why_size);

}  // namespace pteron
