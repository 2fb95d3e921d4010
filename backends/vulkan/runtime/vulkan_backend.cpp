#include "backends/vulkan/runtime/vulkan_backend.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <vector>

#include "backends/vulkan/runtime/payload_verifier.h"
#include "backends/vulkan/runtime/vulkan_context.h"
#include "runtime/executor/method.h"

namespace pteron {
namespace vulkan {
namespace {

constexpr uint32_t kLocalSize = 64;  // elementwise and softmax shaders
constexpr uint32_t kTile = 16;       // linear shader

std::atomic<LinearShader> g_linear_shader{LinearShader::Auto};
std::atomic<Fp16Arithmetic> g_fp16_arithmetic{Fp16Arithmetic::Auto};

constexpr const char* kPrecisionFp32 = "fp32";
constexpr const char* kPrecisionFp16Storage = "fp16 storage, fp32 arithmetic";
constexpr const char* kPrecisionFp16Arith = "fp16 storage, fp16 arithmetic (fp32 accumulation)";

bool env_is(const char* name, const char* value) {
  const char* v = getenv(name);
  return v != nullptr && strcmp(v, value) == 0;
}

std::atomic<ConvShader> g_conv_shader{ConvShader::Auto};
// Register tiles of the conv shaders (PX pixels x OCB channels per invocation; see the .comp
// files) and their workgroup size.
constexpr uint32_t kConvLocalSize = 32;
constexpr uint32_t kConvPixels = 8, kConvChannels = 16;   // conv2d_tiled, conv2d_pw
constexpr uint32_t kLinearRows = 8, kLinearColumns = 16;  // linear_reg's tile per invocation
constexpr uint32_t kDepthwisePixels = 8;                  // conv2d_dw, conv2d_dw3x3s*

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

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

Error vk_fail(const char* what, VkResult r) {
  return fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                  ? Error::OutOfMemory
                  : Error::DelegateFailed,
              "Vulkan delegate: %s failed (%s)", what, vk_result_name(r));
}

// One primary command buffer from `pool` (the recorded dispatches, and their traced twin).
Error allocate_commands(const Context& c, VkCommandPool pool, VkCommandBuffer* out) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  const VkResult r = vkAllocateCommandBuffers(c.device, &cai, out);
  return r == VK_SUCCESS ? Error::Ok : vk_fail("vkAllocateCommandBuffers", r);
}

Error make_buffer(Context& c, uint64_t size, VkBufferUsageFlags usage,
                  VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred, VkBuffer* buffer,
                  VkDeviceMemory* memory) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(c.device, &bci, nullptr, buffer);
  if (r != VK_SUCCESS) return vk_fail("vkCreateBuffer", r);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(c.device, *buffer, &req);
  const int32_t type = c.memory_type(req.memoryTypeBits, required, preferred);
  if (type < 0) {
    return fail(Error::NotSupported, "Vulkan delegate: device %s has no suitable memory type",
                c.properties.deviceName);
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vkAllocateMemory(c.device, &mai, nullptr, memory);
  if (r != VK_SUCCESS) return vk_fail("vkAllocateMemory", r);
  r = vkBindBufferMemory(c.device, *buffer, *memory, 0);
  if (r != VK_SUCCESS) return vk_fail("vkBindBufferMemory", r);
  return Error::Ok;
}

const fb::Tensor& tensor(const Delegate& d, uint32_t i) { return *d.payload->tensors()->Get(i); }
uint64_t nbytes(const fb::Tensor& t) { return tensor_bytes(t); }

// A convolution's or pool's stride, padding and dilation (verified 2-element lists) into its
// shader parameters.
template <typename P>
void read_window(const fb::Node& node, P& p) {
  p.stride_h = node.stride()->Get(0);
  p.stride_w = node.stride()->Get(1);
  p.pad_h = node.padding()->Get(0);
  p.pad_w = node.padding()->Get(1);
  p.dil_h = node.dilation()->Get(0);
  p.dil_w = node.dilation()->Get(1);
}

template <typename T>
void put(Dispatch& dp, const T& params) {
  static_assert(sizeof(T) <= kPushConstantBytes, "push constants too large");
  memcpy(dp.push, &params, sizeof(T));
  dp.push_size = static_cast<uint32_t>(sizeof(T));
}

uint32_t groups_for(uint64_t work, uint32_t per_group, uint32_t limit) {
  const uint64_t g = (work + per_group - 1) / per_group;
  return g == 0 ? 1 : (g > limit ? limit : static_cast<uint32_t>(g));
}

// The binary shader's parameters (elementwise ops and strided copies).
struct BinaryParams {
  uint32_t numel, op;
  float alpha;
  uint32_t rank, dims[6], stride0[6], stride1[6];
  uint32_t base0;
};

// Merges output dims the binary shader can walk as one (size-1 dims; neighbours where both
// inputs' strides are contiguous across them): each dim costs the shader an integer division
// per element, which CPU devices do lane by lane. [1, 12, 128, 64] + same -> [98304].
void coalesce(BinaryParams& p) {
  uint32_t rank = 0;
  for (uint32_t d = 0; d < p.rank; ++d) {
    if (p.dims[d] == 1) continue;
    if (rank > 0 && p.stride0[rank - 1] == p.stride0[d] * p.dims[d] &&
        p.stride1[rank - 1] == p.stride1[d] * p.dims[d]) {
      p.dims[rank - 1] *= p.dims[d];  // the outer dim absorbs this one
      p.stride0[rank - 1] = p.stride0[d];
      p.stride1[rank - 1] = p.stride1[d];
      continue;
    }
    p.dims[rank] = p.dims[d];
    p.stride0[rank] = p.stride0[d];
    p.stride1[rank] = p.stride1[d];
    ++rank;
  }
  if (rank == 0) {  // one element
    p.dims[0] = 1;
    p.stride0[0] = p.stride1[0] = 0;
    rank = 1;
  }
  p.rank = rank;
}

// ATen's area_pixel_compute_scale in fp32 (UpSample.h): align_corners maps the corner pixels
// onto each other, (in - 1) / (out - 1); otherwise a scale factor the caller gave (> 0) sets
// 1 / scale (computed in double, then rounded, as ATen does), else input / output.
float upsample_ratio(uint32_t in, uint32_t out, double given, bool align_corners) {
  if (align_corners) {
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  }
  if (given > 0) return static_cast<float>(1.0 / given);
  return static_cast<float>(in) / static_cast<float>(out);
}

// Shader parameters and grid of one single-dispatch node (the payload is verified).
Error plan_dispatch(const Delegate& d, uint32_t n, const fb::Node& node, Dispatch& dp,
                    const char** shader) {
  const VkPhysicalDeviceLimits& lim = d.ctx->properties.limits;
  const fb::Tensor& out = tensor(d, node.outputs()->Get(0));
  const fb::Tensor& x = tensor(d, node.inputs()->Get(0));
  const uint64_t numel = tensor_numel(out);
  switch (node.op()) {
    case fb::OpType::Linear:
    case fb::OpType::MatMul:
    case fb::OpType::BatchMatMul: {
      struct {
        uint32_t m, n, k, w_transposed, has_bias;
        float lo, hi;
        uint32_t a_batch_stride, w_batch_stride, out_batch_stride;
      } p{};
      const bool batched = node.op() == fb::OpType::BatchMatMul;
      const uint32_t batches = batched ? out.dims()->Get(0) : 1;
      p.k = x.dims()->Get(x.dims()->size() - 1);
      p.n = out.dims()->Get(out.dims()->size() - 1);
      p.m = static_cast<uint32_t>(numel / p.n / batches);
      if (batched) {
        p.a_batch_stride = p.m * p.k;
        p.w_batch_stride = p.k * p.n;
        p.out_batch_stride = p.m * p.n;
      }
      dp.groups_z = batches;
      p.w_transposed = node.op() == fb::OpType::Linear;
      p.has_bias = node.inputs()->size() == 3;
      p.lo = node.output_min();
      p.hi = node.output_max();
      put(dp, p);
      // CPU implementations run the barrier-free shader (see linear_direct.comp).
      LinearShader choice = g_linear_shader.load();
      if (choice == LinearShader::Auto) {
        choice = d.ctx->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                     ? LinearShader::Registers
                     : LinearShader::Tiled;
      }
      if (choice == LinearShader::Direct) {
        dp.groups_x = (p.n + kLocalSize - 1) / kLocalSize;
        dp.groups_y = p.m;
        *shader = "linear_direct";
      } else if (choice == LinearShader::Registers) {
        const uint32_t tile_n = kConvLocalSize * kLinearColumns;
        dp.groups_x = (p.n + tile_n - 1) / tile_n;
        dp.groups_y = (p.m + kLinearRows - 1) / kLinearRows;
        *shader = "linear_reg";
      } else {
        dp.groups_x = (p.n + kTile - 1) / kTile;
        dp.groups_y = (p.m + kTile - 1) / kTile;
        *shader = "linear";
      }
      if (dp.groups_x > lim.maxComputeWorkGroupCount[0] ||
          dp.groups_y > lim.maxComputeWorkGroupCount[1] ||
          dp.groups_z > lim.maxComputeWorkGroupCount[2]) {
        return fail(Error::NotSupported,
                    "Vulkan delegate: node %u (%s) [%u x %u] exceeds the device's dispatch size", n,
                    op_name(node.op()), p.m, p.n);
      }
      return Error::Ok;
    }
    case fb::OpType::Add:
    case fb::OpType::Sub:
    case fb::OpType::Mul:
    case fb::OpType::Div: {
      BinaryParams p{};
      p.numel = static_cast<uint32_t>(numel);
      p.op = node.op() == fb::OpType::Add   ? 0
             : node.op() == fb::OpType::Sub ? 1
             : node.op() == fb::OpType::Mul ? 2
                                            : 4;
      p.alpha = node.alpha();
      p.rank = out.dims()->size();
      for (uint32_t i = 0; i < p.rank; ++i) p.dims[i] = out.dims()->Get(i);
      for (int which = 0; which < 2; ++which) {
        const fb::Tensor& t = tensor(d, node.inputs()->Get(which));
        uint32_t* strides = which == 0 ? p.stride0 : p.stride1;
        const uint32_t shift = p.rank - t.dims()->size();
        uint32_t s = 1;
        for (uint32_t i = t.dims()->size(); i-- > 0;) {
          const uint32_t size = t.dims()->Get(i);
          strides[i + shift] = size == 1 ? 0 : s;  // broadcast dims read element 0
          s *= size;
        }
      }
      coalesce(p);
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "binary";
      return Error::Ok;
    }
    case fb::OpType::Clamp: {
      struct {
        uint32_t numel;
        float lo, hi;
      } p{static_cast<uint32_t>(numel), node.output_min(), node.output_max()};
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "clamp";
      return Error::Ok;
    }
    case fb::OpType::Softmax: {
      struct {
        uint32_t rows, cols;
      } p;
      p.cols = x.dims()->Get(x.dims()->size() - 1);
      p.rows = static_cast<uint32_t>(numel / p.cols);
      put(dp, p);
      dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "softmax";
      return Error::Ok;
    }
    case fb::OpType::Conv2d: {
      struct {
        uint32_t numel, c, h, w, oc, oh, ow, kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
            groups, has_bias;
        float lo, hi;
      } p;
      const fb::Tensor& w = tensor(d, node.inputs()->Get(1));
      p.numel = static_cast<uint32_t>(numel);
      p.c = x.dims()->Get(1);
      p.h = x.dims()->Get(2);
      p.w = x.dims()->Get(3);
      p.oc = out.dims()->Get(1);
      p.oh = out.dims()->Get(2);
      p.ow = out.dims()->Get(3);
      p.kh = w.dims()->Get(2);
      p.kw = w.dims()->Get(3);
      read_window(node, p);
      p.groups = node.groups();
      p.has_bias = node.inputs()->size() == 3;
      p.lo = node.output_min();
      p.hi = node.output_max();
      put(dp, p);
      const uint32_t batch = x.dims()->Get(0);
      const uint32_t plane = p.oh * p.ow;
      const bool pointwise = p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                             p.pad_h == 0 && p.pad_w == 0 && p.groups == 1;
      const bool depthwise = p.groups == p.c && p.groups > 1;
      if (g_conv_shader.load() == ConvShader::Direct) {
        dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
        *shader = "conv2d";
      } else if (depthwise && p.kh == 3 && p.kw == 3 && p.dil_h == 1 && p.dil_w == 1 &&
                 p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2)) {
        const uint32_t tiles = p.oh * ((p.ow + kDepthwisePixels - 1) / kDepthwisePixels);
        dp.groups_x = (tiles + kConvLocalSize - 1) / kConvLocalSize;
        dp.groups_y = p.oc;
        dp.groups_z = batch;
        *shader = p.stride_h == 1 ? "conv2d_dw3x3s1" : "conv2d_dw3x3s2";
      } else if (depthwise) {
        dp.groups_x =
            (plane + kConvLocalSize * kDepthwisePixels - 1) / (kConvLocalSize * kDepthwisePixels);
        dp.groups_y = p.oc;
        dp.groups_z = batch;
        *shader = "conv2d_dw";
      } else {
        const uint32_t cout = p.oc / p.groups;
        const uint32_t tile = kConvLocalSize * kConvPixels;
        dp.groups_x = (plane + tile - 1) / tile;
        dp.groups_y = p.groups * ((cout + kConvChannels - 1) / kConvChannels);
        dp.groups_z = batch;
        *shader = pointwise ? "conv2d_pw" : "conv2d_tiled";
      }
      if (dp.groups_x > lim.maxComputeWorkGroupCount[0] ||
          dp.groups_y > lim.maxComputeWorkGroupCount[1] ||
          dp.groups_z > lim.maxComputeWorkGroupCount[2]) {
        return fail(Error::NotSupported,
                    "Vulkan delegate: node %u (conv2d) [%u x %u x %u] exceeds the device's "
                    "dispatch size",
                    n, batch, p.oc, plane);
      }
      return Error::Ok;
    }
    case fb::OpType::LayerNorm: {
      struct {
        uint32_t rows, cols;
        float eps;
        uint32_t has_weight, has_bias;
      } p;
      p.cols = x.dims()->Get(x.dims()->size() - 1);
      p.rows = static_cast<uint32_t>(numel / p.cols);
      p.eps = node.eps();
      p.has_weight = node.has_weight();
      p.has_bias = node.has_bias();
      put(dp, p);
      dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "layer_norm";
      return Error::Ok;
    }
    case fb::OpType::Permute: {  // the binary shader's strided copy (op 3)
      BinaryParams p{};
      p.numel = static_cast<uint32_t>(numel);
      p.op = 3;
      p.rank = out.dims()->size();
      uint32_t in_strides[kMaxDims];
      uint32_t s = 1;
      for (uint32_t i = p.rank; i-- > 0;) {
        in_strides[i] = s;
        s *= x.dims()->Get(i);
      }
      for (uint32_t i = 0; i < p.rank; ++i) {
        p.dims[i] = out.dims()->Get(i);
        p.stride0[i] = in_strides[node.perm()->Get(i)];
      }
      coalesce(p);
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "binary";
      return Error::Ok;
    }
    case fb::OpType::Mean: {
      struct {
        uint32_t rows, cols;
      } p;
      p.rows = static_cast<uint32_t>(numel);
      p.cols = static_cast<uint32_t>(tensor_numel(x) / numel);
      put(dp, p);
      dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
      dp.groups_y = 1;
      *shader = "mean";
      return Error::Ok;
    }
    case fb::OpType::Slice: {  // the binary shader's strided copy from element base0
      BinaryParams p{};
      p.numel = static_cast<uint32_t>(numel);
      p.op = 3;
      p.rank = out.dims()->size();
      uint32_t s = 1;
      for (uint32_t i = p.rank; i-- > 0;) {
        p.dims[i] = out.dims()->Get(i);
        p.stride0[i] = i == node.axis() ? s * node.step() : s;
        if (i == node.axis()) p.base0 = s * node.start();
        s *= x.dims()->Get(i);
      }
      coalesce(p);
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "binary";
      return Error::Ok;
    }
    case fb::OpType::Unary: {
      struct {
        uint32_t numel, op;
      } p{static_cast<uint32_t>(numel), static_cast<uint32_t>(node.unary())};
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "unary";
      return Error::Ok;
    }
    case fb::OpType::Convert: {
      const uint32_t p = static_cast<uint32_t>(numel);
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = out.dtype() == fb::DataType::Float16 ? "to_f16" : "to_f32";
      return Error::Ok;
    }
    case fb::OpType::Embedding: {
      struct {
        uint32_t numel, v, d;
      } p{static_cast<uint32_t>(numel), x.dims()->Get(0), x.dims()->Get(1)};
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "embedding";
      return Error::Ok;
    }
    case fb::OpType::Pool2d: {
      struct {
        uint32_t numel, h, w, oh, ow, kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, mode,
            count_include_pad, divisor;
      } p{};
      p.numel = static_cast<uint32_t>(numel);
      p.h = x.dims()->Get(2);
      p.w = x.dims()->Get(3);
      p.oh = out.dims()->Get(2);
      p.ow = out.dims()->Get(3);
      p.mode = static_cast<uint32_t>(node.pool());
      if (node.pool() != fb::PoolType::AdaptiveAverage) {
        p.kh = node.kernel()->Get(0);
        p.kw = node.kernel()->Get(1);
        read_window(node, p);
      }
      p.count_include_pad = node.count_include_pad();
      p.divisor = node.divisor();
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "pool2d";
      return Error::Ok;
    }
    case fb::OpType::Upsample: {
      struct {
        uint32_t numel, h, w, oh, ow;
        float scale_h, scale_w;
        uint32_t mode, align_corners;
      } p{};
      p.numel = static_cast<uint32_t>(numel);
      p.h = x.dims()->Get(2);
      p.w = x.dims()->Get(3);
      p.oh = out.dims()->Get(2);
      p.ow = out.dims()->Get(3);
      const bool align = node.resize() != fb::ResizeMode::Nearest && node.align_corners();
      const auto given = [&](uint32_t axis) {
        return node.scales() != nullptr ? node.scales()->Get(axis) : 0.0;
      };
      p.scale_h = upsample_ratio(p.h, p.oh, given(0), align);
      p.scale_w = upsample_ratio(p.w, p.ow, given(1), align);
      p.mode = static_cast<uint32_t>(node.resize());
      p.align_corners = align;
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "upsample";
      return Error::Ok;
    }
    case fb::OpType::Pad: {
      struct {
        uint32_t numel, h, w, oh, ow;
        int32_t top, left;  // negative: cropped
        uint32_t mode;
        float value;
      } p{};
      const uint32_t r = out.dims()->size();
      p.numel = static_cast<uint32_t>(numel);
      p.w = x.dims()->Get(r - 1);
      p.ow = out.dims()->Get(r - 1);
      p.h = r >= 2 ? x.dims()->Get(r - 2) : 1;
      p.oh = r >= 2 ? out.dims()->Get(r - 2) : 1;
      p.left = node.pads()->Get(0);
      p.top = node.pads()->Get(2);
      p.mode = static_cast<uint32_t>(node.pad_mode());
      p.value = node.pad_value();
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      *shader = "pad";
      return Error::Ok;
    }
    default:
      return fail(Error::InvalidProgram, "Vulkan delegate: node %u has an unknown op", n);
  }
}

