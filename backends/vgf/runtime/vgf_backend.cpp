#include "backends/vgf/runtime/vgf_backend.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "backends/vgf/runtime/payload_format.h"
#include "backends/vgf/runtime/vgf_context.h"
#include "backends/vgf/runtime/vgf_model.h"
#include "runtime/core/scalar_type.h"
#include "runtime/executor/method.h"

namespace pteron {
namespace vgf {
namespace {

VkFormat format_of(ScalarType t) {
  switch (t) {
    case ScalarType::Float:
      return VK_FORMAT_R32_SFLOAT;
    case ScalarType::Half:
      return VK_FORMAT_R16_SFLOAT;
    case ScalarType::Int:
      return VK_FORMAT_R32_SINT;
    case ScalarType::Short:
      return VK_FORMAT_R16_SINT;
    case ScalarType::Char:
      return VK_FORMAT_R8_SINT;
    case ScalarType::Long:
      return VK_FORMAT_R64_SINT;
    default:
      return VK_FORMAT_UNDEFINED;
  }
}

struct Tensor {
  VkTensorARM tensor = VK_NULL_HANDLE;
  VkTensorViewARM view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t* mapped = nullptr;
  uint64_t nbytes = 0;
};

struct Delegate {
  Context* ctx = nullptr;
  std::vector<Tensor> tensors;            // one per Model::bindings entry
  std::vector<uint32_t> inputs, outputs;  // tensor index of region input/output i
  std::vector<const IoDesc*> io;
  std::vector<VkDescriptorSetLayout> set_layouts;
  std::vector<VkDescriptorSet> sets;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDataGraphPipelineSessionARM session = VK_NULL_HANDLE;
  std::vector<VkDeviceMemory> session_memory;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::mutex mutex;
  int recordings = 0;

