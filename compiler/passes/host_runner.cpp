#include "compiler/passes/host_runner.h"

#include <deque>
#include <memory>
#include <string>

#include "compiler/compile_error.h"
#include "compiler/ir/kernel_call_form.h"
#include "runtime/core/evalue.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

// Owns every EValue payload for one kernel call.
class ArgBuilder {
 public:
  ArgBuilder(const ir::Graph& g, const ir::Node& node, const ValueBytes& bytes)
      : g_(g), node_(node), bytes_(bytes) {}

  Tensor* tensor(ir::ValueId id, uint8_t* data) {
    const ir::TensorSpec& spec = g_.value(id).spec;
    auto& meta = metas_.emplace_back();
    for (int64_t s : spec.sizes) meta.sizes.push_back(static_cast<int32_t>(s));
    meta.dim_order.assign(spec.dim_order.begin(), spec.dim_order.end());
    meta.strides.resize(spec.sizes.size());
    meta.tensor = Tensor(spec.dtype, static_cast<int32_t>(spec.sizes.size()), meta.sizes.data(),
                         meta.dim_order.data(), meta.strides.data(), data);
    return &meta.tensor;
  }

  Tensor* input(ir::ValueId id) {
    std::span<const uint8_t> b = bytes_(id);
    if (b.size() != g_.value(id).spec.nbytes()) {
      throw CompileError(node_.describe() + ": value '" + g_.value(id).name +
                         "' is not known on the host");
    }
    return tensor(id, const_cast<uint8_t*>(b.data()));  // kernels never write inputs
  }

  EValue convert(const ir::Argument& a) {
    EValue e;
    switch (a.kind()) {
      case ir::ArgKind::None:
      case ir::ArgKind::Device:
        return e;
      case ir::ArgKind::Int:
        return EValue::from_int(a.get<int64_t>());
      case ir::ArgKind::Float:
        return EValue::from_double(a.get<double>());
      case ir::ArgKind::Bool:
        return EValue::from_bool(a.get<bool>());
      case ir::ArgKind::ScalarType:
        return EValue::from_int(static_cast<int64_t>(a.get<ir::ScalarType>()));
      case ir::ArgKind::MemoryFormat:
        return EValue::from_int(static_cast<int64_t>(a.get<ir::MemoryFormat>()));
      case ir::ArgKind::Layout:
        return EValue::from_int(static_cast<int64_t>(a.get<ir::Layout>()));
      case ir::ArgKind::Scalar: {
        const auto& s = a.get<ir::Scalar>().value;
        if (const auto* i = std::get_if<int64_t>(&s)) return EValue::from_int(*i);
        if (const auto* d = std::get_if<double>(&s)) return EValue::from_double(*d);
        return EValue::from_bool(std::get<bool>(s));
      }
      case ir::ArgKind::String: {
        const std::string& str = strings_.emplace_back(a.get<std::string>());
        e.tag = Tag::String;
        e.string = Span<const char>(str.data(), str.size());
        return e;
      }
      case ir::ArgKind::IntList: {
        const auto& v = int_lists_.emplace_back(a.get<std::vector<int64_t>>());
        e.tag = Tag::IntList;
        e.int_list = Span<const int64_t>(v.data(), v.size());
        return e;
      }
      case ir::ArgKind::FloatList: {
        const auto& v = double_lists_.emplace_back(a.get<std::vector<double>>());
        e.tag = Tag::DoubleList;
        e.double_list = Span<const double>(v.data(), v.size());
        return e;
      }
      case ir::ArgKind::BoolList: {
        const auto& src = a.get<std::vector<bool>>();
        auto& v = bool_lists_.emplace_back(new bool[src.size() + 1]);
        for (size_t i = 0; i < src.size(); ++i) v[i] = src[i];
        e.tag = Tag::BoolList;
        e.bool_list = Span<const bool>(v.get(), src.size());
        return e;
      }
      case ir::ArgKind::Tensor:
        return EValue::from_tensor(input(a.tensor()));
      case ir::ArgKind::TensorList:
      case ir::ArgKind::OptionalTensorList: {
        const bool optional = a.kind() == ir::ArgKind::OptionalTensorList;
        const auto& ids =
            optional ? a.get<ir::OptionalTensorList>().ids : a.get<ir::TensorList>().ids;
        auto& list = tensor_lists_.emplace_back();
        for (ir::ValueId id : ids) list.push_back(id == ir::kNoValue ? nullptr : input(id));
        e.tag = optional ? Tag::OptionalTensorList : Tag::TensorList;
        e.tensor_list = Span<Tensor* const>(list.data(), list.size());
        return e;
      }
      case ir::ArgKind::SymInt:
      case ir::ArgKind::SymIntList:
        break;  // run-time sizes: such nodes never run on the host (passes skip them)
    }
    throw CompileError(node_.describe() + ": argument cannot run on the host");
  }

