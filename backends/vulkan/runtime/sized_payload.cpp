#include "backends/vulkan/runtime/sized_payload.h"

#include "backends/vulkan/runtime/payload_verifier.h"
#include "flatbuffers/flatbuffers.h"

namespace pteron {
namespace vulkan {

Error SizedPayload::init(Span<const uint8_t> processed, const fb::Payload& verified) {
  // The flatbuffer lies before the constant blob (verified: the blob's offset is inside).
  const uint64_t size = verified.constant_data_offset();
  bytes_.assign(processed.data(), processed.data() + size);
  const Error e = verify_resized_payload(Span<const uint8_t>(bytes_.data(), bytes_.size()));
  if (e != Error::Ok) {
    bytes_.clear();
    return e;
  }
  const auto& ts = *payload().tensors();
  planned_dims_.assign(ts.size() * kMaxDims, 0);
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    for (uint32_t k = 0; t.dims() && k < t.dims()->size(); ++k) {
      planned_dims_[i * kMaxDims + k] = t.dims()->Get(k);
    }
  }
  return Error::Ok;
}

const fb::Payload& SizedPayload::payload() const {
  return *flatbuffers::GetRoot<fb::Payload>(bytes_.data());
}

Error SizedPayload::resize(Span<const SizeRange> symbols) {
  const auto& ts = *payload().tensors();
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    const auto* sym = t.sym_dims();
    if (sym == nullptr || sym->size() == 0) continue;
    auto* dims = const_cast<flatbuffers::Vector<uint32_t>*>(t.dims());
    for (uint32_t k = 0; k < sym->size(); ++k) {
      SizeRange r;
      const char* why = "";
      // Verified at load within [1, planned] over the symbols' ranges; checked again here.
      const int64_t planned = planned_dim(i, k);
      if (!eval_size(*sym->Get(k), symbols, &r, &why) || r.lo < 1 || r.lo > planned) {
        return fail(Error::InvalidProgram,
                    "Vulkan delegate: tensor %u dim %u's size is outside [1, %lld] at this call's "
                    "sizes",
                    i, k, static_cast<long long>(planned));
      }
      dims->Mutate(k, static_cast<uint32_t>(r.lo));
    }
  }
  return verify_resized_payload(Span<const uint8_t>(bytes_.data(), bytes_.size()));
}

}  // namespace vulkan
}  // namespace pteron
