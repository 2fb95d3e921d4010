// The backend around the graph: registration, thread settings, argument checks naming the
// argument, layouts, rebinding, the XNN_EXTRA_BYTES guarantee at page ends, the builder's
// "would XNNPACK accept this node?" answers, a program running a DelegateCall end to end, and
// a timing print of a large fully connected layer.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "runtime/host/host_method.h"
#include "runtime/threads/threadpool.h"
#include "schema/program_generated.h"
#include "tests/backends/xnnpack/xnnpack_test_util.h"

namespace pteron::xnnpack::testing {
namespace {

constexpr DType kF32 = DType::kFloat32;

// y = x + c for [2, 3] floats, c constant; args: x, y.
std::vector<uint8_t> add_payload(std::vector<uint32_t> dims = {2, 3}) {
  size_t n = 1;
  for (uint32_t d : dims) n *= d;
  std::vector<float> c(n);
  for (size_t i = 0; i < n; ++i) c[i] = 0.5f * static_cast<float>(i);
  PayloadBuilder b;
  const TensorId x = b.add_tensor(kF32, dims);
  const TensorId ci = b.add_constant(kF32, dims, std::span<const float>(c));
  const TensorId y = b.add_tensor(kF32, dims);
  b.mark_external(x, ExternalKind::kInput, 0);
  b.mark_external(y, ExternalKind::kOutput, 1);
  b.add_node(Binary{BinaryOp::kAdd}, {x, ci}, {y});
  return b.build();
}

std::vector<CompileSpecView> threads_spec(const std::vector<uint8_t>& value) {
  return {{"threads", Span<const uint8_t>(value.data(), value.size())}};
}

TEST(XnnpackBackend, RegisteredAndAvailable) {
  EXPECT_EQ(find_backend("PteronXnnpackBackend"), &backend());
  EXPECT_TRUE(backend().is_available());
}

TEST(XnnpackBackend, ThreadCountFromSpecSetterAndDefault) {
  const unsigned hc = std::thread::hardware_concurrency();
  const int expected_default = hc == 0 ? 1 : std::min<int>(static_cast<int>(hc), 4);
  const auto payload = add_payload();
  {
    Delegate d;
    ASSERT_EQ(d.init(payload), Error::Ok) << last_error_message();
    EXPECT_EQ(delegate_num_threads(d.handle()), expected_default);
    EXPECT_EQ(default_num_threads(), expected_default);
  }
  {
    const std::vector<uint8_t> two = {'2'};
    Delegate d;
    ASSERT_EQ(d.init(payload, threads_spec(two)), Error::Ok) << last_error_message();
    EXPECT_EQ(delegate_num_threads(d.handle()), 2);
  }
  {
    const std::vector<uint8_t> three_le32 = {3, 0, 0, 0};
    Delegate d;
    ASSERT_EQ(d.init(payload, threads_spec(three_le32)), Error::Ok) << last_error_message();
    EXPECT_EQ(delegate_num_threads(d.handle()), 3);
  }
  {
    // The process-wide setting wins over the compile spec.
    set_num_threads(1);
    const std::vector<uint8_t> two = {'2'};
    Delegate d;
    const Error err = d.init(payload, threads_spec(two));
    set_num_threads(0);
    ASSERT_EQ(err, Error::Ok) << last_error_message();
    EXPECT_EQ(delegate_num_threads(d.handle()), 1);
  }
  {
    // One setting for the whole process: runtime/threads' setter drives the delegate too.
    pteron::set_num_threads(3);
    EXPECT_EQ(default_num_threads(), 3);
    Delegate d;
    const Error err = d.init(payload, threads_spec({'2'}));
    pteron::set_num_threads(0);
    ASSERT_EQ(err, Error::Ok) << last_error_message();
    EXPECT_EQ(delegate_num_threads(d.handle()), 3);
  }
  for (const std::vector<uint8_t>& bad :
       {std::vector<uint8_t>{'0'}, std::vector<uint8_t>{'9', '9', '9'},
        std::vector<uint8_t>{'x', 'y'}, std::vector<uint8_t>{}}) {
    Delegate d;
    EXPECT_EQ(d.init(payload, threads_spec(bad)), Error::InvalidArgument);
    EXPECT_NE(std::string(last_error_message()).find("\"threads\""), std::string::npos)
        << last_error_message();
  }
}

TEST(XnnpackBackend, ArgumentMismatchesNameTheArgument) {
  Delegate d;
  ASSERT_EQ(d.init(add_payload()), Error::Ok) << last_error_message();
  TestTensor x(ScalarType::Float, {2, 3}), y(ScalarType::Float, {2, 3});
  auto expect_error = [&](std::vector<EValue*> args, const std::string& needle) {
    clear_error_message();
    EXPECT_EQ(d.execute(args), Error::InvalidArgument);
    EXPECT_NE(std::string(last_error_message()).find(needle), std::string::npos)
        << last_error_message();
  };
  expect_error({x.value()}, "expects 2 arguments, got 1");
  EValue number = EValue::from_int(3);
  expect_error({&number, y.value()}, "arg 0 (input) is not a tensor");
  TestTensor half(ScalarType::Half, {2, 3});
  expect_error({half.value(), y.value()}, "arg 0 (input): expected fp32, got");
  TestTensor wrong(ScalarType::Float, {3, 2});
  expect_error({x.value(), wrong.value()}, "arg 1 (output): expected sizes [2,3], got [3,2]");
  TestTensor rank(ScalarType::Float, {6});
  expect_error({rank.value(), y.value()}, "arg 0 (input): expected sizes [2,3], got [6]");
  // The delegate still works after refusals.
  x.fill(std::vector<float>{1, 2, 3, 4, 5, 6});
  ASSERT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
  EXPECT_EQ(y.read<float>(), (std::vector<float>{1, 2.5f, 4, 5.5f, 7, 8.5f}));
}

// y = relu(x) for an NHWC [1, h, w, c] graph bound to channels-last NCHW tensors.
std::vector<uint8_t> channels_last_relu(int h, int w, int c) {
  PayloadBuilder b;
  const std::vector<uint32_t> nhwc = {1, uint32_t(h), uint32_t(w), uint32_t(c)};
  const TensorId x = b.add_tensor(kF32, nhwc);
  const TensorId y = b.add_tensor(kF32, nhwc);
  b.mark_external(x, ExternalKind::kInput, 0, {0, 2, 3, 1});
  b.mark_external(y, ExternalKind::kOutput, 1, {0, 2, 3, 1});
  b.add_node(Clamp{0.0f, INFINITY}, {x}, {y});
  return b.build();
}

TEST(XnnpackBackend, ChannelsLastBindingAndLayoutRefusal) {
  Delegate d;
  ASSERT_EQ(d.init(channels_last_relu(4, 5, 3)), Error::Ok) << last_error_message();
  const auto data = random_floats(60, 1);
  TestTensor x(ScalarType::Float, {1, 3, 4, 5}, {0, 2, 3, 1});
  TestTensor y(ScalarType::Float, {1, 3, 4, 5}, {0, 2, 3, 1});
  x.fill(data);
  ASSERT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
  const auto got = y.read<float>();
  for (size_t i = 0; i < data.size(); ++i) EXPECT_EQ(got[i], std::max(0.0f, data[i])) << i;

  // Contiguous NCHW is a different memory layout: refused, naming the dim order wanted.
  TestTensor nchw(ScalarType::Float, {1, 3, 4, 5});
  clear_error_message();
  EXPECT_EQ(d.execute({nchw.value(), y.value()}), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message())
                .find("arg 0 (input): memory layout must be dim "
                      "order (0,2,3,1)"),
            std::string::npos)
      << last_error_message();
}

TEST(XnnpackBackend, SingleChannelContiguousMatchesChannelsLast) {
  // With one channel NCHW and NHWC memory coincide, so a contiguous tensor binds as is.
  Delegate d;
  ASSERT_EQ(d.init(channels_last_relu(3, 3, 1)), Error::Ok) << last_error_message();
  TestTensor x(ScalarType::Float, {1, 1, 3, 3}), y(ScalarType::Float, {1, 1, 3, 3});
  const auto data = random_floats(9, 2);
  x.fill(data);
  ASSERT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
  EXPECT_EQ(y.read<float>()[4], std::max(0.0f, data[4]));
}

TEST(XnnpackBackend, RebindsMovedBuffersAndRereadsData) {
  Delegate d;
  ASSERT_EQ(d.init(add_payload()), Error::Ok) << last_error_message();
  TestTensor x1(ScalarType::Float, {2, 3}), x2(ScalarType::Float, {2, 3});
  TestTensor y1(ScalarType::Float, {2, 3}), y2(ScalarType::Float, {2, 3});
  x1.fill(std::vector<float>(6, 1.0f));
  x2.fill(std::vector<float>(6, 10.0f));
  ASSERT_EQ(d.execute({x1.value(), y1.value()}), Error::Ok);
  ASSERT_EQ(d.execute({x2.value(), y2.value()}), Error::Ok);
  EXPECT_EQ(y1.read<float>()[5], 3.5f);
  EXPECT_EQ(y2.read<float>()[5], 12.5f);
  x2.fill(std::vector<float>(6, -1.0f));  // same buffers, new contents
  ASSERT_EQ(d.execute({x2.value(), y2.value()}), Error::Ok);
  EXPECT_EQ(y2.read<float>()[5], 1.5f);
}

// Two pages, the second inaccessible: a buffer ending at the first page's end has no readable
// byte after it, as at the end of a caller's allocation.
class GuardedPage {
 public:
  GuardedPage() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    base_ = static_cast<uint8_t*>(
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ != MAP_FAILED) mprotect(base_ + page_, page_, PROT_NONE);
  }
  ~GuardedPage() {
    if (base_ != MAP_FAILED) munmap(base_, 2 * page_);
  }
  bool ok() const { return base_ != MAP_FAILED; }
  void* ending_at_guard(size_t nbytes) const { return base_ + page_ - nbytes; }
  void* middle(size_t nbytes) const { return base_ + page_ / 2 - nbytes; }