// Trace event name of a dispatch (a static string, as the tracer keeps the pointer).
const char* event_name(const fb::Node& node, const char* shader) {
  switch (node.op()) {
    case fb::OpType::Linear:
    case fb::OpType::MatMul:
      return strcmp(shader, "linear") == 0 ? "vulkan: linear (shared tiles)" : "vulkan: linear";
    case fb::OpType::BatchMatMul:
      return "vulkan: bmm";
    case fb::OpType::Add:
      return "vulkan: add";
    case fb::OpType::Sub:
      return "vulkan: sub";
    case fb::OpType::Mul:
      return "vulkan: mul";
    case fb::OpType::Div:
      return "vulkan: div";
    case fb::OpType::Clamp:
      return "vulkan: clamp";
    case fb::OpType::Softmax:
      return "vulkan: softmax";
    case fb::OpType::Conv2d:
      return strcmp(shader, "conv2d_pw") == 0       ? "vulkan: conv2d 1x1"
             : strncmp(shader, "conv2d_dw", 9) == 0 ? "vulkan: conv2d depthwise"
             : strcmp(shader, "conv2d_tiled") == 0  ? "vulkan: conv2d"
                                                    : "vulkan: conv2d (direct)";
    case fb::OpType::LayerNorm:
      return "vulkan: layer_norm";
    case fb::OpType::Mean:
      return "vulkan: mean";
    case fb::OpType::Permute:
      return "vulkan: permute";
    case fb::OpType::Unary:
      return "vulkan: unary";
    case fb::OpType::Pool2d:
      return "vulkan: pool2d";
    case fb::OpType::Cat:
      return "vulkan: cat";
    case fb::OpType::Slice:
      return "vulkan: slice";
    case fb::OpType::Embedding:
      return "vulkan: embedding";
    case fb::OpType::Convert:
      return "vulkan: convert";
    case fb::OpType::Upsample:
      return node.resize() == fb::ResizeMode::Nearest    ? "vulkan: upsample nearest"
             : node.resize() == fb::ResizeMode::Bilinear ? "vulkan: upsample bilinear"
                                                         : "vulkan: upsample bilinear antialias";
    case fb::OpType::Pad:
      return "vulkan: pad";
    default:
      return "vulkan: dispatch";
  }
}

