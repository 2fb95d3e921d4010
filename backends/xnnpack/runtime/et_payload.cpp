#include "backends/xnnpack/runtime/et_payload.h"

#include <algorithm>
#include <cstring>

#include "backends/xnnpack/schema/executorch_xnnpack_generated.h"

namespace pteron {
namespace xnnpack {
namespace et {
namespace {

namespace fb = ::pteron::xnnpack::et_fb;  // schema/executorch_xnnpack.fbs

constexpr size_t kHeaderSize = 30;         // ExecuTorch's XNNHeader
constexpr uint32_t kFlagInput = 1;         // XNN_VALUE_FLAG_EXTERNAL_INPUT
constexpr uint32_t kFlagOutput = 2;        // XNN_VALUE_FLAG_EXTERNAL_OUTPUT
constexpr uint32_t kTransposeWeights = 1;  // XNN_FLAG_TRANSPOSE_WEIGHTS
constexpr uint64_t kNoOffset = ~uint64_t{0};

bool has_identifier(const uint8_t* flatbuffer) {
  return std::memcmp(flatbuffer + 4, "XN00", 4) == 0 || std::memcmp(flatbuffer + 4, "XN01", 4) == 0;
}

uint32_t read_u32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// The node kinds read, by the schema's union type; the rest named for the refusal.
struct UnionEntry {
  fb::XNodeUnion type;
  NodeKind kind;
};
constexpr UnionEntry kRead[] = {
    {fb::XNodeUnion::XNNFullyConnected, NodeKind::FullyConnected},
    {fb::XNodeUnion::XNNAdd, NodeKind::Add},
    {fb::XNodeUnion::XNNSubtract, NodeKind::Subtract},
    {fb::XNodeUnion::XNNMultiply, NodeKind::Multiply},
    {fb::XNodeUnion::XNNDiv, NodeKind::Divide},
    {fb::XNodeUnion::XNNMinimum, NodeKind::Minimum},
    {fb::XNodeUnion::XNNMaximum, NodeKind::Maximum},
    {fb::XNodeUnion::XNNClamp, NodeKind::Clamp},
    {fb::XNodeUnion::XNNSoftmax, NodeKind::Softmax},
    {fb::XNodeUnion::XNNSigmoid, NodeKind::Sigmoid},
    {fb::XNodeUnion::XNNAbs, NodeKind::Abs},
    {fb::XNodeUnion::XNNNegate, NodeKind::Negate},
    {fb::XNodeUnion::XNNFloor, NodeKind::Floor},
    {fb::XNodeUnion::XNNCeiling, NodeKind::Ceiling},
    {fb::XNodeUnion::XNNSquare, NodeKind::Square},
    {fb::XNodeUnion::XNNSquareRoot, NodeKind::SquareRoot},
    {fb::XNodeUnion::XNNHardswish, NodeKind::Hardswish},
    {fb::XNodeUnion::XNNLeakyReLU, NodeKind::LeakyRelu},
    {fb::XNodeUnion::XNNELU, NodeKind::Elu},
    {fb::XNodeUnion::XNNStaticReshape, NodeKind::Reshape},
};

// Node types Debian's XNNPACK snapshot has but this reader does not take yet.
bool debian_has(fb::XNodeUnion type) {
  switch (type) {
    case fb::XNodeUnion::XNNConv2d:
    case fb::XNodeUnion::XNNDepthwiseConv2d:
    case fb::XNodeUnion::XNNConvTranspose2d:
    case fb::XNodeUnion::XNNAvgPooling2d:
    case fb::XNodeUnion::XNNMaxPooling2d:
    case fb::XNodeUnion::XNNArgMaxPooling2d:
    case fb::XNodeUnion::XNNGlobalAvgPooling2d:
    case fb::XNodeUnion::XNNStaticConstantPad:
    case fb::XNodeUnion::XNNStaticResizeBilinear2D:
    case fb::XNodeUnion::XNNPReLU:
    case fb::XNodeUnion::XNNConvert:
      return true;
    default:
      return false;
  }
}

const char* datatype_name(fb::XNNDatatype t) {
  const char* name = fb::EnumNameXNNDatatype(t);
  return name != nullptr && name[0] != '\0' ? name : "an unknown datatype";
}

class Reader {
 public:
  Reader(const fb::XNNGraph& g, Span<const uint8_t> constants, Graph& out)
      : g_(g), constants_(constants), out_(out) {}