 private:
  size_t page_ = 0;
  uint8_t* base_ = nullptr;
};

TEST(XnnpackBackend, BuffersEndingAtAPageAreStagedForOverRead) {
  // 5 floats: XNNPACK's vector loads read past the 20th byte. Without staging this would fault.
  GuardedPage in_page, out_page;
  ASSERT_TRUE(in_page.ok() && out_page.ok());
  Delegate d;
  ASSERT_EQ(d.init(add_payload({5})), Error::Ok) << last_error_message();
  TestTensor x(ScalarType::Float, {5}), y(ScalarType::Float, {5});
  const std::vector<float> data = {1, 2, 3, 4, 5};

  x.set_data(in_page.middle(20));
  y.set_data(out_page.middle(20));
  x.fill(data);
  ASSERT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
  EXPECT_EQ(delegate_staged_copies(d.handle()), 0u);
  EXPECT_EQ(y.read<float>(), (std::vector<float>{1, 2.5f, 4, 5.5f, 7}));

  x.set_data(in_page.ending_at_guard(20));
  y.set_data(out_page.ending_at_guard(20));
  x.fill(data);
  ASSERT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
  EXPECT_EQ(delegate_staged_copies(d.handle()), 2u);
  EXPECT_EQ(y.read<float>(), (std::vector<float>{1, 2.5f, 4, 5.5f, 7}));
}