// The dispatches of node `n`: none for a reshape (its output shares its input's storage), one
// per input for a cat, one otherwise.
Error plan_node(Delegate& d, uint32_t n, const fb::Node& node) {
  const VkPhysicalDeviceLimits& lim = d.ctx->properties.limits;
  const uint32_t out_id = node.outputs()->Get(0);
  const fb::Tensor& out = tensor(d, out_id);
  const bool f16 = out.dtype() == fb::DataType::Float16;
  if (node.op() == fb::OpType::Reshape) return Error::Ok;
  if (node.op() == fb::OpType::Cat) {
    uint64_t inner = 1;
    for (uint32_t i = node.axis() + 1; i < out.dims()->size(); ++i) inner *= out.dims()->Get(i);
    const uint64_t block_out = inner * out.dims()->Get(node.axis());
    uint64_t offset = 0;
    for (uint32_t in_id : *node.inputs()) {
      const fb::Tensor& x = tensor(d, in_id);
      const uint64_t numel = tensor_numel(x);
      const uint64_t block_in = inner * x.dims()->Get(node.axis());
      Dispatch dp;
      struct {
        uint32_t numel, block_in, block_out, offset;
      } p{static_cast<uint32_t>(numel), static_cast<uint32_t>(block_in),
          static_cast<uint32_t>(block_out), static_cast<uint32_t>(offset)};
      put(dp, p);
      dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
      dp.shader = "copy_block";
      dp.event = "vulkan: cat";
      dp.debug_id = node.debug_id();
      dp.f16 = f16;
      dp.bind[0] = out_id;
      dp.bind[1] = in_id;
      d.dispatches.push_back(dp);
      offset += block_in;
    }
    return Error::Ok;
  }
  Dispatch dp;
  PTERON_TRY(plan_dispatch(d, n, node, dp, &dp.shader));
  dp.event = event_name(node, dp.shader);
  dp.f16 = f16 && node.op() != fb::OpType::Convert;
  dp.debug_id = node.debug_id();
  dp.bind[0] = out_id;
  for (uint32_t b = 1; b < kNumBindings && b - 1 < node.inputs()->size(); ++b) {
    dp.bind[b] = node.inputs()->Get(b - 1);
  }
  d.dispatches.push_back(dp);
  return Error::Ok;
}