  Error run() {
    PTERON_CHECK(g_.xvalues() != nullptr && g_.xnodes() != nullptr, Error::InvalidProgram,
                 "XNNPACK payload has no values or no nodes");
    PTERON_CHECK(g_.xvalues()->size() <= (1u << 24), Error::InvalidProgram,
                 "XNNPACK payload has %u values", g_.xvalues()->size());
    out_.values.assign(g_.xvalues()->size(), Value());
    seen_.assign(g_.xvalues()->size(), false);
    flags_.assign(g_.xvalues()->size(), 0);
    external_id_.assign(g_.xvalues()->size(), kNoValue);
    for (uint32_t i = 0; i < g_.xvalues()->size(); ++i) PTERON_TRY(read_value(i));
    PTERON_TRY(read_externals());
    written_.assign(out_.values.size(), false);
    for (uint32_t i = 0; i < g_.xnodes()->size(); ++i) PTERON_TRY(read_node(i));
    for (size_t a = out_.num_inputs; a < out_.args.size(); ++a) {
      PTERON_CHECK(written_[out_.args[a]], Error::InvalidProgram,
                   "XNNPACK payload output value %u is written by no node", out_.args[a]);
    }
    return Error::Ok;
  }

 private:
  Error bad_value(uint32_t index, const char* what) const {
    return fail(Error::InvalidProgram, "XNNPACK payload value %u %s", index, what);
  }

  Error read_value(uint32_t index) {
    const fb::XValue* xv = g_.xvalues()->Get(index);
    const fb::XNNTensorValue* t = xv != nullptr ? xv->xvalue_union_as_XNNTensorValue() : nullptr;
    if (xv != nullptr && xv->xvalue_union_type() == fb::XValueUnion::XNNQuantizedTensorValue) {
      const fb::XNNQuantizedTensorValue* q = xv->xvalue_union_as_XNNQuantizedTensorValue();
      const fb::XNNTensorValue* base = q != nullptr ? q->tensor_value() : nullptr;
      return fail(Error::NotSupported,
                  "XNNPACK payload value %u is quantized (%s): Debian's XNNPACK (2022) has no "
                  "dynamically quantized or 4-bit tensors (ExecuTorch's 8da4w / int4 linears); "
                  "export without quantization or run ExecuTorch's portable program",
                  index, base != nullptr ? datatype_name(base->datatype()) : "no tensor");
    }
    if (t == nullptr) return bad_value(index, "is not a tensor value");
    if (t->datatype() != fb::XNNDatatype::xnn_datatype_fp32) {
      return fail(Error::NotSupported,
                  "XNNPACK payload value %u is %s: pteron reads ExecuTorch's fp32 XNNPACK payloads",
                  index, datatype_name(t->datatype()));
    }
    if (t->dq_datatype() != fb::XNNDatatype::xnn_datatype_invalid) {
      return fail(Error::NotSupported,
                  "XNNPACK payload value %u is quantized at run time (%s): Debian's XNNPACK "
                  "(2022) has no dynamic quantization",
                  index, datatype_name(t->dq_datatype()));
    }
    const uint32_t id = t->id_out();
    PTERON_CHECK(id < out_.values.size() && !seen_[id], Error::InvalidProgram,
                 "XNNPACK payload value %u has id %u: ids are 0 to %zu, each once", index, id,
                 out_.values.size() - 1);
    seen_[id] = true;
    Value& v = out_.values[id];
    const auto* dims = t->dims();
    const uint32_t rank = dims != nullptr ? dims->size() : 0;
    PTERON_CHECK(rank == t->num_dims() && rank <= kMaxDims, Error::InvalidProgram,
                 "XNNPACK payload value %u has %u dims (num_dims %u; at most %u)", id, rank,
                 t->num_dims(), kMaxDims);
    v.rank = rank;
    uint64_t numel = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      v.dims[d] = dims->Get(d);
      PTERON_CHECK(v.dims[d] > 0 && v.dims[d] < (1u << 31), Error::InvalidProgram,
                   "XNNPACK payload value %u dim %u is %u", id, d, v.dims[d]);
      numel *= v.dims[d];
      PTERON_CHECK(numel < (uint64_t{1} << 40), Error::InvalidProgram,
                   "XNNPACK payload value %u has more than 2^40 elements", id);
    }
    v.nbytes = numel * sizeof(float);
    PTERON_CHECK((t->flags() & ~(kFlagInput | kFlagOutput)) == 0, Error::InvalidProgram,
                 "XNNPACK payload value %u has flags 0x%x (external input 1, output 2)", id,
                 t->flags());
    flags_[id] = t->flags();
    external_id_[id] = t->external_id();
    if (t->constant_buffer_idx() != 0) PTERON_TRY(read_constant(id, t->constant_buffer_idx()));
    PTERON_CHECK(!(v.is_constant && t->flags() != 0), Error::InvalidProgram,
                 "XNNPACK payload value %u is both a constant and external", id);
    return Error::Ok;
  }

