// The BackendInterface: init() verifies the payload and builds the delegate
// (delegate_setup.cpp); execute() checks the arguments, copies inputs into the staging buffer,
// replays the recorded command buffer (command_recording.cpp) and copies outputs back.
#include "backends/vulkan/runtime/vulkan_backend.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>

#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {

std::atomic<LinearShader> g_linear_shader{LinearShader::Auto};
std::atomic<Fp16Arithmetic> g_fp16_arithmetic{Fp16Arithmetic::Auto};
std::atomic<ConvShader> g_conv_shader{ConvShader::Auto};

}  // namespace detail

using namespace detail;

namespace {

Error check_argument(const External& e, const EValue* arg) {
  const char* role = e.is_input ? "input" : "output";
  if (arg == nullptr || arg->tag != Tag::Tensor || arg->tensor == nullptr) {
    return fail(Error::InvalidArgument, "Vulkan delegate arg %u (%s) is not a tensor", e.arg_index,
                role);
  }
  const Tensor& x = *arg->tensor;
  if (x.dtype() != e.dtype) {
    return fail(Error::InvalidArgument, "Vulkan delegate arg %u (%s): expected %s, got %s",
                e.arg_index, role, e.dtype == ScalarType::Long ? "Long (int64)" : "Float",
                scalar_type_name(x.dtype()));
  }
  const uint32_t rank = e.rank;
  bool ok = static_cast<uint32_t>(x.dim()) == rank;
  for (uint32_t i = 0; ok && i < rank; ++i) {
    ok = static_cast<uint32_t>(x.size(static_cast<int32_t>(i))) == e.dims[i];
  }
  if (!ok) {
    return fail(Error::InvalidArgument,
                "Vulkan delegate arg %u (%s): sizes differ from the %u-dim shape it was "
                "compiled for (or, in a dynamic region, that this call's sizes give)",
                e.arg_index, role, rank);
  }
  int64_t stride = 1;
  for (uint32_t i = rank; i-- > 0;) {
    const int32_t di = static_cast<int32_t>(i);
    if (x.size(di) > 1 && x.stride(di) != stride) {
      return fail(Error::InvalidArgument,
                  "Vulkan delegate arg %u (%s) must be contiguous; convert it outside the "
                  "delegate",
                  e.arg_index, role);
    }
    stride *= x.size(di);
  }
  if (x.mutable_data() == nullptr) {
    return fail(Error::InvalidArgument, "Vulkan delegate arg %u (%s) has no data", e.arg_index,
                role);
  }
  return Error::Ok;
}

class VulkanBackend final : public BackendInterface {
 public:
  bool is_available() const override { return shared_context().ok(); }

  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpecView> compile_specs) override {
    Result<Context*> ctx = shared_context();
    if (!ctx.ok()) return ctx.error();
    const fb::Payload* payload = nullptr;
    PTERON_TRY(verify_payload(processed, &payload));
    Delegate* d = new (std::nothrow) Delegate();
    if (d == nullptr) return fail(Error::OutOfMemory, "Vulkan delegate: no memory for its state");
    d->ctx = *ctx;
    d->payload = payload;
    Error err = Error::Ok;
    if (payload->symbols() != nullptr && payload->symbols()->size() > 0) {
      err = keep_sized_payload(*d, processed);  // d->payload: the private copy from now on
    }
    if (err == Error::Ok) err = build(*d, processed);
    if (err == Error::Ok && d->dynamic()) note_init_sizes(*d);
    // A static region's execute() needs nothing more from the payload; a dynamic one plans
    // from its own copy.
    if (!d->dynamic()) d->payload = nullptr;
    if (err != Error::Ok) {
      delete d;
      return err;
    }
    return static_cast<DelegateHandle*>(d);
  }

  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) override {
    if (handle == nullptr) return fail(Error::InvalidArgument, "Vulkan delegate: null handle");
    Delegate& d = *static_cast<Delegate*>(handle);
    std::lock_guard<std::mutex> lock(d.mutex);
    if (args.size() != d.num_args) {
      return fail(Error::InvalidArgument, "Vulkan delegate expects %u arguments, got %zu",
                  d.num_args, args.size());
    }
    if (d.dynamic()) PTERON_TRY(resize_for_call(d, args));
    for (const External& e : d.externals) {
      PTERON_TRY(check_argument(e, args[e.arg_index]));
    }
    // When tracing, the three phases are delegate events: host copies in, the recorded command
    // buffer (device copies and dispatches, submit to fence), host copies out.
    ExecutionObserver* observer = context.observer;
    int32_t event = observer ? observer->begin_delegate_event("vulkan: copy inputs", -1) : -1;
    for (const External& e : d.externals) {
      if (e.is_input) {
        memcpy(d.staging + e.staging_offset, args[e.arg_index]->tensor->const_data(), e.nbytes);
      }
    }
    if (observer) {
      observer->end_delegate_event(event);
      event = observer->begin_delegate_event("vulkan: run command buffer", -1);
    }
    const bool timed = observer != nullptr && record_traced(d) == Error::Ok;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = timed ? &d.traced_commands : &d.commands;
    const auto host_start = std::chrono::steady_clock::now();
    VkResult r;
    {
      std::lock_guard<std::mutex> queue_lock(d.ctx->mutex);
      r = vkQueueSubmit(d.ctx->queue, 1, &si, d.fence);
    }
    if (r != VK_SUCCESS) {
      if (observer) observer->end_delegate_event(event);
      return vk_fail("vkQueueSubmit", r);
    }
    r = vkWaitForFences(d.ctx->device, 1, &d.fence, VK_TRUE, std::numeric_limits<uint64_t>::max());
    vkResetFences(d.ctx->device, 1, &d.fence);
    if (observer) observer->end_delegate_event(event);
    if (r != VK_SUCCESS) return vk_fail("vkWaitForFences", r);
    if (timed) {
      const auto host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - host_start);
      report_dispatches(d, *observer, event, static_cast<uint64_t>(host_ns.count()));
    }
    if (observer) event = observer->begin_delegate_event("vulkan: copy outputs", -1);
    for (const External& e : d.externals) {
      if (!e.is_input) {
        memcpy(args[e.arg_index]->tensor->mutable_data(), d.staging + e.staging_offset, e.nbytes);
      }
    }
    if (observer) observer->end_delegate_event(event);
    return Error::Ok;
  }

  void destroy(DelegateHandle* handle) override { delete static_cast<Delegate*>(handle); }
};

VulkanBackend g_backend;

}  // namespace

BackendInterface& backend() { return g_backend; }

void set_linear_shader(LinearShader shader) { g_linear_shader.store(shader); }

void set_fp16_arithmetic(Fp16Arithmetic mode) { g_fp16_arithmetic.store(mode); }

const char* delegate_precision(const DelegateHandle* handle) {
  return handle ? static_cast<const Delegate*>(handle)->precision : "";
}

void set_conv_shader(ConvShader shader) { g_conv_shader.store(shader); }

int delegate_recordings(const DelegateHandle* handle) {
  return handle ? static_cast<const Delegate*>(handle)->recordings : 0;
}

uint64_t delegate_device_bytes(const DelegateHandle* handle) {
  return handle ? static_cast<const Delegate*>(handle)->device_bytes : 0;
}

}  // namespace vulkan
}  // namespace pteron

PTERON_REGISTER_BACKEND(pteron::vulkan::kBackendId, pteron::vulkan::g_backend);
