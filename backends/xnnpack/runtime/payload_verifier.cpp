// verify_payload: the flatbuffer, then the Verifier's checks of the blob, the tensors
// (verify/tensors.cpp), the nodes (verify/nodes.cpp and the op families) and the data flow.
#include "backends/xnnpack/runtime/payload_verifier.h"

#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

Error Verifier::run() {
  if (p_.version() != kPayloadVersion && p_.version() != kPayloadVersionNamedConstants) {
    return fail(Error::NotSupported,
                "XNNPACK payload version %u is not supported (this runtime reads versions %u "
                "and %u)",
                p_.version(), kPayloadVersion, kPayloadVersionNamedConstants);
  }
  PTERON_TRY(check_blob());
  PTERON_TRY(check_tensors());
  PTERON_TRY(check_nodes());
  for (size_t id = 0; id < info_.size(); ++id) {
    const TensorInfo& ti = info_[id];
    if (ti.external == fb::ExternalKind::Output && ti.producer == kNoProducer) {
      return fail(Error::InvalidProgram,
                  "XNNPACK payload: external output tensor %zu is not produced by any node", id);
    }
    // XNNPACK's optimizer deletes values nobody reads but keeps their producer, which then
    // writes through a null pointer.
    if (ti.producer != kNoProducer && !ti.consumed && ti.external != fb::ExternalKind::Output) {
      return fail(Error::InvalidProgram,
                  "XNNPACK payload: tensor %zu (output of node %u) is never used; make it an "
                  "external output or drop its node",
                  id, ti.producer);
    }
  }
  return Error::Ok;
}

}  // namespace pteron::xnnpack::detail

namespace pteron::xnnpack {

Error verify_payload(Span<const uint8_t> payload, const fb::Payload** root) {
  if (payload.size() < 8 || payload.data() == nullptr) {
    return fail(Error::InvalidProgram, "XNNPACK payload is %zu bytes: truncated", payload.size());
  }
  if (!flatbuffers::BufferHasIdentifier(payload.data(), fb::PayloadIdentifier())) {
    return fail(Error::InvalidProgram,
                "delegate payload is not an XNNPACK payload (identifier is not \"%s\")",
                fb::PayloadIdentifier());
  }
  // Tables and vectors are bounded by the buffer; the limits stop pathological nesting.
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(payload.data(), payload.size(), options);
  if (!fb::VerifyPayloadBuffer(verifier)) {
    return fail(Error::InvalidProgram,
                "XNNPACK payload flatbuffer verification failed: corrupt or truncated");
  }
  const fb::Payload* p = fb::GetPayload(payload.data());
  detail::Verifier v(*p, payload.size());
  PTERON_TRY(v.run());
  *root = p;
  return Error::Ok;
}

}  // namespace pteron::xnnpack
