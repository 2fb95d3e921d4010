// The per-machine cost model: how long the weighed ops of a set of nodes take on each engine
// (XNNPACK, the optimized kernels, the int8 kernel library), from a calibration that
// `pteron tune` measures once per machine (tools/cli/calibrate.h) and caches. Partitioners ask
// it whether a region runs faster in their delegate or on the kernel libraries
// (PartitionContext::calibration); without a calibration they keep their fixed rules.
//
// The model: each convolution and matrix product is one of four op classes, and an engine runs
// a class at a calibrated rate in nanoseconds per multiply-add, for fp32 and for int8
// separately. Other nodes (elementwise ops, pools, views) are not weighed: they cost about the
// same on either side, and the boundary rules weigh them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler::cost {

enum class OpClass {
  kConv3x3,    // 3x3, stride 1, no dilation, ungrouped: the optimized kernels' Winograd case
  kConv,       // any other ungrouped 2-D convolution (strided, 5x5, 7x7, patch embeddings)
  kPointwise,  // 1x1, stride 1, ungrouped
  // Depthwise (groups == input channels) in three classes by kernel taps, since the engines'
  // per-pixel costs and algorithms differ with the window, so one rate does not carry over:
  kDepthwise,  // up to 9 taps (3x3)
  // 10 to 25 taps (5x5, EfficientNet's): 2.8x the 3x3's multiply-adds took XNNPACK int8 2.8x
  // its time and the int8 kernels 1.3x (4 layers of 28x28x192, 2 threads).
  kDepthwise5x5,
  // More (ConvNeXt's 7x7, large-kernel nets): this XNNPACK's f32 depthwise microkernels stop at
  // 25 taps and it runs a 7x7 as a grouped GEMM, 17x slower than the optimized kernels' channel
  // blocks (56x56x64, 2 threads).
  kDepthwiseLarge,
  kLinear,  // linear, mm, addmm, bmm, matmul
  // Multiply-adds of a kind no calibration measures (transposed, grouped or non-2-D
  // convolutions, attention): a region holding one is not weighed, since the kernels it would
  // go to may not run it as fast as any measured class, or at all (the int8 library has none).
  kOther,
};
inline constexpr OpClass kOpClasses[] = {
    OpClass::kConv3x3,      OpClass::kConv,           OpClass::kPointwise, OpClass::kDepthwise,
    OpClass::kDepthwise5x5, OpClass::kDepthwiseLarge, OpClass::kLinear};
// "conv3x3", "conv", "pointwise", "depthwise", "depthwise_5x5", "depthwise_large", "linear",
// "other"
std::string_view op_class_name(OpClass c);

// A node with multiply-adds: its class and how many.
struct WeighedNode {
  OpClass op_class;
  double multiply_adds;
};
// nullopt for nodes without multiply-adds (elementwise ops, pools, views), which the model
// does not weigh.
std::optional<WeighedNode> weigh(const ir::Graph& graph, const ir::Node& node);

// "int8" when the node reads a dequantized value (the PT2E Q/DQ form an int8 backend fuses),
// else "f32".
std::string_view precision_of(const ir::Graph& graph, const ir::Node& node);

// How long an engine takes for one node of a class: a fixed cost per call (threads woken,
// buffers set up, the work too small to split) and a cost per multiply-add.
struct Rate {
  double ns_per_call = 0;
  double ns_per_mac = 0;
  double ns(double multiply_adds) const { return ns_per_call + ns_per_mac * multiply_adds; }
};

struct Calibration {
  // 2: the depthwise_5x5 and depthwise_large classes and boundary_ns_per_byte (a format-1 file
  // lacks them, so it is measured again).
  static constexpr int kFormat = 2;
  std::string machine;  // what it was measured on: CPU model, ISA, threads
  int threads = 1;
  std::string pteron;   // the pteron version whose kernels were measured ("" in older files)
  std::string created;  // UTC, ISO 8601
  // engine ("xnnpack", "optimized", "cortex-m") -> precision ("f32", "int8") -> op class name
  // -> rate.
  std::map<std::string, std::map<std::string, std::map<std::string, Rate>>> rates;
  // engine -> precision -> what a one-layer program costs beyond its layer (input and output
  // conversions, the delegate's call), in ns: a region on the delegate pays the delegate's minus
  // the kernels' (a small program's convolutions are a small part of its time). Absent in older
  // files: not weighed.
  std::map<std::string, std::map<std::string, double>> program_ns;
  // engine -> "f32" -> what each byte of a 4-D activation crossing a region's boundary costs a
  // program on that engine, in ns, fitted with program_ns over the calibration's layer sizes:
  // XNNPACK's regions take NHWC, so every 4-D value entering or leaving one is transposed
  // (DenseNet-style nets, whose concatenations split XNNPACK's program into seven regions,
  // spent 15% of their time in those copies). Absent in files without it: not weighed.
  std::map<std::string, std::map<std::string, double>> boundary_ns_per_byte;

