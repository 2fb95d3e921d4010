// Names and sizes of the payload's dtypes and operators (payload_format.h), for messages.
#include "backends/xnnpack/runtime/payload_format.h"

namespace pteron {
namespace xnnpack {

const char* dtype_name(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
      return "fp32";
    case fb::DataType::Float16:
      return "fp16";
    case fb::DataType::QInt8:
      return "qint8";
    case fb::DataType::QUInt8:
      return "quint8";
    case fb::DataType::QInt32:
      return "qint32";
    case fb::DataType::QCInt8:
      return "qcint8";
    case fb::DataType::QCInt32:
      return "qcint32";
    default:
      return "invalid";
  }
}

size_t dtype_size(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
    case fb::DataType::QInt32:
    case fb::DataType::QCInt32:
      return 4;
    case fb::DataType::Float16:
      return 2;
    case fb::DataType::QInt8:
    case fb::DataType::QUInt8:
    case fb::DataType::QCInt8:
      return 1;
    default:
      return 0;
  }
}

namespace {

const char* binary_name(fb::BinaryOp op) {
  switch (op) {
    case fb::BinaryOp::Add:
      return "add";
    case fb::BinaryOp::Subtract:
      return "subtract";
    case fb::BinaryOp::Multiply:
      return "multiply";
    case fb::BinaryOp::Divide:
      return "divide";
    case fb::BinaryOp::Maximum:
      return "maximum";
    case fb::BinaryOp::Minimum:
      return "minimum";
    case fb::BinaryOp::SquaredDifference:
      return "squared_difference";
  }
  return "binary?";
}

const char* unary_name(fb::UnaryOp op) {
  switch (op) {
    case fb::UnaryOp::Abs:
      return "abs";
    case fb::UnaryOp::BankersRounding:
      return "bankers_rounding";
    case fb::UnaryOp::Ceiling:
      return "ceiling";
    case fb::UnaryOp::Floor:
      return "floor";
    case fb::UnaryOp::Negate:
      return "negate";
    case fb::UnaryOp::Square:
      return "square";
    case fb::UnaryOp::SquareRoot:
      return "square_root";
    case fb::UnaryOp::Hardswish:
      return "hardswish";
    case fb::UnaryOp::Sigmoid:
      return "sigmoid";
    case fb::UnaryOp::Softmax:
      return "softmax";
    case fb::UnaryOp::Convert:
      return "convert";
  }
  return "unary?";
}

}  // namespace

const char* op_name(const fb::Node& node) {
  switch (node.op_type()) {
    case fb::Op::Conv2d:
      return "conv2d";
    case fb::Op::DepthwiseConv2d:
      return "depthwise_conv2d";
    case fb::Op::Deconv2d:
      return "deconv2d";
    case fb::Op::FullyConnected:
      return "fully_connected";
    case fb::Op::Binary:
      return binary_name(node.op_as_Binary()->op());
    case fb::Op::Unary:
      return unary_name(node.op_as_Unary()->op());
    case fb::Op::Clamp:
      return "clamp";
    case fb::Op::Elu:
      return "elu";
    case fb::Op::LeakyRelu:
      return "leaky_relu";
    case fb::Op::PRelu:
      return "prelu";
    case fb::Op::MaxPool2d:
      return "max_pool2d";
    case fb::Op::AvgPool2d:
      return "avg_pool2d";
    case fb::Op::GlobalAvgPool2d:
      return "global_avg_pool2d";
    case fb::Op::ConstantPad:
      return "constant_pad";
    case fb::Op::StaticReshape:
      return "static_reshape";
    case fb::Op::ResizeBilinear2d:
      return "resize_bilinear2d";
    case fb::Op::DepthToSpace:
      return "depth_to_space";
    default:
      return "?";
  }
}

}  // namespace xnnpack
}  // namespace pteron
