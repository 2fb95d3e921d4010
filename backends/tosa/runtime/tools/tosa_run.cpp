// pteron-tosa-run GRAPH.tosa INPUTS.npz OUTPUTS.npz [--repeat N]
// Runs a TOSA graph through the executor: inputs are the .npz's arrays in graph input order,
// outputs are written as out0, out1, ... Prints one JSON line with the executor's memory use.
// A host tool, so it may use the standard library; the executor itself does not.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/tosa/runtime/tosa_executor.h"
#include "tools/run/npz_io.h"

using pteron::tosa_rt::TosaExecutor;
using pteron::tosa_rt::TosaTensor;

namespace {

int die(const std::string& msg) {
  std::fprintf(stderr, "pteron-tosa-run: %s\n", msg.c_str());
  return 1;
}

bool dtype_to_scalar(tosa::DType d, pteron::ScalarType* s) {
  switch (d) {
    case tosa::DType::INT8:
      *s = pteron::ScalarType::Char;
      return true;
    case tosa::DType::INT16:
      *s = pteron::ScalarType::Short;
      return true;
    case tosa::DType::INT32:
      *s = pteron::ScalarType::Int;
      return true;
    case tosa::DType::FP32:
      *s = pteron::ScalarType::Float;
      return true;
    case tosa::DType::BOOL:
      *s = pteron::ScalarType::Bool;
      return true;
    default:
      return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return die("usage: pteron-tosa-run GRAPH.tosa INPUTS.npz OUTPUTS.npz [--repeat N]");
  int repeat = 1;
  if (argc >= 6 && std::strcmp(argv[4], "--repeat") == 0) repeat = std::atoi(argv[5]);
  std::ifstream f(argv[1], std::ios::binary);
  if (!f) return die(std::string("cannot read ") + argv[1]);
  std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Constants are read in place: keep the flatbuffer 8-byte aligned.
  std::vector<uint64_t> graph((raw.size() + 7) / 8);
  std::memcpy(graph.data(), raw.data(), raw.size());

  auto need = TosaExecutor::memory_required(graph.data(), raw.size());
  if (!need.ok()) return die(pteron::last_error_message());
  std::vector<uint8_t> memory(*need);
  auto ex = TosaExecutor::create(graph.data(), raw.size(), {memory.data(), memory.size()});
  if (!ex.ok()) return die(pteron::last_error_message());

  std::string err;
  std::vector<pteron::npz::Array> inputs = pteron::npz::read(argv[2], &err);
  if (!err.empty()) return die(err);
  if (inputs.size() != ex->num_inputs()) {
    return die("graph has " + std::to_string(ex->num_inputs()) + " inputs, " + argv[2] + " has " +
               std::to_string(inputs.size()));
  }
  std::vector<const void*> in_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TosaTensor& t = ex->input(i);
    if (inputs[i].data.size() != pteron::tosa_rt::tensor_bytes(t)) {
      return die("input " + std::to_string(i) + " ('" + t.name + "') needs " +
                 std::to_string(pteron::tosa_rt::tensor_bytes(t)) + " bytes, got " +
                 std::to_string(inputs[i].data.size()));
    }
    in_ptrs.push_back(inputs[i].data.data());
  }
  std::vector<pteron::npz::Array> outputs(ex->num_outputs());
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TosaTensor& t = ex->output(i);
    outputs[i].name = "out" + std::to_string(i);
    if (!dtype_to_scalar(t.dtype, &outputs[i].dtype)) return die("output dtype not writable");
    outputs[i].shape.assign(t.shape, t.shape + t.rank);
    outputs[i].data.resize(pteron::tosa_rt::tensor_bytes(t));
    out_ptrs.push_back(outputs[i].data.data());
  }
  for (int r = 0; r < repeat; ++r) {
    pteron::Error e =
        ex->execute({in_ptrs.data(), in_ptrs.size()}, {out_ptrs.data(), out_ptrs.size()});
    if (e != pteron::Error::Ok) return die(pteron::last_error_message());
  }
  if (!pteron::npz::write(argv[3], outputs, &err)) return die(err);
  std::printf(
      "{\"memory_required\": %zu, \"planned_bytes\": %zu, \"arena_bytes\": %zu, "
      "\"ops\": %d}\n",
      *need, ex->planned_bytes(), ex->stats().arena_bytes, ex->stats().num_ops);
  return 0;
}