  Error read_constant(uint32_t id, uint32_t index) {
    Value& v = out_.values[id];
    v.is_constant = true;
    const auto* table = g_.constant_data();
    if (table != nullptr && table->size() > 0) {
      PTERON_CHECK(index < table->size() && table->Get(index) != nullptr, Error::InvalidProgram,
                   "XNNPACK payload value %u reads constant %u of %u", id, index, table->size());
      const fb::ConstantDataOffset& c = *table->Get(index);
      PTERON_CHECK(c.size() >= v.nbytes, Error::InvalidProgram,
                   "XNNPACK payload value %u: constant %u holds %llu bytes, the tensor needs %llu",
                   id, index, static_cast<unsigned long long>(c.size()),
                   static_cast<unsigned long long>(v.nbytes));
      if (c.named_key() != nullptr && c.named_key()->size() > 0) {
        PTERON_CHECK(c.offset() == kNoOffset, Error::InvalidProgram,
                     "XNNPACK payload constant %u has both a named key and an offset", index);
        v.named_key = c.named_key()->str();
        return Error::Ok;
      }
      PTERON_CHECK(c.offset() <= constants_.size() && v.nbytes <= constants_.size() - c.offset(),
                   Error::InvalidProgram,
                   "XNNPACK payload constant %u (offset %llu, %llu bytes) lies outside the "
                   "payload's %zu bytes of constant data",
                   index, static_cast<unsigned long long>(c.offset()),
                   static_cast<unsigned long long>(v.nbytes), constants_.size());
      v.data = constants_.data() + c.offset();
      return Error::Ok;
    }
    const auto* buffers = g_.constant_buffer();
    PTERON_CHECK(buffers != nullptr && index < buffers->size(), Error::InvalidProgram,
                 "XNNPACK payload value %u reads constant %u, which the payload lacks", id, index);
    const fb::Buffer* b = buffers->Get(index);
    PTERON_CHECK(b != nullptr && b->storage() != nullptr && b->storage()->size() >= v.nbytes,
                 Error::InvalidProgram,
                 "XNNPACK payload value %u: constant buffer %u is smaller than the tensor", id,
                 index);
    v.data = b->storage()->data();
    return Error::Ok;
  }

