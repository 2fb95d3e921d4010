#include "runtime/executor/plan_choice.h"

#include <cstdio>
#include <cstring>

#include "runtime/backend/backend.h"
#include "runtime/core/error.h"
#include "schema/program_generated.h"

namespace pteron {

const char* plan_unavailable_reason(const Program& program, const char* name, char* why,
                                    size_t size) {
  why[0] = '\0';
  Result<const fb::ExecutionPlan*> plan = program.plan(name);
  if (!plan.ok() || (*plan)->delegates() == nullptr) return why;
  for (const fb::BackendDelegate* d : *(*plan)->delegates()) {
    const char* id = d->id() ? d->id()->c_str() : "";
    BackendInterface* backend = find_backend(id);
    if (backend == nullptr) {
      snprintf(why, size, "backend '%s' is not linked into this runtime", id);
      return why;
    }
    clear_error_message();
    if (!backend->is_available()) {
      snprintf(why, size, "backend '%s' is not available on this device%s%s", id,
               last_error_message()[0] ? ": " : "", last_error_message());
      clear_error_message();
      return why;
    }
  }
  return why;
}

Result<const char*> choose_plan(const Program& program, const char* name, char* buf,
                                size_t buf_size, char* why, size_t why_size) {
  if (plan_unavailable_reason(program, name, why, why_size)[0] == '\0') return name;
  const int n = snprintf(buf, buf_size, "%s%s", name, kFallbackPlanSuffix);
  if (n < 0 || static_cast<size_t>(n) >= buf_size) return name;
  if (!program.plan(buf).ok()) {
    clear_error_message();
    why[0] = '\0';
    return name;  // no fallback: loading `name` reports the missing backend
  }
  return static_cast<const char*>(buf);
}

}  // namespace pteron