 private:
  struct Meta {
    std::vector<int32_t> sizes;
    std::vector<uint8_t> dim_order;
    std::vector<int32_t> strides;
    Tensor tensor;
  };
  const ir::Graph& g_;
  const ir::Node& node_;
  const ValueBytes& bytes_;
  std::deque<Meta> metas_;
  std::deque<std::string> strings_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::deque<std::vector<double>> double_lists_;
  std::deque<std::unique_ptr<bool[]>> bool_lists_;
  std::deque<std::vector<Tensor*>> tensor_lists_;
};

}  // namespace

std::vector<std::vector<uint8_t>> run_node_on_host(const ir::Graph& graph, const ir::Node& node,
                                                   const ValueBytes& value_bytes) {
  const KernelCallForm form = kernel_call_form(node);
  const std::string name = form.schema->op.ns + "::" + form.schema->op.name;
  const KernelEntry* kernel = find_kernel(name.c_str(), form.schema->op.overload.c_str());
  if (kernel == nullptr)
    throw CompileError(node.describe() + ": no host kernel for " + form.schema->op.str());

  std::vector<std::vector<uint8_t>> outputs(node.outputs.size());
  ArgBuilder builder(graph, node, value_bytes);
  std::deque<EValue> values;
  std::vector<Tensor*> out_list;
  std::vector<Tensor*> out_tensors;  // single-tensor outs, for the returned tuple
  for (const KernelArgSlot& slot : form.args) {
    switch (slot.source) {
      case KernelArgSlot::Source::NodeArg:
      case KernelArgSlot::Source::Default:
        values.push_back(builder.convert(*slot.value));
        break;
      case KernelArgSlot::Source::Output: {
        outputs[slot.output].resize(graph.value(node.outputs[slot.output]).spec.nbytes());
        out_tensors.push_back(
            builder.tensor(node.outputs[slot.output], outputs[slot.output].data()));
        values.push_back(EValue::from_tensor(out_tensors.back()));
        break;
      }
      case KernelArgSlot::Source::OutputList: {
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          outputs[i].resize(graph.value(node.outputs[i]).spec.nbytes());
          out_list.push_back(builder.tensor(node.outputs[i], outputs[i].data()));
        }
        EValue e;
        e.tag = Tag::TensorList;
        e.tensor_list = Span<Tensor* const>(out_list.data(), out_list.size());
        values.push_back(e);
        break;
      }
    }
  }
  std::vector<EValue*> args;
  for (EValue& v : values) args.push_back(&v);
  EValue tuple_value;
  if (form.return_form == ReturnForm::RepeatArg) {
    args.push_back(args[form.return_arg]);
  } else if (form.return_form == ReturnForm::OutputTuple) {
    tuple_value.tag = Tag::TensorList;
    tuple_value.tensor_list = Span<Tensor* const>(out_tensors.data(), out_tensors.size());
    args.push_back(&tuple_value);
  }
  static std::vector<uint8_t> scratch(size_t{64} << 20);
  MemoryAllocator scratch_allocator(scratch.data(), scratch.size());
  KernelContext ctx{&scratch_allocator};
  clear_error_message();
  const Error e = call_kernel(*kernel, ctx, Span<EValue*>(args.data(), args.size()));
  if (e != Error::Ok)
    throw CompileError(node.describe() + ": host kernel failed: " + last_error_message());
  return outputs;
}

}  // namespace pteron::compiler