  std::optional<Rate> rate(std::string_view engine, std::string_view precision,
                           OpClass op_class) const;
  std::optional<double> program(std::string_view engine, std::string_view precision) const;
  std::optional<double> boundary(std::string_view engine, std::string_view precision) const;
  std::string to_json() const;
  // Throws CompileError with one line saying what is wrong with the text.
  static Calibration from_json(const std::string& text);
};

// The estimated time of the weighed nodes among `nodes` on `engine`, in nanoseconds; nullopt
// when the calibration lacks a rate one of them needs (the engine was not measured, does not
// run that precision, or the node is kOther). 0 when no node is weighed.
std::optional<double> estimate_ns(const Calibration& calibration, const ir::Graph& graph,
                                  const std::vector<ir::NodeId>& nodes, std::string_view engine);

// The kernel library that would run the weighed nodes of `nodes` if no delegate took them,
// among `kernel_libraries` (most preferred first): "cortex-m" for int8 nodes when selected,
// "optimized" for fp32 ones when selected; "" when none the model knows (portable only).
std::string kernel_engine_for(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                              const std::vector<std::string>& kernel_libraries);

// A delegate's region against the kernels, as the cost model sees it.
struct RegionCost {
  // How much faster the kernels' estimate must be before a region leaves its delegate: the model
  // fits each class at two sizes, and a network's layers are of other shapes (mobilenet-v2 fp32
  // on the optimized kernels ran 1.9x its estimate, on XNNPACK 1.1x), so a small estimated gain
  // is within the model's error while a wrong move can cost 2-3x.
  static constexpr double kMargin = 1.25;
  std::string delegate, kernels;  // engine names
  double delegate_ns = 0, kernels_ns = 0;
  // Ops of the region the kernels would run outside their own form ("aten::sigmoid x16"; the
  // int8 library: float between a dequantize and a quantize, with layout changes around them),
  // and what that costs: each element of their inputs and outputs dequantized or quantized and
  // transposed, at kLeftNsPerElement (EfficientNet-B0 int8 on the 2-core Zen 4, 2 threads: its
  // 65 sigmoids and 16 broadcast multiplies left float took 11.0 ms of conversions, transposes
  // and float ops for 17.0 M elements of their inputs and outputs). Not calibrated per machine:
  // it only has to tell a softmax over 10 classes from an activation over every pixel.
  static constexpr double kLeftNsPerElement = 0.65;
  std::vector<std::string> kernels_leave;
  double kernels_leave_ns = 0;
  // Whether the kernels, with what they leave, are estimated faster by the margin: the region
  // goes back to them.
  bool kernels_faster() const { return (kernels_ns + kernels_leave_ns) * kMargin < delegate_ns; }
  std::string describe() const;  // "cost model: xnnpack 1.23 ms, cortex-m 0.45 ms (int8 ...)"
  std::string to_json() const;   // {"cost_model": {...}} for a region's report
};
// Bytes of the 4-D activations crossing the boundary of the region `nodes`: the non-constant
// values its nodes read from outside it and the values they produce that are read outside it
// or are graph outputs.
double boundary_bytes(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

// nullopt when the model cannot compare them: no calibration rate for either side, no kernel
// engine it knows, or nothing weighed in the region. The delegate's side carries its program
// cost and its boundary bytes' cost beyond the kernels' (Calibration::program_ns,
// boundary_ns_per_byte).
std::optional<RegionCost> compare_region(const Calibration& calibration, const ir::Graph& graph,
                                         const std::vector<ir::NodeId>& nodes,
                                         std::string_view delegate,
                                         const std::vector<std::string>& kernel_libraries);

}  // namespace pteron::compiler::cost
