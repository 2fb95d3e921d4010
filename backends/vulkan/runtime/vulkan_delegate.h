// The Vulkan delegate's internals (not a public header): the per-region state and the stages
// init() and execute() run, one file each:
//   dispatch_plan.cpp        payload nodes -> dispatches (shader, push constants, grid, bindings)
//   dispatch_<family>.cpp    each op family's shader choice and push constants
//   delegate_setup.cpp       precision, memory plan, buffers, constant upload, descriptor sets
//   command_recording.cpp    the recorded command buffer and its timestamped twin
//   vulkan_backend.cpp       the BackendInterface: argument checks, copies, submit
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "backends/vulkan/runtime/payload_verifier.h"
#include "backends/vulkan/runtime/sized_payload.h"
#include "backends/vulkan/runtime/vulkan_backend.h"
#include "backends/vulkan/runtime/vulkan_context.h"
#include "backends/vulkan/shaders/push_constants.h"
#include "runtime/executor/method.h"

namespace pteron {
namespace vulkan {
namespace detail {

static_assert(PTERON_SHADER_MAX_DIMS == kMaxDims, "the strided shaders' rank limit is kMaxDims");

constexpr uint32_t kLocalSize = 64;  // elementwise and softmax shaders
constexpr uint32_t kTile = 16;       // linear shader

// Register tiles of the conv shaders (PX pixels x OCB channels per invocation; see the .comp
// files) and their workgroup size.
constexpr uint32_t kConvLocalSize = 32;
constexpr uint32_t kConvPixels = 8, kConvChannels = 16;   // conv2d_tiled, conv2d_pw
constexpr uint32_t kLinearRows = 8, kLinearColumns = 16;  // linear_reg's tile per invocation
constexpr uint32_t kDepthwisePixels = 8;                  // conv2d_dw, conv2d_dw3x3s*

// The shader choices delegates initialised afterwards use (vulkan_backend.h's setters).
extern std::atomic<LinearShader> g_linear_shader;
extern std::atomic<Fp16Arithmetic> g_fp16_arithmetic;
extern std::atomic<ConvShader> g_conv_shader;

constexpr const char* kPrecisionFp32 = "fp32";
constexpr const char* kPrecisionFp16Storage = "fp16 storage, fp32 arithmetic";
constexpr const char* kPrecisionFp16Arith = "fp16 storage, fp16 arithmetic (fp32 accumulation)";

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct External {
  uint32_t tensor;
  uint32_t arg_index;
  bool is_input;
  uint64_t staging_offset;
  uint64_t nbytes;
  uint32_t rank;
  uint32_t dims[kMaxDims];
  ScalarType dtype;  // Float, or Long (embedding indices)
};

struct Dispatch {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint8_t push[kPushConstantBytes];
  uint32_t push_size = 0;
  uint32_t groups_x = 1, groups_y = 1, groups_z = 1;
  const char* shader = nullptr;  // base name; "_f16"/"_f16a" is appended for fp16 storage
  const char* event = nullptr;   // trace event name (static)
  int32_t debug_id = -1;         // the payload node's debug id (its graph node in the region)
  bool f16 = false;
  int64_t bind[kNumBindings] = {-1, -1, -1, -1};  // tensor per binding, -1: the dummy range
};

struct Delegate {
  Context* ctx = nullptr;
  const fb::Payload* payload = nullptr;  // during init only
  std::vector<uint64_t> offsets;         // device-buffer offset per tensor
  std::vector<uint32_t> alias;           // tensor whose storage each tensor uses (reshapes)
  std::vector<External> externals;
  std::vector<Dispatch> dispatches;
  uint32_t num_args = 0;
  VkBuffer device_buffer = VK_NULL_HANDLE;
  VkDeviceMemory device_memory = VK_NULL_HANDLE;
  uint64_t device_bytes = 0;
  uint64_t dummy_offset = 0;  // 16 bytes bound to bindings a shader does not use
  VkBuffer staging_buffer = VK_NULL_HANDLE;
  VkDeviceMemory staging_memory = VK_NULL_HANDLE;
  uint8_t* staging = nullptr;  // mapped
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  // Traced runs replay a second recording with a timestamp after every dispatch, recorded on
  // the first traced call (untraced runs never pay for the queries).
  VkCommandBuffer traced_commands = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  std::vector<uint64_t> stamps;  // query results, one per dispatch plus the start
  std::mutex mutex;              // one call at a time per delegate
  int recordings = 0;
  const char* precision = kPrecisionFp32;
  // Bounded dynamic shapes (a payload with size symbols; dynamic_sizes.cpp): a private copy of
  // the payload's flatbuffer, kept after init, whose tensors' dims each call's sizes are
  // written into (then verified again and planned from), with each tensor's planned
  // (upper-bound) dims; and the symbols' values the dispatches and recordings were last made
  // for (empty: none yet, or the last resize failed).
  SizedPayload sized;
  std::vector<int64_t> planned_for;
  bool dynamic() const { return !sized.empty(); }