// Lays every tensor out in one device buffer and the externals in one staging buffer.
Error plan_memory(Delegate& d, uint64_t* staging_bytes, uint64_t* constant_bytes) {
  const VkPhysicalDeviceLimits& lim = d.ctx->properties.limits;
  const uint64_t align =
      lim.minStorageBufferOffsetAlignment > 16 ? lim.minStorageBufferOffsetAlignment : 16;
  const auto& ts = *d.payload->tensors();
  d.offsets.resize(ts.size());
  // A reshape's output is its input's storage (same bytes, new sizes): no copy, no dispatch.
  // Every tensor is written once (verified) and nothing is reused, so sharing is safe.
  d.alias.resize(ts.size());
  for (uint32_t i = 0; i < ts.size(); ++i) d.alias[i] = i;
  for (const fb::Node* node : *d.payload->nodes()) {
    if (node->op() == fb::OpType::Reshape) {
      d.alias[node->outputs()->Get(0)] = d.alias[node->inputs()->Get(0)];  // inputs come first
    }
  }
  uint64_t offset = 0, staging = 0, constants = 0;
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    const uint64_t bytes = nbytes(t);
    if (bytes > lim.maxStorageBufferRange) {
      return fail(Error::NotSupported,
                  "Vulkan delegate: tensor %u (%llu bytes) exceeds the device's storage buffer "
                  "range (%u bytes)",
                  i, static_cast<unsigned long long>(bytes), lim.maxStorageBufferRange);
    }
    if (d.alias[i] == i) {
      d.offsets[i] = offset;
      offset = align_up(offset + bytes, align);
    }
    if (t.external() != fb::ExternalKind::Internal) {
      const bool input = t.external() == fb::ExternalKind::Input;
      External e{i,     t.arg_index(),
                 input, staging,
                 bytes, t.dims() ? t.dims()->size() : 0,
                 {},    t.dtype() == fb::DataType::Int64 ? ScalarType::Long : ScalarType::Float};
      for (uint32_t k = 0; k < e.rank; ++k) e.dims[k] = t.dims()->Get(k);
      d.externals.push_back(e);
      staging = align_up(staging + bytes, 16);
    }
    if (t.is_constant()) constants = align_up(constants + bytes, 16);
  }
  for (uint32_t i = 0; i < ts.size(); ++i) d.offsets[i] = d.offsets[d.alias[i]];
  d.num_args = static_cast<uint32_t>(d.externals.size());
  d.dummy_offset = offset;
  d.device_bytes = offset + align;
  *staging_bytes = staging > constants ? staging : constants;
  if (*staging_bytes == 0) *staging_bytes = 16;
  *constant_bytes = constants;
  return Error::Ok;
}