  // The values flagged external, each bound to DelegateCall argument external_id: inputs take
  // 0 .. I-1, outputs I .. I+O-1, each once; input_ids / output_ids list the same values.
  Error read_externals() {
    std::vector<uint32_t> inputs, outputs;
    for (uint32_t id = 0; id < flags_.size(); ++id) {
      if (flags_[id] & kFlagInput) inputs.push_back(id);
      if (flags_[id] & kFlagOutput) outputs.push_back(id);
    }
    const size_t n = inputs.size() + outputs.size();
    PTERON_CHECK(g_.num_externs() == n, Error::InvalidProgram,
                 "XNNPACK payload has %u externals but %zu values flagged external",
                 g_.num_externs(), n);
    out_.num_inputs = inputs.size();
    out_.args.assign(n, kNoValue);
    for (uint32_t id : inputs) {
      PTERON_CHECK((flags_[id] & kFlagOutput) == 0, Error::InvalidProgram,
                   "XNNPACK payload value %u is both an input and an output", id);
    }
    for (const std::vector<uint32_t>* list : {&inputs, &outputs}) {
      const bool input = list == &inputs;
      for (uint32_t id : *list) {
        const uint32_t arg = external_id_[id];
        const bool in_range = input ? arg < inputs.size() : arg >= inputs.size() && arg < n;
        PTERON_CHECK(in_range && out_.args[arg] == kNoValue, Error::InvalidProgram,
                     "XNNPACK payload %s value %u has external id %u: the %zu input(s) take the "
                     "first ids and the outputs the rest, each once",
                     input ? "input" : "output", id, arg, inputs.size());
        out_.args[arg] = id;
        (input ? out_.values[id].input_arg : out_.values[id].output_arg) = int32_t(arg);
      }
    }
    const auto same = [](const flatbuffers::Vector<uint32_t>* list,
                         const std::vector<uint32_t>& ids) {
      if (list == nullptr || list->size() != ids.size()) return false;
      std::vector<uint32_t> listed(list->begin(), list->end());
      std::sort(listed.begin(), listed.end());
      return listed == ids;  // ids are in increasing order
    };
    PTERON_CHECK(same(g_.input_ids(), inputs) && same(g_.output_ids(), outputs),
                 Error::InvalidProgram,
                 "XNNPACK payload's input_ids / output_ids are not its external values");
    return Error::Ok;
  }

  // An activation a node reads: written by an earlier node, an input or a constant.
  Error check_read(uint32_t node, uint32_t id, bool constant_ok) const {
    PTERON_CHECK(id < out_.values.size(), Error::InvalidProgram,
                 "XNNPACK payload node %u reads value %u of %zu", node, id, out_.values.size());
    const Value& v = out_.values[id];
    PTERON_CHECK(constant_ok || !v.is_constant, Error::InvalidProgram,
                 "XNNPACK payload node %u reads constant %u where an activation goes", node, id);
    PTERON_CHECK(v.is_constant || v.input_arg >= 0 || written_[id], Error::InvalidProgram,
                 "XNNPACK payload node %u reads value %u before any node writes it", node, id);
    return Error::Ok;
  }

  Error check_write(uint32_t node, uint32_t id) {
    PTERON_CHECK(id < out_.values.size(), Error::InvalidProgram,
                 "XNNPACK payload node %u writes value %u of %zu", node, id, out_.values.size());
    const Value& v = out_.values[id];
    PTERON_CHECK(!v.is_constant && v.input_arg < 0 && !written_[id], Error::InvalidProgram,
                 "XNNPACK payload node %u writes value %u, which is a constant, an input or "
                 "written before",
                 node, id);
    written_[id] = true;
    return Error::Ok;
  }