TEST(XnnpackBackend, BuilderExplainsRefusals) {
  PayloadBuilder b;
  const TensorId xf = b.add_tensor(kF32, {1, 4, 4, 8});
  const TensorId yf = b.add_tensor(kF32, {1, 4, 4, 8});
  const TensorId xq = b.add_tensor(DType::kQInt8, {1, 4, 4, 8}, Quant::per_tensor(0.1f, 0));
  const TensorId yq = b.add_tensor(DType::kQInt8, {1, 4, 4, 8}, Quant::per_tensor(0.1f, 0));
  const std::vector<float> wf(8 * 8, 0.1f);
  const std::vector<int8_t> wq(8 * 8, 3);
  const std::vector<int8_t> wq3(8 * 9 * 8, 1);
  const TensorId fc_w = b.add_constant(DType::kQCInt8, {8, 8}, std::span<const int8_t>(wq),
                                       Quant::per_channel(std::vector<float>(8, 0.01f)));
  const TensorId conv_w = b.add_constant(kF32, {8, 1, 1, 8}, std::span<const float>(wf));
  const TensorId conv_wq = b.add_constant(DType::kQInt8, {8, 3, 3, 8}, std::span<const int8_t>(wq3),
                                          Quant::per_tensor(0.01f, 0));
  const TensorId conv_wq_zp = b.add_constant(
      DType::kQInt8, {8, 3, 3, 8}, std::span<const int8_t>(wq3), Quant::per_tensor(0.01f, 5));
  const TensorId yq_tiny = b.add_tensor(DType::kQInt8, {1, 4, 4, 8}, Quant::per_tensor(1e-6f, 0));
  const TensorId ysig =
      b.add_tensor(DType::kQInt8, {1, 4, 4, 8}, Quant::per_tensor(1.0f / 256.0f, -128));
  const TensorId y_wrong = b.add_tensor(kF32, {1, 4, 4, 7});
  const Conv2d conv1x1{.group_input_channels = 8, .group_output_channels = 8};
  const Conv2d conv3x3{.kernel_height = 3,
                       .kernel_width = 3,
                       .group_input_channels = 8,
                       .group_output_channels = 8,
                       .padding = Padding::uniform(1)};
  auto reason = [&](const NodeAttrs& a, std::vector<TensorId> in, std::vector<TensorId> out) {
    return b.check_node(a, in, out);
  };
  auto has = [](const std::string& s, const char* needle) {
    return s.find(needle) != std::string::npos;
  };

  EXPECT_EQ(reason(conv1x1, {xf, conv_w}, {yf}), "");
  EXPECT_EQ(reason(Unary{UnaryOp::kSoftmax}, {xf}, {yf}), "");
  EXPECT_TRUE(has(reason(Unary{UnaryOp::kSoftmax}, {xq}, {yq}), "fp32 only"));
  EXPECT_TRUE(has(reason(Unary{UnaryOp::kHardswish}, {xq}, {yq}), "fp32 only"));
  EXPECT_TRUE(
      has(reason(AvgPool2d{.pooling_height = 2, .pooling_width = 2}, {xq}, {yq}), "fp32 only"));
  EXPECT_TRUE(has(reason(MaxPool2d{}, {xf}, {yf}), "1x1 pool"));
  EXPECT_TRUE(has(reason(FullyConnected{}, {xq, fc_w}, {yq}), "lower it as a 1x1 conv2d"));
  EXPECT_TRUE(has(reason(conv1x1, {xf, yf}, {yf}), "constant or an external input"));
  EXPECT_TRUE(has(reason(conv1x1, {xf, xf}, {yf}), "filter (tensor 0) must be a constant"));
  EXPECT_TRUE(has(reason(conv1x1, {xf, conv_w}, {y_wrong}), "must have dims [1, 4, 4, 8]"));
  EXPECT_EQ(reason(conv3x3, {xq, conv_wq}, {yq}), "");
  EXPECT_TRUE(has(reason(conv3x3, {xq, conv_wq_zp}, {yq}), "zero point must be 0"));
  // Rejected by XNNPACK itself when creating the operator: scale ratio 1e3 is out of range.
  EXPECT_TRUE(has(reason(conv3x3, {xq, conv_wq}, {yq_tiny}), "could not create a runtime"));
  // qint8 sigmoid exists only with XNNPACK's fixed output quantisation (1/256, -128).
  EXPECT_EQ(reason(Unary{UnaryOp::kSigmoid}, {xq}, {ysig}), "");
  EXPECT_TRUE(has(reason(Unary{UnaryOp::kSigmoid}, {xq}, {yq}), "could not create a runtime"));

  // Other qint8 nodes this snapshot has (README table).
  const TensorId xq2 = b.add_tensor(DType::kQInt8, {1, 6, 6, 8}, Quant::per_tensor(0.1f, 0));
  const TensorId yq2 = b.add_tensor(DType::kQInt8, {1, 8, 8, 8}, Quant::per_tensor(0.1f, 0));
  const TensorId yq_flat = b.add_tensor(DType::kQInt8, {16, 8}, Quant::per_tensor(0.1f, 0));
  const TensorId bias_q =
      b.add_constant(DType::kQInt32, {8}, std::span<const int32_t>(std::vector<int32_t>(8, 7)),
                     Quant::per_tensor(0.001f));
  EXPECT_EQ(reason(Elu{}, {xq}, {yq}), "");
  EXPECT_EQ(reason(ConstantPad{.pre = {0, 1, 1, 0}, .post = {0, 1, 1, 0}}, {xq}, {xq2}), "");
  EXPECT_EQ(reason(StaticReshape{.new_shape = {16, 8}}, {xq}, {yq_flat}), "");
  EXPECT_EQ(reason(ResizeBilinear2d{.new_height = 8, .new_width = 8}, {xq}, {yq2}), "");
  EXPECT_EQ(reason(Deconv2d{.kernel_height = 3,
                            .kernel_width = 3,
                            .group_input_channels = 8,
                            .group_output_channels = 8,
                            .padding = Padding::uniform(1)},
                   {xq, conv_wq, bias_q}, {yq}),
            "");
  EXPECT_TRUE(has(reason(LeakyRelu{}, {xq}, {yq}), "fp32 only"));
  EXPECT_TRUE(has(reason(Binary{BinaryOp::kDivide}, {xq, xq}, {yq}), "fp32 only"));

  EXPECT_EQ(node_kind_name(Binary{BinaryOp::kSquaredDifference}), "squared_difference");
  EXPECT_EQ(node_kind_name(conv3x3), "conv2d");
  // An empty builder is not a payload.
  EXPECT_TRUE(has(PayloadBuilder().validate(), "no tensors"));
}

