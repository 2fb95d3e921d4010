// ExecuTorch's own XNNPACK delegate payloads (backend id "XnnpackBackend", flatbuffer "XN00" /
// "XN01", schema/executorch_xnnpack.fbs), read and checked whole before XNNPACK sees any of it,
// into a graph pteron builds Debian's XNNPACK subgraphs from (et_backend.cpp).
//
// Read: fp32 values (constants inline, in the payload's constant data or in the program's named
// data), and the node types Debian's XNNPACK (Feb 2022) has and LLM and MLP programs use: fully
// connected (export_llama -X's fp32 linears), add / subtract / multiply / divide / minimum /
// maximum, clamp, softmax, sigmoid, abs / negate / floor / ceiling / square / square root,
// hardswish, leaky ReLU, ELU, static reshape. Refused in one line naming what: quantized values
// (8da4w's qdint8 activations and qbint4 / qcint4 weights: Debian's build has no such datatypes
// or dynamically quantized fully connected), node types this XNNPACK lacks (transpose, slice,
// concatenate, batch matmul, SDPA, rsqrt, exp, log, tanh, GELU, sin, cos, copy), and those it
// has that pteron does not read yet (convolutions, pools, pad, resize, PReLU).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron {
namespace xnnpack {
namespace et {

constexpr uint32_t kMaxDims = 6;
constexpr uint32_t kNoValue = 0xFFFFFFFFu;

enum class NodeKind : uint8_t {
  FullyConnected,
  Add,
  Subtract,
  Multiply,
  Divide,
  Minimum,
  Maximum,
  Clamp,
  Softmax,
  Sigmoid,
  Abs,
  Negate,
  Floor,
  Ceiling,
  Square,
  SquareRoot,
  Hardswish,
  LeakyRelu,
  Elu,
  Reshape,
};

struct Value {
  uint32_t rank = 0;
  uint32_t dims[kMaxDims] = {};  // as written; activations take their sizes from the inputs
  // Constants: bytes inline or in the payload (data set), or the program's named data entry
  // `named_key` (the backend resolves it).
  bool is_constant = false;
  const uint8_t* data = nullptr;
  std::string named_key;
  uint64_t nbytes = 0;      // fp32: 4 * the product of dims
  int32_t input_arg = -1;   // DelegateCall argument of an external input
  int32_t output_arg = -1;  // ... of an external output
};

struct Node {
  NodeKind kind;
  uint32_t inputs[2] = {kNoValue, kNoValue};    // ids into Graph::values
  uint32_t filter = kNoValue, bias = kNoValue;  // fully connected
  uint32_t output = kNoValue;
  uint32_t flags = 0;
  float output_min = -INFINITY, output_max = INFINITY;
  float param = 0.0f;  // leaky ReLU's slope, ELU's alpha
  uint32_t new_rank = 0;
  uint32_t new_shape[kMaxDims] = {};  // reshape; 0 marks the one dim taken from the input
  uint32_t debug_handle = 0;
};

struct Graph {
  std::vector<Value> values;  // by the payload's value id
  std::vector<Node> nodes;    // in execution order
  // The value of each DelegateCall argument: its external id is its index, inputs first (as
  // ExecuTorch's XNNExecutor binds args[external_id]).
  std::vector<uint32_t> args;
  size_t num_inputs = 0;
};

// True when `payload` is one of ExecuTorch's XNNPACK payloads (its header or flatbuffer
// identifier), so a caller can tell them from other bytes.
bool is_executorch_payload(Span<const uint8_t> payload);

// Reads and checks `payload` (which must outlive `graph`: constants point into it). One line
// naming the value, node or field at fault otherwise.
Error read_payload(Span<const uint8_t> payload, Graph& graph);

// Name of a node kind as ExecuTorch's schema spells it ("XNNFullyConnected", ...).
const char* node_name(NodeKind kind);

}  // namespace et
}  // namespace xnnpack
}  // namespace pteron