  ~Delegate() {
    if (ctx == nullptr) return;
    VkDevice dev = ctx->device;
    if (fence) vkDestroyFence(dev, fence, nullptr);
    if (command_pool) vkDestroyCommandPool(dev, command_pool, nullptr);
    if (pool) vkDestroyDescriptorPool(dev, pool, nullptr);
    if (session) ctx->destroy_session(dev, session, nullptr);
    for (VkDeviceMemory m : session_memory) vkFreeMemory(dev, m, nullptr);
    if (pipeline) vkDestroyPipeline(dev, pipeline, nullptr);
    if (shader) vkDestroyShaderModule(dev, shader, nullptr);
    if (pipeline_layout) vkDestroyPipelineLayout(dev, pipeline_layout, nullptr);
    for (VkDescriptorSetLayout l : set_layouts) {
      if (l) vkDestroyDescriptorSetLayout(dev, l, nullptr);
    }
    for (Tensor& t : tensors) {
      if (t.view) ctx->destroy_tensor_view(dev, t.view, nullptr);
      if (t.tensor) ctx->destroy_tensor(dev, t.tensor, nullptr);
      if (t.memory) vkFreeMemory(dev, t.memory, nullptr);
    }
  }
};

Error vk_fail(const char* what, VkResult r) {
  return fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                  ? Error::OutOfMemory
                  : Error::DelegateFailed,
              "VGF delegate: %s failed (%s)", what, vk_result_name(r));
}

#define VK_TRY(what, call)                                \
  do {                                                    \
    VkResult vk_r_ = (call);                              \
    if (vk_r_ != VK_SUCCESS) return vk_fail(what, vk_r_); \
  } while (0)

VkTensorDescriptionARM describe(const Resource& r) {
  VkTensorDescriptionARM d{VK_STRUCTURE_TYPE_TENSOR_DESCRIPTION_ARM};
  d.tiling = VK_TENSOR_TILING_LINEAR_ARM;
  d.format = r.format;
  d.dimensionCount = static_cast<uint32_t>(r.shape.size());
  d.pDimensions = r.shape.data();
  d.pStrides = nullptr;  // packed
  d.usage = VK_TENSOR_USAGE_DATA_GRAPH_BIT_ARM;
  return d;
}

// Region I/O must match the VGF's tensors: same count, element format and shape.
Error check_io(const PayloadView& p, const Model& m) {
  if (p.header->num_inputs != m.inputs.size() || p.header->num_outputs != m.outputs.size()) {
    return fail(Error::InvalidProgram,
                "VGF payload: the I/O table has %u inputs / %u outputs, the VGF %zu / %zu",
                p.header->num_inputs, p.header->num_outputs, m.inputs.size(), m.outputs.size());
  }
  const uint32_t num_io = p.header->num_inputs + p.header->num_outputs;
  for (uint32_t i = 0; i < num_io; ++i) {
    const IoDesc& io = p.io[i];
    const bool is_input = i < p.header->num_inputs;
    const uint32_t b = is_input ? m.inputs[io.vgf_index] : m.outputs[io.vgf_index];
    const Resource& r = m.resources[m.bindings[b].mrt_index];
    // The converter may drop or add leading 1s (TOSA ranks): compare element counts and the
    // non-unit dims in order.
    bool same = format_of(static_cast<ScalarType>(io.dtype)) == r.format;
    uint64_t numel = 1;
    for (uint32_t d = 0; d < io.rank; ++d) numel *= static_cast<uint64_t>(io.dims[d]);
    same = same && numel * format_size(r.format) == r.nbytes;
    if (!same) {
      return fail(Error::InvalidProgram,
                  "VGF payload: %s %u (%s, %llu elements) does not match the VGF's tensor "
                  "(VkFormat %d, %llu bytes)",
                  is_input ? "input" : "output", is_input ? i : i - p.header->num_inputs,
                  scalar_type_name(static_cast<ScalarType>(io.dtype)),
                  static_cast<unsigned long long>(numel), static_cast<int>(r.format),
                  static_cast<unsigned long long>(r.nbytes));
    }
  }
  return Error::Ok;
}

Error make_tensor(Context& c, const Resource& r, Tensor* t) {
  VkTensorDescriptionARM desc = describe(r);
  VkTensorCreateInfoARM ci{VK_STRUCTURE_TYPE_TENSOR_CREATE_INFO_ARM};
  ci.pDescription = &desc;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VK_TRY("vkCreateTensorARM", c.create_tensor(c.device, &ci, nullptr, &t->tensor));
  VkTensorMemoryRequirementsInfoARM ri{VK_STRUCTURE_TYPE_TENSOR_MEMORY_REQUIREMENTS_INFO_ARM};
  ri.tensor = t->tensor;
  VkMemoryRequirements2 req{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
  c.tensor_memory_requirements(c.device, &ri, &req);
  const int32_t type =
      c.memory_type(req.memoryRequirements.memoryTypeBits,
                    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (type < 0) {
    return fail(Error::NotSupported,
                "VGF delegate: device %s has no host-visible memory for tensors",
                c.properties.deviceName);
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.memoryRequirements.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  VK_TRY("vkAllocateMemory", vkAllocateMemory(c.device, &mai, nullptr, &t->memory));
  VkBindTensorMemoryInfoARM bi{VK_STRUCTURE_TYPE_BIND_TENSOR_MEMORY_INFO_ARM};
  bi.tensor = t->tensor;
  bi.memory = t->memory;
  VK_TRY("vkBindTensorMemoryARM", c.bind_tensor_memory(c.device, 1, &bi));
  void* p = nullptr;
  VK_TRY("vkMapMemory", vkMapMemory(c.device, t->memory, 0, VK_WHOLE_SIZE, 0, &p));
  t->mapped = static_cast<uint8_t*>(p);
  t->nbytes = r.nbytes;
  VkTensorViewCreateInfoARM vi{VK_STRUCTURE_TYPE_TENSOR_VIEW_CREATE_INFO_ARM};
  vi.tensor = t->tensor;
  vi.format = r.format;
  VK_TRY("vkCreateTensorViewARM", c.create_tensor_view(c.device, &vi, nullptr, &t->view));
  return Error::Ok;
}

Error build_pipeline(Delegate& d, const Model& m) {
  Context& c = *d.ctx;
  // Descriptor-set layouts: one per set index used, every binding a tensor.
  uint32_t num_sets = 0;
  for (const Binding& b : m.bindings) num_sets = b.set + 1 > num_sets ? b.set + 1 : num_sets;
  d.set_layouts.assign(num_sets, VK_NULL_HANDLE);
  for (uint32_t s = 0; s < num_sets; ++s) {
    std::vector<VkDescriptorSetLayoutBinding> lb;
    for (const Binding& b : m.bindings) {
      if (b.set != s) continue;
      VkDescriptorSetLayoutBinding x{};
      x.binding = b.binding;
      x.descriptorType = VK_DESCRIPTOR_TYPE_TENSOR_ARM;
      x.descriptorCount = 1;
      x.stageFlags = VK_SHADER_STAGE_ALL;
      lb.push_back(x);
    }
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = static_cast<uint32_t>(lb.size());
    li.pBindings = lb.data();
    VK_TRY("vkCreateDescriptorSetLayout",
           vkCreateDescriptorSetLayout(c.device, &li, nullptr, &d.set_layouts[s]));
  }
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = num_sets;
  pli.pSetLayouts = d.set_layouts.data();
  VK_TRY("vkCreatePipelineLayout",
         vkCreatePipelineLayout(c.device, &pli, nullptr, &d.pipeline_layout));

  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = m.spirv_words * 4;
  smi.pCode = m.spirv;
  VK_TRY("vkCreateShaderModule", vkCreateShaderModule(c.device, &smi, nullptr, &d.shader));

  std::vector<VkTensorDescriptionARM> descs;
  descs.reserve(m.bindings.size() + m.constants.size());
  std::vector<VkDataGraphPipelineResourceInfoARM> infos;
  for (const Binding& b : m.bindings) {
    descs.push_back(describe(m.resources[b.mrt_index]));
    VkDataGraphPipelineResourceInfoARM ri{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_RESOURCE_INFO_ARM};
    ri.pNext = &descs.back();
    ri.descriptorSet = b.set;
    ri.binding = b.binding;
    infos.push_back(ri);
  }
  std::vector<VkDataGraphPipelineConstantARM> constants;
  for (const GraphConstant& k : m.constants) {
    descs.push_back(describe(m.resources[k.mrt_index]));
    VkDataGraphPipelineConstantARM ci{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CONSTANT_ARM};
    ci.pNext = &descs.back();
    ci.id = k.id;
    ci.pConstantData = k.data;
    constants.push_back(ci);
  }
  VkDataGraphPipelineShaderModuleCreateInfoARM module{
      VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SHADER_MODULE_CREATE_INFO_ARM};
  module.module = d.shader;
  module.pName = m.entry_point;
  module.constantCount = static_cast<uint32_t>(constants.size());
  module.pConstants = constants.data();
  VkDataGraphPipelineCreateInfoARM gci{VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_CREATE_INFO_ARM};
  gci.pNext = &module;
  gci.layout = d.pipeline_layout;
  gci.resourceInfoCount = static_cast<uint32_t>(infos.size());
  gci.pResourceInfos = infos.data();
  VK_TRY("vkCreateDataGraphPipelinesARM",
         c.create_data_graph_pipelines(c.device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &gci, nullptr,
                                       &d.pipeline));

  // Session and the memory its bind points ask for.
  VkDataGraphPipelineSessionCreateInfoARM sci{
      VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_CREATE_INFO_ARM};
  sci.dataGraphPipeline = d.pipeline;
  VK_TRY("vkCreateDataGraphPipelineSessionARM",
         c.create_session(c.device, &sci, nullptr, &d.session));
  VkDataGraphPipelineSessionBindPointRequirementsInfoARM bri{
      VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENTS_INFO_ARM};
  bri.session = d.session;
  uint32_t nreq = 0;
  VK_TRY("vkGetDataGraphPipelineSessionBindPointRequirementsARM",
         c.session_bind_point_requirements(c.device, &bri, &nreq, nullptr));
  std::vector<VkDataGraphPipelineSessionBindPointRequirementARM> reqs(
      nreq, {VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_REQUIREMENT_ARM});
  if (nreq > 0) {
    VK_TRY("vkGetDataGraphPipelineSessionBindPointRequirementsARM",
           c.session_bind_point_requirements(c.device, &bri, &nreq, reqs.data()));
  }
  for (const auto& req : reqs) {
    if (req.bindPointType != VK_DATA_GRAPH_PIPELINE_SESSION_BIND_POINT_TYPE_MEMORY_ARM) continue;
    for (uint32_t obj = 0; obj < req.numObjects; ++obj) {
      VkDataGraphPipelineSessionMemoryRequirementsInfoARM mri{
          VK_STRUCTURE_TYPE_DATA_GRAPH_PIPELINE_SESSION_MEMORY_REQUIREMENTS_INFO_ARM};
      mri.session = d.session;
      mri.bindPoint = req.bindPoint;
      mri.objectIndex = obj;
      VkMemoryRequirements2 mr{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
      c.session_memory_requirements(c.device, &mri, &mr);
      if (mr.memoryRequirements.size == 0) continue;
      int32_t type =
          c.memory_type(mr.memoryRequirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      if (type < 0) type = c.memory_type(mr.memoryRequirements.memoryTypeBits, 0);
      if (type < 0) {
        return fail(Error::NotSupported, "VGF delegate: no memory type for the graph session");
      }
      VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      mai.allocationSize = mr.memoryRequirements.size;
      mai.memoryTypeIndex = static_cast<uint32_t>(type);
      VkDeviceMemory mem = VK_NULL_HANDLE;
      VK_TRY("vkAllocateMemory", vkAllocateMemory(c.device, &mai, nullptr, &mem));
      d.session_memory.push_back(mem);
      VkBindDataGraphPipelineSessionMemoryInfoARM bi{
          VK_STRUCTURE_TYPE_BIND_DATA_GRAPH_PIPELINE_SESSION_MEMORY_INFO_ARM};
      bi.session = d.session;
      bi.bindPoint = req.bindPoint;
      bi.objectIndex = obj;
      bi.memory = mem;
      VK_TRY("vkBindDataGraphPipelineSessionMemoryARM", c.bind_session_memory(c.device, 1, &bi));
    }
  }
  return Error::Ok;
}

Error record(Delegate& d, const Model& m) {
  Context& c = *d.ctx;
  const uint32_t num_sets = static_cast<uint32_t>(d.set_layouts.size());
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_TENSOR_ARM,
                            static_cast<uint32_t>(m.bindings.size())};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = num_sets;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  VK_TRY("vkCreateDescriptorPool", vkCreateDescriptorPool(c.device, &dpi, nullptr, &d.pool));
  d.sets.assign(num_sets, VK_NULL_HANDLE);
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = d.pool;
  dai.descriptorSetCount = num_sets;
  dai.pSetLayouts = d.set_layouts.data();
  VK_TRY("vkAllocateDescriptorSets", vkAllocateDescriptorSets(c.device, &dai, d.sets.data()));
  std::vector<VkWriteDescriptorSetTensorARM> tw(m.bindings.size());
  std::vector<VkWriteDescriptorSet> writes(m.bindings.size());
  for (size_t i = 0; i < m.bindings.size(); ++i) {
    tw[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_TENSOR_ARM};
    tw[i].tensorViewCount = 1;
    tw[i].pTensorViews = &d.tensors[i].view;
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].pNext = &tw[i];
    writes[i].dstSet = d.sets[m.bindings[i].set];
    writes[i].dstBinding = m.bindings[i].binding;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_TENSOR_ARM;
  }
  vkUpdateDescriptorSets(c.device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);

  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = c.queue_family;
  VK_TRY("vkCreateCommandPool", vkCreateCommandPool(c.device, &cpi, nullptr, &d.command_pool));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = d.command_pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VK_TRY("vkAllocateCommandBuffers", vkAllocateCommandBuffers(c.device, &cai, &d.commands));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VK_TRY("vkCreateFence", vkCreateFence(c.device, &fci, nullptr, &d.fence));

  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VK_TRY("vkBeginCommandBuffer", vkBeginCommandBuffer(d.commands, &bi));
  vkCmdBindPipeline(d.commands, VK_PIPELINE_BIND_POINT_DATA_GRAPH_ARM, d.pipeline);
  vkCmdBindDescriptorSets(d.commands, VK_PIPELINE_BIND_POINT_DATA_GRAPH_ARM, d.pipeline_layout, 0,
                          num_sets, d.sets.data(), 0, nullptr);
  c.cmd_dispatch_data_graph(d.commands, d.session, nullptr);
  // Graph writes become visible to the host reads after the fence.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(d.commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &barrier, 0, nullptr, 0, nullptr);
  VK_TRY("vkEndCommandBuffer", vkEndCommandBuffer(d.commands));
  ++d.recordings;
  return Error::Ok;
}

class VgfBackend final : public BackendInterface {
 public:
  bool is_available() const override { return shared_context().ok(); }

  Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                               Span<const CompileSpecView> compile_specs) override {
    PTERON_ASSIGN_OR_RETURN(PayloadView payload, verify_payload(processed));
    PTERON_ASSIGN_OR_RETURN(Model * decoded, decode_vgf(payload.vgf));
    std::unique_ptr<Model> model(decoded);  // only needed during init
    PTERON_TRY(check_io(payload, *model));
    PTERON_ASSIGN_OR_RETURN(Context * ctx, shared_context());
    std::unique_ptr<Delegate> d(new (std::nothrow) Delegate());
    if (!d) return fail(Error::OutOfMemory, "VGF delegate: no memory for the delegate");
    d->ctx = ctx;
    d->tensors.resize(model->bindings.size());
    for (size_t i = 0; i < model->bindings.size(); ++i) {
      PTERON_TRY(make_tensor(*ctx, model->resources[model->bindings[i].mrt_index], &d->tensors[i]));
    }
    const uint32_t num_io = payload.header->num_inputs + payload.header->num_outputs;
    for (uint32_t i = 0; i < num_io; ++i) {
      const IoDesc& io = payload.io[i];
      d->io.push_back(&io);
      if (i < payload.header->num_inputs) {
        d->inputs.push_back(model->inputs[io.vgf_index]);
      } else {
        d->outputs.push_back(model->outputs[io.vgf_index]);
      }
    }
    PTERON_TRY(build_pipeline(*d, *model));
    PTERON_TRY(record(*d, *model));
    return static_cast<DelegateHandle*>(d.release());
  }

  Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                Span<EValue*> args) override {
    Delegate& d = *static_cast<Delegate*>(handle);
    const size_t ni = d.inputs.size(), no = d.outputs.size();
    if (args.size() < ni + no) {
      return fail(Error::InvalidArgument, "VGF delegate: %zu arguments, expected %zu", args.size(),
                  ni + no);
    }
    for (size_t i = 0; i < ni + no; ++i) {
      const bool is_input = i < ni;
      if (args[i] == nullptr || !args[i]->is_tensor() || args[i]->tensor == nullptr) {
        return fail(Error::InvalidArgument, "VGF delegate: argument %zu is not a tensor", i);
      }
      const pteron::Tensor& t = *args[i]->tensor;
      const IoDesc& io = *d.io[i];
      const Tensor& dt = d.tensors[is_input ? d.inputs[i] : d.outputs[i - ni]];
      bool ok = static_cast<uint32_t>(t.dtype()) == io.dtype &&
                static_cast<uint32_t>(t.dim()) == io.rank && t.nbytes() == dt.nbytes;
      for (uint32_t k = 0; ok && k < io.rank; ++k) {
        ok = t.size(k) == io.dims[k] && t.dim_order()[k] == io.dim_order[k];
      }
      if (!ok) {
        return fail(Error::InvalidArgument,
                    "VGF delegate: %s %zu must be a %s tensor of the compiled shape and dim order",
                    is_input ? "input" : "output", is_input ? i : i - ni,
                    scalar_type_name(static_cast<ScalarType>(io.dtype)));
      }
    }
    std::lock_guard<std::mutex> guard(d.mutex);
    // When tracing, the three phases are delegate events: host copies into the mapped input
    // tensors, the recorded graph dispatch (submit to fence), host copies out.
    ExecutionObserver* observer = context.observer;
    int32_t event = observer ? observer->begin_delegate_event("vgf: copy inputs", -1) : -1;
    for (size_t i = 0; i < ni; ++i) {
      const Tensor& dt = d.tensors[d.inputs[i]];
      memcpy(dt.mapped, args[i]->tensor->const_data(), dt.nbytes);
    }
    if (observer) {
      observer->end_delegate_event(event);
      event = observer->begin_delegate_event("vgf: run data graph", -1);
    }
    VkResult r;
    {
      std::lock_guard<std::mutex> queue_guard(d.ctx->mutex);
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &d.commands;
      r = vkQueueSubmit(d.ctx->queue, 1, &si, d.fence);
    }
    if (r == VK_SUCCESS) {
      r = vkWaitForFences(d.ctx->device, 1, &d.fence, VK_TRUE, UINT64_MAX);
      vkResetFences(d.ctx->device, 1, &d.fence);
    }
    if (observer) observer->end_delegate_event(event);
    if (r != VK_SUCCESS) return vk_fail("vkQueueSubmit/vkWaitForFences", r);
    if (observer) event = observer->begin_delegate_event("vgf: copy outputs", -1);
    for (size_t i = 0; i < no; ++i) {
      const Tensor& dt = d.tensors[d.outputs[i]];
      memcpy(args[ni + i]->tensor->mutable_data(), dt.mapped, dt.nbytes);
    }
    if (observer) observer->end_delegate_event(event);
    return Error::Ok;
  }

  void destroy(DelegateHandle* handle) override { delete static_cast<Delegate*>(handle); }
};

VgfBackend g_backend;

}  // namespace

BackendInterface& backend() { return g_backend; }

}  // namespace vgf
}  // namespace pteron

PTERON_REGISTER_BACKEND(pteron::vgf::kBackendId, pteron::vgf::g_backend);

namespace pteron {
namespace vgf {

int delegate_recordings(const DelegateHandle* handle) {
  return static_cast<const Delegate*>(handle)->recordings;
}

}  // namespace vgf
}  // namespace pteron
