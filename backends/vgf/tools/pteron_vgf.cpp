// pteron-vgf: the VGF delegate from the command line, for tests and demos.
//   pteron-vgf pack MODEL.vgf PAYLOAD       payload with the I/O table read from the VGF
//   pteron-vgf convert MODEL.tosa PAYLOAD   the same after running the ML SDK model converter
//   pteron-vgf run PAYLOAD IN... -o OUT... [--repeat N]
//                                           run on raw little-endian tensors (one file each);
//                                           --repeat replays the recorded commands N times and
//                                           fails unless every replay gives the same bytes
// Errors print one line on stderr and exit 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vgf/aot/model_converter.h"
#include "backends/vgf/aot/payload_builder.h"
#include "backends/vgf/runtime/payload_format.h"
#include "backends/vgf/runtime/vgf_backend.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/tensor.h"

namespace {

using namespace pteron;

bool read_file(const char* path, std::vector<uint8_t>* out) {
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return false;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  out->resize(n > 0 ? static_cast<size_t>(n) : 0);
  const bool ok = n >= 0 && fread(out->data(), 1, out->size(), f) == out->size();
  fclose(f);
  return ok;
}

bool write_file(const char* path, const void* data, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f == nullptr) return false;
  const bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

int die(const std::string& msg) {
  fprintf(stderr, "pteron-vgf: %s\n", msg.c_str());
  return 1;
}

int pack(const char* in_path, const char* out_path, bool convert) {
  std::vector<uint8_t> vgf;
  if (!read_file(in_path, &vgf)) return die(std::string("cannot read ") + in_path);
  std::string error;
  if (convert) {
    std::vector<uint8_t> tosa;
    tosa.swap(vgf);
    if (!vgf::convert_tosa_to_vgf(tosa, &vgf, &error)) return die(error);
  }
  std::vector<vgf::IoDesc> inputs, outputs;
  if (!vgf::io_from_vgf(vgf, &inputs, &outputs, &error)) return die(error);
  const std::vector<uint8_t> payload = vgf::build_payload(vgf, inputs, outputs);
  if (!write_file(out_path, payload.data(), payload.size())) {
    return die(std::string("cannot write ") + out_path);
  }
  return 0;
}

struct HostTensor {
  std::vector<int32_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  std::vector<uint64_t> data;  // 8-byte aligned storage
  Tensor tensor;
  EValue value;
};

void make_tensor(const vgf::IoDesc& io, HostTensor* t) {
  const ScalarType dtype = static_cast<ScalarType>(io.dtype);
  t->sizes.assign(io.rank, 1);
  t->strides.assign(io.rank, 1);
  t->dim_order.resize(io.rank);
  uint64_t numel = 1;
  for (uint32_t d = io.rank; d-- > 0;) {
    t->sizes[d] = static_cast<int32_t>(io.dims[d]);
    t->strides[d] = static_cast<int32_t>(numel);
    numel *= static_cast<uint64_t>(io.dims[d]);
  }
  // Strides follow the dim order (outermost first in dim_order).
  uint64_t stride = 1;
  for (uint32_t k = io.rank; k-- > 0;) {
    const uint8_t d = io.dim_order[k];
    t->dim_order[k] = d;
    t->strides[d] = static_cast<int32_t>(stride);
    stride *= static_cast<uint64_t>(io.dims[d]);
  }
  t->data.assign((numel * element_size(dtype) + 7) / 8, 0);
  t->tensor = Tensor(dtype, static_cast<int32_t>(io.rank), t->sizes.data(), t->dim_order.data(),
                     t->strides.data(), t->data.data());
  t->value = EValue::from_tensor(&t->tensor);
}

int run(const char* payload_path, const std::vector<const char*>& ins,
        const std::vector<const char*>& outs, int repeat) {
  std::vector<uint8_t> bytes;
  if (!read_file(payload_path, &bytes)) return die(std::string("cannot read ") + payload_path);
  // Copy into 16-byte-aligned storage (the payload's alignment contract).
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8 + 1, 0);
  memcpy(aligned.data(), bytes.data(), bytes.size());
  const Span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size());
  BackendInterface& backend = vgf::backend();
  Result<vgf::PayloadView> view = vgf::verify_payload(payload);
  if (!view.ok()) return die(last_error_message());
  const uint32_t ni = view->header->num_inputs, no = view->header->num_outputs;
  if (ins.size() != ni || outs.size() != no) {
    return die("the payload has " + std::to_string(ni) + " inputs and " + std::to_string(no) +
               " outputs");
  }
  BackendInitContext init_ctx{nullptr, "forward"};
  Result<DelegateHandle*> handle = backend.init(init_ctx, payload, {});
  if (!handle.ok()) return die(last_error_message());
  std::vector<HostTensor> tensors(ni + no);
  std::vector<EValue*> args;
  for (uint32_t i = 0; i < ni + no; ++i) {
    make_tensor(view->io[i], &tensors[i]);
    args.push_back(&tensors[i].value);
  }
  for (uint32_t i = 0; i < ni; ++i) {
    std::vector<uint8_t> in;
    if (!read_file(ins[i], &in)) return die(std::string("cannot read ") + ins[i]);
    if (in.size() != tensors[i].tensor.nbytes()) {
      return die(std::string(ins[i]) + ": " + std::to_string(in.size()) + " bytes, input " +
                 std::to_string(i) + " needs " + std::to_string(tensors[i].tensor.nbytes()));
    }
    memcpy(tensors[i].tensor.mutable_data(), in.data(), in.size());
  }
  BackendExecuteContext exec_ctx{nullptr, 0};
  std::vector<std::vector<uint64_t>> first;
  for (int k = 0; k < repeat; ++k) {
    if (backend.execute(exec_ctx, handle.get(), {args.data(), args.size()}) != Error::Ok) {
      return die(last_error_message());
    }
    for (uint32_t i = 0; i < no; ++i) {
      if (k == 0) {
        first.push_back(tensors[ni + i].data);
      } else if (first[i] != tensors[ni + i].data) {
        return die("replay " + std::to_string(k) + " gave different output " + std::to_string(i));
      }
    }
  }
  if (vgf::delegate_recordings(handle.get()) != 1) return die("the delegate re-recorded");
  for (uint32_t i = 0; i < no; ++i) {
    const Tensor& t = tensors[ni + i].tensor;
    if (!write_file(outs[i], t.const_data(), t.nbytes())) {
      return die(std::string("cannot write ") + outs[i]);
    }
  }
  backend.destroy(handle.get());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "pack") == 0) return pack(argv[2], argv[3], false);
  if (argc == 4 && strcmp(argv[1], "convert") == 0) return pack(argv[2], argv[3], true);
  if (argc >= 3 && strcmp(argv[1], "run") == 0) {
    std::vector<const char*> ins, outs;
    bool after_o = false;
    int repeat = 1;
    for (int i = 3; i < argc; ++i) {
      if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
        repeat = atoi(argv[++i]);
        if (repeat < 1) repeat = 1;
        continue;
      }
      if (strcmp(argv[i], "-o") == 0) {
        after_o = true;
        continue;
      }
      (after_o ? outs : ins).push_back(argv[i]);
    }
    return run(argv[2], ins, outs, repeat);
  }
  fprintf(stderr,
          "usage: pteron-vgf pack MODEL.vgf PAYLOAD\n"
          "       pteron-vgf convert MODEL.tosa PAYLOAD\n"
          "       pteron-vgf run PAYLOAD IN... -o OUT... [--repeat N]\n");
  return 2;
}