// Runs `record` on a one-time command buffer and waits for it (constant upload at init).
template <typename F>
Error submit_and_wait(Delegate& d, F record) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(d.commands, &bi);
  if (r != VK_SUCCESS) return vk_fail("vkBeginCommandBuffer", r);
  record(d.commands);
  r = vkEndCommandBuffer(d.commands);
  if (r != VK_SUCCESS) return vk_fail("vkEndCommandBuffer", r);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &d.commands;
  {
    std::lock_guard<std::mutex> lock(d.ctx->mutex);
    r = vkQueueSubmit(d.ctx->queue, 1, &si, d.fence);
  }
  if (r != VK_SUCCESS) return vk_fail("vkQueueSubmit", r);
  r = vkWaitForFences(d.ctx->device, 1, &d.fence, VK_TRUE, std::numeric_limits<uint64_t>::max());
  if (r != VK_SUCCESS) return vk_fail("vkWaitForFences", r);
  vkResetFences(d.ctx->device, 1, &d.fence);
  return Error::Ok;
}

void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
             VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

// Records the region's commands into `cb`; with `queries`, a timestamp before the first
// dispatch (query 0) and after each dispatch i (query i + 1).
Error record(Delegate& d, VkCommandBuffer cb, VkQueryPool queries) {
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult r = vkResetCommandBuffer(cb, 0);
  if (r != VK_SUCCESS) return vk_fail("vkResetCommandBuffer", r);
  r = vkBeginCommandBuffer(cb, &bi);
  if (r != VK_SUCCESS) return vk_fail("vkBeginCommandBuffer", r);
  const uint32_t num_queries = static_cast<uint32_t>(d.dispatches.size()) + 1;
  if (queries) vkCmdResetQueryPool(cb, queries, 0, num_queries);
  std::vector<VkBufferCopy> copies;
  for (const External& e : d.externals) {
    if (e.is_input) copies.push_back(VkBufferCopy{e.staging_offset, d.offsets[e.tensor], e.nbytes});
  }
  barrier(cb, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  if (!copies.empty()) {
    vkCmdCopyBuffer(cb, d.staging_buffer, d.device_buffer, static_cast<uint32_t>(copies.size()),
                    copies.data());
  }
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  if (queries) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 0);
  uint32_t query = 1;
  for (const Dispatch& dp : d.dispatches) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, dp.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.ctx->pipeline_layout, 0, 1,
                            &dp.set, 0, nullptr);
    vkCmdPushConstants(cb, d.ctx->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, dp.push_size,
                       dp.push);
    vkCmdDispatch(cb, dp.groups_x, dp.groups_y, dp.groups_z);
    // Bottom of pipe: written once the dispatch has finished.
    if (queries) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, query++);
    // Each node reads what earlier nodes wrote.
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  }
  copies.clear();
  for (const External& e : d.externals) {
    if (!e.is_input) {
      copies.push_back(VkBufferCopy{d.offsets[e.tensor], e.staging_offset, e.nbytes});
    }
  }
  vkCmdCopyBuffer(cb, d.device_buffer, d.staging_buffer, static_cast<uint32_t>(copies.size()),
                  copies.data());
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  r = vkEndCommandBuffer(cb);
  if (r != VK_SUCCESS) return vk_fail("vkEndCommandBuffer", r);
  ++d.recordings;
  return Error::Ok;
}