  Error read_node(uint32_t index) {
    const fb::XNode* x = g_.xnodes()->Get(index);
    PTERON_CHECK(x != nullptr && x->xnode_union() != nullptr, Error::InvalidProgram,
                 "XNNPACK payload node %u is empty", index);
    const fb::XNodeUnion type = x->xnode_union_type();
    const char* name = fb::EnumNameXNodeUnion(type);
    if (name == nullptr || name[0] == '\0') name = "of an unknown type";
    const UnionEntry* entry = nullptr;
    for (const UnionEntry& e : kRead) entry = e.type == type ? &e : entry;
    if (entry == nullptr) {
      return fail(Error::NotSupported,
                  debian_has(type)
                      ? "XNNPACK payload node %u is %s: pteron's reader of ExecuTorch's XNNPACK "
                        "payloads does not take it yet"
                      : "XNNPACK payload node %u is %s, which Debian's XNNPACK (2022) does not "
                        "have",
                  index, name);
    }
    Node n;
    n.kind = entry->kind;
    n.debug_handle = x->debug_handle();
    if (const fb::OutputMinMax* mm = x->output_min_max()) {
      PTERON_CHECK(!(mm->output_min() > mm->output_max()) && !std::isnan(mm->output_min()) &&
                       !std::isnan(mm->output_max()),
                   Error::InvalidProgram, "XNNPACK payload node %u has output range [%g, %g]",
                   index, mm->output_min(), mm->output_max());
      n.output_min = mm->output_min();
      n.output_max = mm->output_max();
    }
    PTERON_CHECK(n.kind != NodeKind::Clamp || x->output_min_max() != nullptr, Error::InvalidProgram,
                 "XNNPACK payload node %u (XNNClamp) has no output range", index);
    switch (n.kind) {
      case NodeKind::FullyConnected: {
        const fb::XNNFullyConnected& a = *x->xnode_union_as_XNNFullyConnected();
        n.inputs[0] = a.input1_id();
        n.filter = a.filter_id();
        n.bias = a.bias_id();
        n.output = a.output_id();
        n.flags = a.flags();
        PTERON_CHECK((n.flags & ~kTransposeWeights) == 0, Error::InvalidProgram,
                     "XNNPACK payload node %u (XNNFullyConnected) has flags 0x%x", index, n.flags);
        PTERON_TRY(check_read(index, n.filter, true));
        const Value& w = out_.values[n.filter];
        PTERON_CHECK(w.is_constant && w.rank == 2, Error::InvalidProgram,
                     "XNNPACK payload node %u (XNNFullyConnected): the filter is no 2-D constant",
                     index);
        if (n.bias != kNoValue) {
          PTERON_TRY(check_read(index, n.bias, true));
          const Value& b = out_.values[n.bias];
          const uint32_t out_channels = n.flags & kTransposeWeights ? w.dims[1] : w.dims[0];
          PTERON_CHECK(b.is_constant && b.rank == 1 && b.dims[0] == out_channels,
                       Error::InvalidProgram,
                       "XNNPACK payload node %u (XNNFullyConnected): the bias is no constant of "
                       "%u channels",
                       index, out_channels);
        }
        break;
      }
      case NodeKind::Add:
      case NodeKind::Subtract:
      case NodeKind::Multiply:
      case NodeKind::Divide:
      case NodeKind::Minimum:
      case NodeKind::Maximum: {
        const fb::_XNNNode2x1* a = static_cast<const fb::_XNNNode2x1*>(x->xnode_union());
        n.inputs[0] = a->input1_id();
        n.inputs[1] = a->input2_id();
        n.output = a->output_id();
        n.flags = a->flags();
        PTERON_TRY(check_read(index, n.inputs[1], true));
        break;
      }
      case NodeKind::LeakyRelu: {
        const fb::XNNLeakyReLU& a = *x->xnode_union_as_XNNLeakyReLU();
        n.inputs[0] = a.input_id();
        n.output = a.output_id();
        n.flags = a.flags();
        n.param = a.negative_slope();
        break;
      }
      case NodeKind::Elu: {
        const fb::XNNELU& a = *x->xnode_union_as_XNNELU();
        n.inputs[0] = a.input_id();
        n.output = a.output_id();
        n.flags = a.flags();
        n.param = a.alpha();
        break;
      }
      case NodeKind::Reshape: {
        const fb::XNNStaticReshape& a = *x->xnode_union_as_XNNStaticReshape();
        n.inputs[0] = a.input_id();
        n.output = a.output_id();
        n.flags = a.flags();
        const auto* shape = a.new_shape();
        n.new_rank = shape != nullptr ? shape->size() : 0;
        PTERON_CHECK(n.new_rank == a.num_dims() && n.new_rank <= kMaxDims, Error::InvalidProgram,
                     "XNNPACK payload node %u (XNNStaticReshape) has %u dims (num_dims %u)", index,
                     n.new_rank, a.num_dims());
        int inferred = 0;
        for (uint32_t d = 0; d < n.new_rank; ++d) {
          n.new_shape[d] = shape->Get(d);
          inferred += n.new_shape[d] == 0;
        }
        PTERON_CHECK(inferred <= 1, Error::InvalidProgram,
                     "XNNPACK payload node %u (XNNStaticReshape) leaves %d dims to infer", index,
                     inferred);
        break;
      }
      default: {  // one input, one output
        const fb::_XNNNode1x1* a = static_cast<const fb::_XNNNode1x1*>(x->xnode_union());
        n.inputs[0] = a->input_id();
        n.output = a->output_id();
        n.flags = a->flags();
        break;
      }
    }
    PTERON_CHECK(n.kind == NodeKind::FullyConnected || n.flags == 0, Error::InvalidProgram,
                 "XNNPACK payload node %u (%s) has flags 0x%x", index, name, n.flags);
    PTERON_TRY(check_read(index, n.inputs[0], false));
    PTERON_TRY(check_write(index, n.output));
    out_.nodes.push_back(n);
    return Error::Ok;
  }

