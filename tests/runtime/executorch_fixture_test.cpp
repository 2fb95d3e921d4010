// Runs the programs ExecuTorch 1.5.1 wrote (tests/fixtures/executorch/*.pte, see FORMAT_NOTES.md
// there) on the inputs recorded next to them (<name>.npz: input_0.., output_0..) and compares
// with the outputs ExecuTorch's own runtime produced. Pure C++, no torch: this is how the
// portable kernels are checked on real models on every target the tests run on (the host, and
// aarch64 under qemu via `make check-aarch64`). Each program runs once on the portable kernels
// alone and, where the build links the optimized kernels, once preferring those.
//
// Tolerances as in tests/interop/test_pteron_runs_executorch.py: integer, bool and float16
// outputs, and the float outputs listed in kExact (data movement or one correctly rounded IEEE
// operation per element), must be bit-identical. Other float outputs must satisfy
// |got - want| <= 1e-5 * |want| + 1e-5 * max|want|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/host/host_method.h"
#include "tools/run/npz_io.h"

namespace pteron {
namespace {

using npz::Array;

const std::filesystem::path kFixtureDir = PTERON_EXECUTORCH_FIXTURES;
constexpr double kRtol = 1e-5;

// Fixture -> outputs that must match bit for bit although they are float32.
const std::map<std::string, std::set<size_t>> kExact = {
    {"add", {0}},  // x + y
    // x*2.5+1, x.to(int32), clamp, channels-last clone, full + i, x.to(float16), arange + x
    {"scalar_args", {2, 3, 4, 5, 6, 7, 8}},
};

// Every <name>.pte with a <name>.npz beside it, sorted.
std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir, ec)) {
    const std::filesystem::path& p = entry.path();
    if (p.extension() == ".pte" &&
        std::filesystem::exists(std::filesystem::path(p).replace_extension(".npz"))) {
      names.push_back(p.stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The tensor's elements in C (row-major) order, whatever its dim order.
std::vector<uint8_t> logical_bytes(const Tensor& t) {
  const size_t es = t.element_size();
  std::vector<uint8_t> out(t.nbytes());
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  const auto* base = static_cast<const uint8_t*>(t.const_data());
  for (int64_t linear = 0; linear < t.numel(); ++linear) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
    std::memcpy(out.data() + linear * es, base + offset * es, es);
    for (int32_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

template <typename T>
void expect_close(const std::string& where, const std::vector<uint8_t>& got_bytes,
                  const std::vector<uint8_t>& want_bytes) {
  const size_t n = want_bytes.size() / sizeof(T);
  std::vector<T> got(n), want(n);
  std::memcpy(got.data(), got_bytes.data(), n * sizeof(T));
  std::memcpy(want.data(), want_bytes.data(), n * sizeof(T));
  double scale = 0;
  for (T w : want) scale = std::max(scale, std::fabs(static_cast<double>(w)));
  if (scale == 0) scale = 1;
  size_t bad = 0, first_bad = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double g = got[i], w = want[i], err = std::fabs(g - w);
    const bool ok = err <= kRtol * std::fabs(w) + kRtol * scale || (std::isnan(g) && std::isnan(w));
    if (!ok && bad++ == 0) first_bad = i;
    if (!std::isnan(err)) worst = std::max(worst, err);
  }
  EXPECT_EQ(bad, 0u) << where << ": " << bad << " of " << n
                     << " elements out of tolerance, first at " << first_bad << " (got "
                     << got[first_bad] << ", ExecuTorch " << want[first_bad] << "); largest error "
                     << worst << ", output scale " << scale;
}

struct Case {
  std::string name;     // fixture
  std::string library;  // "portable": portable kernels only; else the runtime's preference
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name << " on " << c.library; }

// Kernel libraries this binary links besides "portable".
bool links_library(const char* library) {
  for (const KernelEntry& e : registered_kernels())
    if (std::strcmp(e.library, library) == 0) return true;
  return false;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string& name : fixture_names()) {
    out.push_back({name, "portable"});
    if (links_library("optimized")) out.push_back({name, "optimized"});
  }
  return out;
}

class ExecutorchFixture : public ::testing::TestWithParam<Case> {
 protected:
  void TearDown() override { set_kernel_libraries({}); }
};

TEST_P(ExecutorchFixture, OutputsMatchExecutorch) {
  const std::string name = GetParam().name;
  static const char* const kPortableOnly[] = {"portable"};
  if (GetParam().library == "portable") {
    ASSERT_TRUE(set_kernel_libraries(Span<const char* const>(kPortableOnly, 1)));
  } else {
    ASSERT_TRUE(set_kernel_libraries({}));  // optimized first, portable for the rest
  }
  std::string error;
  std::vector<Array> arrays = npz::read((kFixtureDir / (name + ".npz")).string(), &error);
  ASSERT_FALSE(arrays.empty()) << error;
  auto named = [&](const std::string& key) -> Array* {
    for (Array& a : arrays)
      if (a.name == key) return &a;
    return nullptr;
  };

  clear_error_message();
  auto program = HostProgram::open((kFixtureDir / (name + ".pte")).string().c_str());
  ASSERT_TRUE(program.ok()) << last_error_message();
  // The et_xnnpack_* fixtures are delegated to ExecuTorch's XnnpackBackend, which this binary
  // links wherever the build found XNNPACK (Debian's libxnnpack-dev for the target); a build
  // without it must refuse them naming the backend.
  auto host = HostMethod::load(**program, "forward");
  if (name.rfind("et_xnnpack", 0) == 0 && find_backend("XnnpackBackend") == nullptr) {
    ASSERT_FALSE(host.ok());
    EXPECT_NE(std::string(last_error_message()).find("XnnpackBackend"), std::string::npos)
        << last_error_message();
    return;
  }
  ASSERT_TRUE(host.ok()) << last_error_message();
  Method& method = (*host)->method();

  // Inputs are copied in by set_input, so the views below need only live until then.
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    Array* a = named("input_" + std::to_string(i));
    ASSERT_NE(a, nullptr) << name << ".npz has no input_" << i;
    std::vector<int32_t> strides(a->shape.size());
    std::vector<uint8_t> order(a->shape.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint8_t>(d);
    Tensor t(a->dtype, static_cast<int32_t>(a->shape.size()), a->shape.data(), order.data(),
             strides.data(), a->data.data());
    ASSERT_EQ(method.set_input(i, t), Error::Ok) << "input " << i << ": " << last_error_message();
  }
  ASSERT_EQ(named("input_" + std::to_string(method.num_inputs())), nullptr)
      << name << ".npz has more inputs than the method takes";

  ASSERT_EQ(method.execute(), Error::Ok) << last_error_message();

  size_t recorded = 0;
  while (named("output_" + std::to_string(recorded)) != nullptr) ++recorded;
  ASSERT_EQ(method.num_outputs(), recorded) << "outputs: pteron vs ExecuTorch";
  const auto exact = kExact.count(name) ? kExact.at(name) : std::set<size_t>{};
  for (size_t i = 0; i < recorded; ++i) {
    const std::string where = name + " output " + std::to_string(i);
    const Array& want = *named("output_" + std::to_string(i));
    const EValue& v = method.output(i);
    ASSERT_EQ(v.tag, Tag::Tensor) << where;
    const Tensor& got = *v.tensor;
    ASSERT_EQ(got.dtype(), want.dtype) << where << ": dtype " << scalar_type_name(got.dtype())
                                       << ", ExecuTorch " << scalar_type_name(want.dtype);
    ASSERT_EQ(std::vector<int32_t>(got.sizes().begin(), got.sizes().end()), want.shape) << where;
    const std::vector<uint8_t> bytes = logical_bytes(got);
    if (exact.count(i) || (want.dtype != ScalarType::Float && want.dtype != ScalarType::Double)) {
      EXPECT_TRUE(bytes == want.data) << where << ": not bit-identical to ExecuTorch";
    } else if (want.dtype == ScalarType::Float) {
      expect_close<float>(where, bytes, want.data);
    } else {
      expect_close<double>(where, bytes, want.data);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Executorch, ExecutorchFixture, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name + "_" + info.param.library;
                         });

// What pteron-run writes reads back unchanged (also through numpy: it is a plain stored zip).
TEST(NpzIo, WriteThenReadRoundTrips) {
  std::vector<Array> arrays(4);
  arrays[0] = {"floats", ScalarType::Float, {2, 3}, std::vector<uint8_t>(24)};
  arrays[1] = {"empty_longs", ScalarType::Long, {0, 4}, {}};
  arrays[2] = {"scalar_bool", ScalarType::Bool, {}, {1}};
  arrays[3] = {"halves", ScalarType::Half, {3}, {0, 60, 0, 188, 255, 123}};
  for (size_t i = 0; i < arrays[0].data.size(); ++i)
    arrays[0].data[i] = static_cast<uint8_t>(i * 37);
  const std::string path = ::testing::TempDir() + "npz_io_round_trip.npz";
  std::string error;
  ASSERT_TRUE(npz::write(path, arrays, &error)) << error;
  const std::vector<Array> back = npz::read(path, &error);
  ASSERT_EQ(back.size(), arrays.size()) << error;
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(back[i].name, arrays[i].name);
    EXPECT_EQ(back[i].dtype, arrays[i].dtype) << arrays[i].name;
    EXPECT_EQ(back[i].shape, arrays[i].shape) << arrays[i].name;
    EXPECT_EQ(back[i].data, arrays[i].data) << arrays[i].name;
  }
  std::remove(path.c_str());
}

TEST(NpzIo, CompressedArchiveIsRefusedWithAMessage) {
  const std::string path = ::testing::TempDir() + "npz_io_compressed.npz";
  std::string error;
  ASSERT_TRUE(npz::write(path, {{"x", ScalarType::Float, {1}, {0, 0, 128, 63}}}, &error)) << error;
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 8, SEEK_SET);  // local header: compression method
  std::fputc(8, f);            // deflate
  std::fclose(f);
  EXPECT_TRUE(npz::read(path, &error).empty());
  EXPECT_NE(error.find("compressed"), std::string::npos) << error;
  std::remove(path.c_str());
}

// numpy writes an F-contiguous array (a transposed one) with fortran_order True: its elements
// come back in C order, as the array's values, not its memory.
TEST(NpzIo, FortranOrderArraysComeBackInCOrder) {
  const std::vector<int64_t> shape = {2, 3, 4};
  std::vector<uint8_t> fortran(2 * 3 * 4 * sizeof(int32_t));
  for (int32_t i = 0; i < 2; ++i)
    for (int32_t j = 0; j < 3; ++j)
      for (int32_t k = 0; k < 4; ++k) {
        const int32_t value = 100 * i + 10 * j + k;  // element [i][j][k]
        std::memcpy(&fortran[4 * (i + 2 * j + 6 * k)], &value, 4);
      }
  std::vector<uint8_t> blob;
  std::string why;
  ASSERT_TRUE(npz::make_npy(ScalarType::Int, shape, fortran, &blob, &why)) << why;
  const std::string c_header = "'fortran_order': False,", f_header = "'fortran_order': True, ";
  const auto at = std::search(blob.begin(), blob.end(), c_header.begin(), c_header.end());
  ASSERT_NE(at, blob.end());
  std::copy(f_header.begin(), f_header.end(), at);  // same length: the header stays padded
  npz::NpyView npy;
  ASSERT_TRUE(npz::parse_npy(blob.data(), blob.size(), &npy, &why)) << why;
  EXPECT_TRUE(npy.fortran_order);
  EXPECT_EQ(npy.shape, shape);
  const std::vector<uint8_t> c = npz::c_order_data(npy);
  ASSERT_EQ(c.size(), fortran.size());
  for (int32_t n = 0; n < 24; ++n) {
    int32_t value;
    std::memcpy(&value, &c[4 * n], 4);
    EXPECT_EQ(value, 100 * (n / 12) + 10 * (n / 4 % 3) + n % 4) << "element " << n;
  }
}

// A wrong fixture path must not pass as "no tests".
TEST(ExecutorchFixtures, AreFound) {
  const std::vector<std::string> names = fixture_names();
  for (const char* expected :
       {"add", "conv_bn_relu", "linear", "mobilenet_v2", "scalar_args", "transformer_block"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << expected << " not found in " << kFixtureDir;
  }
}

}  // namespace
}  // namespace pteron