// An fp16 region computes in fp16 on a GPU with shaderFloat16 unless told not to. CPU devices
// (lavapipe) have the feature but no fp16 ALU: every half operation is widened to fp32 and
// rounded back, which made the models slower there than fp16 storage in most runs
// (mobilenet-v2 1.3x to 2x; backends/vulkan/README.md), so they get the arithmetic variants
// only when asked.
Error choose_precision(Delegate& d) {
  bool f16 = false;
  for (const fb::Tensor* t : *d.payload->tensors()) f16 |= t->dtype() == fb::DataType::Float16;
  Fp16Arithmetic mode = g_fp16_arithmetic.load();
  if (mode == Fp16Arithmetic::Auto && env_is("PTERON_VULKAN_FP16_ARITH", "0")) {
    mode = Fp16Arithmetic::StorageOnly;
  }
  if (mode == Fp16Arithmetic::Auto && env_is("PTERON_VULKAN_FP16_ARITH", "1")) {
    mode = Fp16Arithmetic::Arithmetic;
  }
  const bool compiled_storage_only = !d.payload->fp16_arithmetic();  // vulkan-fp16-storage
  const bool cpu = d.ctx->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const bool arith = d.ctx->float16_arithmetic && !compiled_storage_only &&
                     (mode == Fp16Arithmetic::Arithmetic || (mode == Fp16Arithmetic::Auto && !cpu));
  d.precision = !f16 ? kPrecisionFp32 : arith ? kPrecisionFp16Arith : kPrecisionFp16Storage;
  if (env_is("PTERON_VULKAN_LOG", "1")) {
    fprintf(stderr, "pteron vulkan: %u-node region on %s: %s%s\n", d.payload->nodes()->size(),
            d.ctx->properties.deviceName, d.precision,
            !f16 || arith                ? ""
            : compiled_storage_only      ? " (compiled with vulkan-fp16-storage)"
            : !d.ctx->float16_arithmetic ? " (the device has no shaderFloat16)"
            : mode == Fp16Arithmetic::StorageOnly
                ? " (asked for)"
                : " (a CPU device, where fp16 arithmetic is "
                  "slower; PTERON_VULKAN_FP16_ARITH=1 forces it)");
  }
  return Error::Ok;
}