  const fb::XNNGraph& g_;
  Span<const uint8_t> constants_;
  Graph& out_;
  std::vector<bool> seen_, written_;
  std::vector<uint32_t> flags_, external_id_;
};

}  // namespace

bool is_executorch_payload(Span<const uint8_t> payload) {
  if (payload.size() < 8 || payload.data() == nullptr) return false;
  return std::memcmp(payload.data() + 4, "XH00", 4) == 0 || has_identifier(payload.data());
}

Error read_payload(Span<const uint8_t> payload, Graph& graph) {
  PTERON_CHECK(is_executorch_payload(payload), Error::InvalidProgram,
               "delegate payload is not an ExecuTorch XNNPACK payload (no XH00 header or "
               "XN00/XN01 flatbuffer)");
  const uint8_t* data = payload.data();
  Span<const uint8_t> flatbuffer = payload;
  Span<const uint8_t> constants;
  if (std::memcmp(data + 4, "XH00", 4) == 0) {
    PTERON_CHECK(payload.size() >= kHeaderSize, Error::InvalidProgram,
                 "XNNPACK payload is %zu bytes: its header is truncated", payload.size());
    const uint32_t header = uint32_t{data[8]} | uint32_t{data[9]} << 8;
    const uint64_t fb_offset = read_u32(data + 10), fb_size = read_u32(data + 14);
    const uint64_t c_offset = read_u32(data + 18);
    const uint64_t c_size = uint64_t{read_u32(data + 22)} | uint64_t{read_u32(data + 26)} << 32;
    const uint64_t size = payload.size();
    PTERON_CHECK(header >= kHeaderSize && fb_offset >= header && fb_size >= 8 && fb_size <= size &&
                     fb_offset <= size - fb_size && c_offset <= size && c_size <= size - c_offset,
                 Error::InvalidProgram,
                 "XNNPACK payload header is corrupt (flatbuffer %llu+%llu, constants %llu+%llu in "
                 "%llu bytes)",
                 static_cast<unsigned long long>(fb_offset),
                 static_cast<unsigned long long>(fb_size),
                 static_cast<unsigned long long>(c_offset), static_cast<unsigned long long>(c_size),
                 static_cast<unsigned long long>(size));
    flatbuffer = Span<const uint8_t>(data + fb_offset, fb_size);
    constants = Span<const uint8_t>(data + c_offset, c_size);
    PTERON_CHECK(has_identifier(flatbuffer.data()), Error::InvalidProgram,
                 "XNNPACK payload flatbuffer has no XN00/XN01 identifier");
  }
  // Flatbuffer offsets are 4-byte aligned relative to the buffer's start.
  PTERON_CHECK(reinterpret_cast<uintptr_t>(flatbuffer.data()) % 4 == 0, Error::InvalidProgram,
               "XNNPACK payload flatbuffer is not 4-byte aligned");
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(flatbuffer.data(), flatbuffer.size(), options);
  PTERON_CHECK(verifier.VerifyBuffer<fb::XNNGraph>(nullptr), Error::InvalidProgram,
               "XNNPACK payload flatbuffer verification failed: corrupt or truncated");
  graph = Graph();
  Reader reader(*flatbuffers::GetRoot<fb::XNNGraph>(flatbuffer.data()), constants, graph);
  return reader.run();
}

const char* node_name(NodeKind kind) {
  for (const UnionEntry& e : kRead) {
    if (e.kind == kind) return fb::EnumNameXNodeUnion(e.type);
  }
  return "?";
}

}  // namespace et
}  // namespace xnnpack
}  // namespace pteron