// A program whose only instruction is a DelegateCall to the XNNPACK backend, with the payload
// inline: the executor's path from .pte to backend init/execute.
std::vector<uint8_t> delegate_program(const std::vector<uint8_t>& payload) {
  namespace pf = ::pteron::fb;
  flatbuffers::FlatBufferBuilder b;
  auto tensor = [&](uint64_t offset) {
    const std::vector<int32_t> sizes = {1, 3, 4, 5};
    const std::vector<uint8_t> order = {0, 2, 3, 1};
    auto alloc = pf::CreateAllocationDetails(b, 1, static_cast<uint32_t>(offset), 0);
    auto t = pf::CreateTensor(b, pf::ScalarType::FLOAT, 0, b.CreateVector(sizes),
                              b.CreateVector(order), false, 0, alloc);
    return pf::CreateEValue(b, pf::KernelTypes::Tensor, t.Union());
  };
  std::vector<flatbuffers::Offset<pf::EValue>> values = {tensor(0), tensor(256)};
  const std::vector<int32_t> args = {0, 1};
  std::vector<flatbuffers::Offset<pf::Instruction>> instructions = {
      pf::CreateInstruction(b, pf::InstructionArguments::DelegateCall,
                            pf::CreateDelegateCall(b, 0, b.CreateVector(args)).Union())};
  const std::vector<int32_t> inputs = {0}, outputs = {1};
  auto chain = pf::CreateChain(b, b.CreateVector(inputs), b.CreateVector(outputs),
                               b.CreateVector(instructions));
  const std::vector<uint8_t> two = {'2'};
  std::vector<flatbuffers::Offset<pf::CompileSpec>> specs = {
      pf::CreateCompileSpec(b, b.CreateString("threads"), b.CreateVector(two))};
  std::vector<flatbuffers::Offset<pf::BackendDelegate>> delegates = {pf::CreateBackendDelegate(
      b, b.CreateString("PteronXnnpackBackend"),
      pf::CreateBackendDelegateDataReference(b, pf::DataLocation::INLINE, 0),
      b.CreateVector(specs))};
  std::vector<flatbuffers::Offset<pf::Chain>> chains = {chain};
  const std::vector<int64_t> buffer_sizes = {0, 512};
  auto plan = pf::CreateExecutionPlan(b, b.CreateString("forward"), 0, b.CreateVector(values),
                                      b.CreateVector(inputs), b.CreateVector(outputs),
                                      b.CreateVector(chains), 0, b.CreateVector(delegates),
                                      b.CreateVector(buffer_sizes));
  std::vector<flatbuffers::Offset<pf::ExecutionPlan>> plans = {plan};
  b.ForceVectorAlignment(payload.size(), 1, 16);
  auto data = b.CreateVector(payload);
  std::vector<flatbuffers::Offset<pf::BackendDelegateInlineData>> inline_data = {
      pf::CreateBackendDelegateInlineData(b, data)};
  auto program = pf::CreateProgram(b, 0, b.CreateVector(plans), 0, b.CreateVector(inline_data));
  pf::FinishProgramBuffer(b, program);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

TEST(XnnpackBackend, ProgramDelegateCallRunsEndToEnd) {
  const std::vector<uint8_t> bytes = delegate_program(channels_last_relu(4, 5, 3));
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  const auto data = random_floats(60, 3);
  int32_t sizes[] = {1, 3, 4, 5};
  uint8_t order[] = {0, 2, 3, 1};
  int32_t strides[4];
  std::vector<float> src = data;
  Tensor input(ScalarType::Float, 4, sizes, order, strides, src.data());
  ASSERT_EQ(m.set_input(0, input), Error::Ok) << last_error_message();
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  const float* out = m.output(0).tensor->data<const float>();
  for (size_t i = 0; i < data.size(); ++i) EXPECT_EQ(out[i], std::max(0.0f, data[i])) << i;
}

TEST(XnnpackBackend, FullyConnectedTimingPrint) {
  // Not an assertion on speed: prints fp32 [128 x 768] x [768 x 3072] on 2 threads.
  const int m = 128, k = 768, n = 3072;
  const auto w = random_floats(size_t(n) * k, 4);
  const auto bias = random_floats(n, 5);
  PayloadBuilder b;
  const TensorId x = b.add_tensor(kF32, {uint32_t(m), uint32_t(k)});
  const TensorId wi = b.add_constant(kF32, {uint32_t(n), uint32_t(k)}, std::span<const float>(w));
  const TensorId bi = b.add_constant(kF32, {uint32_t(n)}, std::span<const float>(bias));
  const TensorId y = b.add_tensor(kF32, {uint32_t(m), uint32_t(n)});
  b.mark_external(x, ExternalKind::kInput, 0);
  b.mark_external(y, ExternalKind::kOutput, 1);
  b.add_node(FullyConnected{}, {x, wi, bi}, {y});
  Delegate d;
  const std::vector<uint8_t> two = {'2'};
  ASSERT_EQ(d.init(b.build(), threads_spec(two)), Error::Ok) << last_error_message();
  TestTensor xt(ScalarType::Float, {m, k}), yt(ScalarType::Float, {m, n});
  xt.fill(random_floats(size_t(m) * k, 6));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(d.execute({xt.value(), yt.value()}), Error::Ok);
  double best = 1e9;
  for (int i = 0; i < 10; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(d.execute({xt.value(), yt.value()}), Error::Ok);
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const double gflop = 2.0 * m * k * n * 1e-9;
  std::printf("[xnnpack] fully connected fp32 %dx%dx%d, 2 threads: %.2f ms (%.1f GFLOP/s)\n", m, k,
              n, best, gflop / (best * 1e-3));
  // Spot-check one output against a scalar dot product.
  const auto xv = xt.read<float>();
  double ref = bias[7];
  for (int i = 0; i < k; ++i) ref += double{xv[size_t(5) * k + i]} * w[size_t(7) * k + i];
  EXPECT_NEAR(yt.read<float>()[size_t(5) * n + 7], ref, 1e-4 * std::max(1.0, std::fabs(ref)));
}

}  // namespace
}  // namespace pteron::xnnpack::testing