  ~Delegate() {
    if (ctx == nullptr) return;
    VkDevice dev = ctx->device;
    if (fence) vkDestroyFence(dev, fence, nullptr);
    if (queries) vkDestroyQueryPool(dev, queries, nullptr);
    if (command_pool) vkDestroyCommandPool(dev, command_pool, nullptr);
    if (pool) vkDestroyDescriptorPool(dev, pool, nullptr);
    if (staging_buffer) vkDestroyBuffer(dev, staging_buffer, nullptr);
    if (staging_memory) vkFreeMemory(dev, staging_memory, nullptr);
    if (device_buffer) vkDestroyBuffer(dev, device_buffer, nullptr);
    if (device_memory) vkFreeMemory(dev, device_memory, nullptr);
  }
};

inline const fb::Tensor& tensor(const Delegate& d, uint32_t i) {
  return *d.payload->tensors()->Get(i);
}
inline uint64_t nbytes(const fb::Tensor& t) { return tensor_bytes(t); }

// ---- delegate_setup.cpp --------------------------------------------------------------------

Error vk_fail(const char* what, VkResult r);
// One primary command buffer from `pool` (the recorded dispatches, and their traced twin).
Error allocate_commands(const Context& c, VkCommandPool pool, VkCommandBuffer* out);
// Everything init() prepares for `d` (its payload set): precision, memory, buffers, constants,
// dispatches with their pipelines and descriptor sets, and the recorded command buffer.
Error build(Delegate& d, Span<const uint8_t> processed);

// The pipeline of `dp` (its shader for the delegate's precision), from the context's cache.
Error resolve_pipeline(Delegate& d, Dispatch& dp);

// ---- dynamic_sizes.cpp ---------------------------------------------------------------------

// At init, for a payload with size symbols: copies its flatbuffer (verified again as a copy)
// and points d.payload at it for the delegate's lifetime.
Error keep_sized_payload(Delegate& d, Span<const uint8_t> processed);
// After init: marks the recording as made for the symbols' maxima when it is (every size
// expression gives its planned dim there).
void note_init_sizes(Delegate& d);
// At execute: reads the symbols from the input arguments (each within its range, else an
// error naming the argument, dim and bounds); when they differ from the last call's, writes
// the sizes they give into the copy, verifies it, plans every dispatch again (grids and push
// constants; the pipelines, descriptor sets and memory plan stay) and re-records. Then sizes
// the output arguments.
Error resize_for_call(Delegate& d, Span<EValue*> args);

// ---- command_recording.cpp -----------------------------------------------------------------

// Records the region's commands into `cb`; with `queries`, a timestamp before the first
// dispatch (query 0) and after each dispatch i (query i + 1).
Error record(Delegate& d, VkCommandBuffer cb, VkQueryPool queries);
// The timestamped recording, made on the first traced call. NotSupported when the queue has
// no timestamps (the run is then traced without per-dispatch events).
Error record_traced(Delegate& d);
// After a traced run: one delegate event per dispatch, named by its op and shader, with the
// payload node's debug id, placed inside the host event `within` (submit to fence).
void report_dispatches(Delegate& d, ExecutionObserver& observer, int32_t within, uint64_t host_ns);

// ---- dispatch_plan.cpp: payload nodes to dispatches ----------------------------------------

// The dispatches of node `n`: none for a reshape (its output shares its input's storage), one
// per input for a cat, one otherwise.
Error plan_node(Delegate& d, uint32_t n, const fb::Node& node);
// Appends `dp` (shader, push constants and grid set) as a dispatch of `node`: its output bound
// at binding 0 and `inputs` (tensor ids; the first three) at 1.., its trace event, debug id and
// storage precision.
void add_dispatch(Delegate& d, Dispatch dp, const fb::Node& node, const char* event, bool f16,
                  Span<const uint32_t> inputs);

template <typename T>
void put(Dispatch& dp, const T& params) {
  static_assert(sizeof(T) <= kPushConstantBytes, "push constants too large");
  memcpy(dp.push, &params, sizeof(T));
  dp.push_size = static_cast<uint32_t>(sizeof(T));
}

inline uint32_t groups_for(uint64_t work, uint32_t per_group, uint32_t limit) {
  const uint64_t g = (work + per_group - 1) / per_group;
  return g == 0 ? 1 : (g > limit ? limit : static_cast<uint32_t>(g));
}

// What planning one node's single dispatch reads: the node (`n`: its index in the payload, for
// messages), its output and first input, the output's element count and the device's limits.
struct NodeToPlan {
  const Delegate& d;
  uint32_t n;
  const fb::Node& node;
  const fb::Tensor& out;
  const fb::Tensor& x;
  uint64_t numel;
  const VkPhysicalDeviceLimits& lim;
};

// A shader with one invocation per output element: `kLocalSize` a group along x, the group
// count capped at the device's limit; sets `shader` to `name`.
inline Error plan_per_element(const NodeToPlan& plan, Dispatch& dp, const char** shader,
                              const char* name) {
  dp.groups_x = groups_for(plan.numel, kLocalSize, plan.lim.maxComputeWorkGroupCount[0]);
  *shader = name;
  return Error::Ok;
}

// Whether a grid fits the device's work group counts.
inline bool fits_device(const Dispatch& dp, const VkPhysicalDeviceLimits& lim) {
  return dp.groups_x <= lim.maxComputeWorkGroupCount[0] &&
         dp.groups_y <= lim.maxComputeWorkGroupCount[1] &&
         dp.groups_z <= lim.maxComputeWorkGroupCount[2];
}

// Each op family's shader parameters, grid and shader (base name) for one node; the payload is
// verified. dispatch_linear.cpp:
Error plan_linear(const NodeToPlan& plan, Dispatch& dp, const char** shader);
// dispatch_conv_pool.cpp:
Error plan_conv2d(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_pool2d(const NodeToPlan& plan, Dispatch& dp, const char** shader);
// dispatch_elementwise.cpp:
Error plan_binary(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_clamp(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_unary(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_convert(const NodeToPlan& plan, Dispatch& dp, const char** shader);
// Merges output dims the binary shader can walk as one (also for the strided copies).
void coalesce(BinaryParams& p);
// dispatch_reductions.cpp:
Error plan_softmax(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_layer_norm(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_mean(const NodeToPlan& plan, Dispatch& dp, const char** shader);
// dispatch_shape.cpp:
Error plan_permute(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_slice(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_embedding(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_upsample(const NodeToPlan& plan, Dispatch& dp, const char** shader);
Error plan_pad(const NodeToPlan& plan, Dispatch& dp, const char** shader);
// A cat: one copy_block dispatch per input.
void plan_cat(Delegate& d, const fb::Node& node, bool f16);

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
