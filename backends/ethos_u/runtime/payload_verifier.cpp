#include "backends/ethos_u/runtime/payload_verifier.h"

#include "runtime/core/error.h"

namespace pteron::ethos_u {
namespace {

Error verify_io(const flatbuffers::Vector<flatbuffers::Offset<fb::IoTensor>>* list,
                const char* role) {
  if (list == nullptr || list->size() == 0) {
    return fail(Error::InvalidProgram, "Ethos-U payload: no %ss", role);
  }
  for (uint32_t i = 0; i < list->size(); ++i) {
    const fb::IoTensor* t = list->Get(i);
    uint32_t rank = t->shape() ? t->shape()->size() : 0;
    if (rank > kMaxIoRank) {
      return fail(Error::InvalidProgram, "Ethos-U payload: %s %u has rank %u (at most %d)", role, i,
                  rank, kMaxIoRank);
    }
    for (uint32_t d = 0; d < rank; ++d) {
      if (t->shape()->Get(d) < 0 || t->shape()->Get(d) > (int64_t(1) << 31)) {
        return fail(Error::InvalidProgram, "Ethos-U payload: %s %u dimension %u is %lld", role, i,
                    d, static_cast<long long>(t->shape()->Get(d)));
      }
    }
    uint32_t order = t->dim_order() ? t->dim_order()->size() : 0;
    if (order != 0) {
      bool seen[kMaxIoRank] = {};
      bool ok = order == rank;
      for (uint32_t d = 0; ok && d < order; ++d) {
        uint8_t v = t->dim_order()->Get(d);
        ok = v < rank && !seen[v];
        if (ok) seen[v] = true;
      }
      if (!ok) {
        return fail(Error::InvalidProgram,
                    "Ethos-U payload: %s %u dim_order is not a permutation of its %u dims", role, i,
                    rank);
      }
    }
    if (t->tosa_index() >= list->size()) {
      return fail(Error::InvalidProgram, "Ethos-U payload: %s %u has TOSA index %u of %u", role, i,
                  t->tosa_index(), list->size());
    }
    for (uint32_t j = 0; j < i; ++j) {
      if (list->Get(j)->tosa_index() == t->tosa_index()) {
        return fail(Error::InvalidProgram, "Ethos-U payload: %ss %u and %u share TOSA index %u",
                    role, j, i, t->tosa_index());
      }
    }
    if (t->dtype() != 1 && t->dtype() != 6) {
      return fail(Error::InvalidProgram, "Ethos-U payload: %s %u dtype %d (int8 or float32)", role,
                  i, t->dtype());
    }
  }
  return Error::Ok;
}

}  // namespace

Result<const fb::EthosUPayload*> verify_payload(Span<const uint8_t> processed) {
  if (processed.data() == nullptr || processed.size() < 8) {
    return fail(Error::InvalidProgram, "Ethos-U payload: %zu bytes is too short", processed.size());
  }
  if (!flatbuffers::BufferHasIdentifier(processed.data(), fb::EthosUPayloadIdentifier())) {
    return fail(Error::InvalidProgram, "Ethos-U payload: missing file identifier \"%s\"",
                fb::EthosUPayloadIdentifier());
  }
  flatbuffers::Verifier verifier(processed.data(), processed.size());
  if (!fb::VerifyEthosUPayloadBuffer(verifier)) {
    return fail(Error::InvalidProgram, "Ethos-U payload: flatbuffer failed verification");
  }
  const fb::EthosUPayload* p = fb::GetEthosUPayload(processed.data());
  if (p->version() != kPayloadVersion) {
    return fail(Error::InvalidProgram, "Ethos-U payload: version %u, this runtime reads %u",
                p->version(), kPayloadVersion);
  }
  if (p->tosa() == nullptr || p->tosa()->size() < 8) {
    return fail(Error::InvalidProgram, "Ethos-U payload: no TOSA form of the region");
  }
  if (p->command_stream() == nullptr || p->command_stream()->size() == 0) {
    return fail(Error::InvalidProgram, "Ethos-U payload: no command stream");
  }
  PTERON_TRY(verify_io(p->inputs(), "input"));
  PTERON_TRY(verify_io(p->outputs(), "output"));
  return p;
}

}  // namespace pteron::ethos_u
