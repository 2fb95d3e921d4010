#include "compiler/frontend/constant_reader.h"

#include <cstring>

#include "compiler/compile_error.h"

namespace pteron::compiler::frontend {

PayloadConfigs::PayloadConfigs(const Pt2Archive& archive, const std::string& model_name) {
  documents_.reserve(2);  // payloads_ point into the documents
  load(archive, "data/weights/" + model_name + "_weights_config.json", "data/weights/");
  load(archive, "data/constants/" + model_name + "_constants_config.json", "data/constants/");
}

void PayloadConfigs::load(const Pt2Archive& archive, const std::string& config,
                          const std::string& dir) {
  configs_ += (configs_.empty() ? "" : " or ") + archive.full_name(config);
  if (!archive.has(config)) return;  // reported when a constant needs it
  const std::string what = archive.path() + ": " + archive.full_name(config);
  Json& doc = documents_.emplace_back();
  try {
    doc = Json::parse(archive.read_text(config));
  } catch (const Json::parse_error& e) {
    throw CompileError(what + ": invalid JSON: " + e.what());
  }
  const Json& entries = member(doc, "config", what);
  if (!entries.is_object()) throw CompileError(what + ": 'config' is not an object");
  for (const auto& [fqn, payload] : entries.items()) {
    const std::string item = what + ": '" + fqn + "'";
    Payload p;
    p.entry = dir + json_string(member(payload, "path_name", item), item);
    p.config = archive.full_name(config);
    p.use_pickle = json_bool(member(payload, "use_pickle", item), item);
    p.meta = &member(payload, "tensor_meta", item);
    payloads_.emplace(fqn, p);
  }
}

PayloadConfigs::Payload PayloadConfigs::find(const std::string& fqn) const {
  auto it = payloads_.find(fqn);
  if (it == payloads_.end()) {
    throw CompileError("constant '" + fqn + "' is not listed in " + configs_);
  }
  return it->second;
}

namespace {

// Copies a strided tensor into a contiguous buffer, element by element.
std::vector<uint8_t> gather(std::span<const uint8_t> storage, const StridedTensor& t,
                            size_t element_size) {
  const size_t rank = t.sizes.size();
  int64_t numel = 1;
  for (int64_t s : t.sizes) numel *= s;
  std::vector<uint8_t> out(static_cast<size_t>(numel) * element_size);
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = t.storage_offset;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * t.strides[d];
    std::memcpy(out.data() + n * element_size, storage.data() + offset * element_size,
                element_size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < t.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

ConstantTensor read_constant(const Pt2Archive& archive, const PayloadConfigs& configs,
                             const std::string& fqn, ir::ConstantKind kind) {
  const PayloadConfigs::Payload payload = configs.find(fqn);
  const std::string what = archive.path() + ": constant '" + fqn + "' (" + payload.config + ")";
  if (payload.use_pickle) {
    throw CompileError(what + " is pickled (a tensor subclass); pteron reads plain tensors only");
  }
  if (payload.meta->is_null()) throw CompileError(what + " has no tensor_meta");
  const StridedTensor t = read_tensor_meta(*payload.meta, what);
  const size_t element_size = ir::dtype_size(t.dtype);
  if (element_size == 0) {
    throw CompileError(what + " has dtype " + ir::dtype_name(t.dtype) +
                       ", which pteron cannot store");
  }
  const std::span<const uint8_t> storage = archive.stored_bytes(payload.entry);

  ConstantTensor c;
  c.spec = t.spec();
  c.data.kind = kind;
  c.data.fqn = fqn;
  int64_t numel = 1;
  // Highest element offset the tensor touches; overflow-safe since sizes come from a file.
  __int128 last = t.storage_offset;
  for (size_t d = 0; d < t.sizes.size(); ++d) {
    numel *= t.sizes[d];
    if (t.sizes[d] > 0) last += static_cast<__int128>(t.sizes[d] - 1) * t.strides[d];
  }
  if (numel == 0) {
    c.data.owner = archive.file();
    return c;
  }
  const __int128 needed = (last + 1) * static_cast<__int128>(element_size);
  if (needed > static_cast<__int128>(storage.size())) {
    throw CompileError(what + ": entry " + archive.full_name(payload.entry) + " holds " +
                       std::to_string(storage.size()) + " bytes but the tensor needs " +
                       std::to_string(static_cast<long long>(needed)) + " (truncated weights?)");
  }
  const size_t nbytes = static_cast<size_t>(numel) * element_size;
  const std::span<const uint8_t> first =
      storage.subspan(static_cast<size_t>(t.storage_offset) * element_size);
  const bool aligned = reinterpret_cast<uintptr_t>(first.data()) % element_size == 0;
  if (ir::is_dense_in_dim_order(t.sizes, t.strides, c.spec.dim_order) && aligned) {
    c.data.bytes = first.subspan(0, nbytes);
    c.data.owner = archive.file();
    return c;
  }
  // Strided with gaps or broadcast (or misaligned): materialise a contiguous copy.
  c.spec.dim_order = ir::identity_dim_order(t.sizes.size());
  ir::ConstantData owned = ir::ConstantData::owned(gather(storage, t, element_size), fqn);
  owned.kind = kind;
  c.data = std::move(owned);
  return c;
}

}  // namespace pteron::compiler::frontend