Error build(Delegate& d, Span<const uint8_t> processed) {
  Context& c = *d.ctx;
  const fb::Payload& p = *d.payload;
  for (const fb::Tensor* t : *p.tensors()) {
    if (t->dtype() == fb::DataType::Float16 && !c.storage16) {
      return fail(Error::NotSupported,
                  "Vulkan delegate: this region stores fp16 but device %s has no 16-bit storage "
                  "buffers (compile it with `vulkan` instead of `vulkan-fp16`)",
                  c.properties.deviceName);
    }
  }
  PTERON_TRY(choose_precision(d));
  uint64_t staging_bytes = 0, constant_bytes = 0;
  PTERON_TRY(plan_memory(d, &staging_bytes, &constant_bytes));
  PTERON_TRY(make_buffer(c, d.device_bytes,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &d.device_buffer,
                         &d.device_memory));
  PTERON_TRY(make_buffer(c, staging_bytes,
                         VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &d.staging_buffer, &d.staging_memory));
  void* mapped = nullptr;
  VkResult r = vkMapMemory(c.device, d.staging_memory, 0, VK_WHOLE_SIZE, 0, &mapped);
  if (r != VK_SUCCESS) return vk_fail("vkMapMemory", r);
  d.staging = static_cast<uint8_t*>(mapped);

  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = c.queue_family;
  r = vkCreateCommandPool(c.device, &cpi, nullptr, &d.command_pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateCommandPool", r);
  PTERON_TRY(allocate_commands(c, d.command_pool, &d.commands));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(c.device, &fci, nullptr, &d.fence);
  if (r != VK_SUCCESS) return vk_fail("vkCreateFence", r);

  // Constants: staged once, copied to the device buffer, then the staging memory is reused
  // for inputs and outputs.
  if (constant_bytes > 0) {
    std::vector<VkBufferCopy> copies;
    uint64_t at = 0;
    const uint8_t* blob = processed.data() + p.constant_data_offset();
    for (uint32_t i = 0; i < p.tensors()->size(); ++i) {
      const fb::Tensor& t = *p.tensors()->Get(i);
      if (!t.is_constant()) continue;
      memcpy(d.staging + at, blob + t.constant_offset(), t.constant_size());
      copies.push_back(VkBufferCopy{at, d.offsets[i], t.constant_size()});
      at = align_up(at + t.constant_size(), 16);
    }
    PTERON_TRY(submit_and_wait(d, [&](VkCommandBuffer cb) {
      vkCmdCopyBuffer(cb, d.staging_buffer, d.device_buffer, static_cast<uint32_t>(copies.size()),
                      copies.data());
    }));
  }

  const uint32_t num_nodes = p.nodes()->size();
  for (uint32_t n = 0; n < num_nodes; ++n) PTERON_TRY(plan_node(d, n, *p.nodes()->Get(n)));
  const uint32_t num_sets = d.dispatches.empty() ? 1 : static_cast<uint32_t>(d.dispatches.size());
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, num_sets * kNumBindings};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = num_sets;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  r = vkCreateDescriptorPool(c.device, &dpi, nullptr, &d.pool);
  if (r != VK_SUCCESS) return vk_fail("vkCreateDescriptorPool", r);
  const uint64_t dummy = d.dummy_offset;
  for (Dispatch& dp : d.dispatches) {
    char name[40];
    const bool arith = d.precision == kPrecisionFp16Arith;
    snprintf(name, sizeof(name), "%s%s", dp.shader, dp.f16 ? (arith ? "_f16a" : "_f16") : "");
    Result<VkPipeline> pipeline = c.pipeline(name);
    if (!pipeline.ok()) return pipeline.error();
    dp.pipeline = *pipeline;
    VkDescriptorSetAllocateInfo sai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    sai.descriptorPool = d.pool;
    sai.descriptorSetCount = 1;
    sai.pSetLayouts = &c.set_layout;
    r = vkAllocateDescriptorSets(c.device, &sai, &dp.set);
    if (r != VK_SUCCESS) return vk_fail("vkAllocateDescriptorSets", r);
    VkDescriptorBufferInfo infos[kNumBindings];
    VkWriteDescriptorSet writes[kNumBindings];
    for (uint32_t b = 0; b < kNumBindings; ++b) {
      const int64_t t = dp.bind[b];
      infos[b] = t < 0 ? VkDescriptorBufferInfo{d.device_buffer, dummy, 16}
                       : VkDescriptorBufferInfo{d.device_buffer, d.offsets[t],
                                                nbytes(tensor(d, static_cast<uint32_t>(t)))};
      writes[b] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstSet = dp.set;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(c.device, kNumBindings, writes, 0, nullptr);
  }
  return record(d, d.commands, VK_NULL_HANDLE);
}

// The timestamped recording, made on the first traced call. NotSupported when the queue has
// no timestamps (the run is then traced without per-dispatch events).
Error record_traced(Delegate& d) {
  if (d.traced_commands != VK_NULL_HANDLE) return Error::Ok;
  Context& c = *d.ctx;
  if (c.timestamp_bits == 0 || d.dispatches.empty()) return Error::NotSupported;
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = static_cast<uint32_t>(d.dispatches.size()) + 1;
  VkResult r = vkCreateQueryPool(c.device, &qpi, nullptr, &d.queries);
  if (r != VK_SUCCESS) return vk_fail("vkCreateQueryPool", r);
  d.stamps.resize(qpi.queryCount);
  PTERON_TRY(allocate_commands(c, d.command_pool, &d.traced_commands));
  return record(d, d.traced_commands, d.queries);
}

// After a traced run: one delegate event per dispatch, named by its op and shader, with the
// payload node's debug id, placed inside the host event `within` (submit to fence). The GPU
// clock has its own origin, so the dispatches are aligned to end where the host wait ended
// (the output copies after them are short), and kept inside `within`.
void report_dispatches(Delegate& d, ExecutionObserver& observer, int32_t within, uint64_t host_ns) {
  const uint32_t n = static_cast<uint32_t>(d.stamps.size());
  VkResult r =
      vkGetQueryPoolResults(d.ctx->device, d.queries, 0, n, n * sizeof(uint64_t), d.stamps.data(),
                            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) return;
  const uint32_t bits = d.ctx->timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  const double period = d.ctx->timestamp_period;
  const auto ns_between = [&](uint64_t a, uint64_t b) {
    return static_cast<uint64_t>(static_cast<double>((b - a) & mask) * period);
  };
  const uint64_t gpu_ns = ns_between(d.stamps[0], d.stamps[n - 1]);
  const uint64_t origin = host_ns > gpu_ns ? host_ns - gpu_ns : 0;
  for (uint32_t i = 0; i + 1 < n; ++i) {
    const Dispatch& dp = d.dispatches[i];
    observer.add_timed_delegate_event(dp.event, dp.debug_id, within,
                                      origin + ns_between(d.stamps[0], d.stamps[i]),
                                      ns_between(d.stamps[i], d.stamps[i + 1]));
  }
}

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
                "compiled for",
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
    const Error err = build(*d, processed);
    d->payload = nullptr;  // everything execute() needs was copied out of it
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
