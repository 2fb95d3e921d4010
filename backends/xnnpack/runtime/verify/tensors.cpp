// Checks of the constant blob and of every tensor: ids, dtypes, dims, quantisation, constant
// ranges, external arguments and dim orders.
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

Error Verifier::check_blob() {
  const uint64_t offset = p_.constant_data_offset();
  const uint64_t size = p_.constant_data_size();
  if (offset % kConstantAlignment != 0 || offset > payload_size_ || size > payload_size_ - offset) {
    return fail(Error::InvalidProgram,
                "XNNPACK payload: constant blob [%llu, +%llu) is misaligned or outside the "
                "%zu-byte payload",
                static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                payload_size_);
  }
  return Error::Ok;
}

Error Verifier::tensor_fail(uint32_t index, const char* fmt, ...) {
  char detail[192];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof(detail), fmt, args);
  va_end(args);
  return fail(Error::InvalidProgram, "XNNPACK payload tensor #%u: %s", index, detail);
}

Error Verifier::check_tensors() {
  const auto* tensors = p_.tensors();
  const uint32_t n = tensors ? tensors->size() : 0;
  if (n == 0) return fail(Error::InvalidProgram, "XNNPACK payload has no tensors");
  if (p_.num_args() >= (1u << 20)) {
    return fail(Error::InvalidProgram, "XNNPACK payload: num_args %u is implausible",
                p_.num_args());
  }
  info_.assign(n, TensorInfo{});
  std::vector<bool> arg_used(p_.num_args(), false);
  for (uint32_t i = 0; i < n; ++i) {
    const fb::Tensor* t = tensors->Get(i);
    const uint32_t id = t->id();
    if (id >= n) return tensor_fail(i, "id %u is out of range (%u tensors)", id, n);
    TensorInfo& ti = info_[id];
    if (ti.t != nullptr) return tensor_fail(i, "id %u is used twice", id);
    ti.t = t;
    ti.dtype = t->dtype();
    switch (ti.dtype) {
      case DataType::Float32:
      case DataType::Float16:
      case DataType::QInt8:
      case DataType::QInt32:
      case DataType::QCInt8:
      case DataType::QCInt32:
        break;
      case DataType::QUInt8:
        return fail(Error::NotSupported, "XNNPACK payload tensor %u: quint8 is not supported", id);
      default:
        return tensor_fail(i, "id %u has invalid dtype %d", id, static_cast<int>(ti.dtype));
    }
    const auto* dims = t->dims();
    ti.rank = dims ? dims->size() : 0;
    if (ti.rank > kMaxDims) {
      return tensor_fail(i, "tensor %u has %u dims; XNNPACK allows at most %zu", id, ti.rank,
                         kMaxDims);
    }
    for (uint32_t d = 0; d < ti.rank; ++d) {
      const uint32_t v = dims->Get(d);
      if (v == 0 || v > kMaxDimSize) {
        return tensor_fail(i, "tensor %u dim %u is %u (must be 1 .. 2^31-1)", id, d, v);
      }
      ti.dims[d] = v;
      ti.numel *= v;
      if (ti.numel * dtype_size(ti.dtype) > kMaxTensorBytes) {
        return tensor_fail(i, "tensor %u is larger than 2^36 bytes", id);
      }
    }
    PTERON_TRY(check_quant(i, ti));
    ti.external = t->external();
    if (ti.external != fb::ExternalKind::Internal && ti.external != fb::ExternalKind::Input &&
        ti.external != fb::ExternalKind::Output) {
      return tensor_fail(i, "tensor %u has invalid external kind %d", id,
                         static_cast<int>(ti.external));
    }
    ti.constant = t->is_constant();
    if (ti.constant) PTERON_TRY(check_constant(i, ti));
    if (ti.external != fb::ExternalKind::Internal) {
      if (ti.constant) return tensor_fail(i, "tensor %u is both constant and external", id);
      if (ti.dtype == DataType::QCInt8 || ti.dtype == DataType::QCInt32) {
        return tensor_fail(i, "tensor %u: per-channel %s cannot be external", id,
                           dtype_name(ti.dtype));
      }
      const uint32_t arg = t->arg_index();
      if (arg >= arg_used.size()) {
        return tensor_fail(i, "tensor %u: arg_index %u is out of range (%u args)", id, arg,
                           p_.num_args());
      }
      if (arg_used[arg]) return tensor_fail(i, "tensor %u: arg_index %u is bound twice", id, arg);
      arg_used[arg] = true;
      PTERON_TRY(check_dim_order(i, ti));
    }
  }
  return Error::Ok;
}

Error Verifier::check_quant(uint32_t i, const TensorInfo& ti) {
  const fb::Tensor* t = ti.t;
  const uint32_t id = t->id();
  switch (ti.dtype) {
    case DataType::QInt8:
      if (t->zero_point() < -128 || t->zero_point() > 127) {
        return tensor_fail(i, "tensor %u: qint8 zero point %d is outside [-128, 127]", id,
                           t->zero_point());
      }
      [[fallthrough]];
    case DataType::QInt32:
      if (ti.dtype == DataType::QInt32 && t->zero_point() != 0) {
        return tensor_fail(i, "tensor %u: qint32 zero point must be 0, not %d", id,
                           t->zero_point());
      }
      if (!positive_normal(t->scale())) {
        return tensor_fail(i, "tensor %u: scale %g must be positive, finite and normal", id,
                           static_cast<double>(t->scale()));
      }
      return Error::Ok;
    case DataType::QCInt8:
    case DataType::QCInt32: {
      const uint32_t cd = t->channel_dim();
      if (cd >= ti.rank) {
        return tensor_fail(i, "tensor %u: channel_dim %u is out of range for rank %u", id, cd,
                           ti.rank);
      }
      const auto* scales = t->channel_scales();
      const uint32_t count = scales ? scales->size() : 0;
      if (count != ti.dims[cd]) {
        return tensor_fail(i, "tensor %u has %u channel scales for %u channels", id, count,
                           ti.dims[cd]);
      }
      // This XNNPACK checks scales[0 .. dims[0]) whatever channel_dim is; keep that read
      // inside the vector.
      if (ti.dims[0] > count) {
        return tensor_fail(i, "tensor %u: per-channel dims[0] (%u) exceeds the channel count", id,
                           ti.dims[0]);
      }
      for (uint32_t c = 0; c < count; ++c) {
        if (!positive_normal(scales->Get(c))) {
          return tensor_fail(i, "tensor %u: channel %u scale %g must be positive and normal", id, c,
                             static_cast<double>(scales->Get(c)));
        }
      }
      return Error::Ok;
    }
    default:
      return Error::Ok;
  }
}

Error Verifier::check_constant(uint32_t i, const TensorInfo& ti) {
  const fb::Tensor* t = ti.t;
  const uint64_t nbytes = ti.numel * dtype_size(ti.dtype);
  const uint64_t offset = t->constant_offset();
  const uint64_t size = t->constant_size();
  const uint64_t blob = p_.constant_data_size();
  if (size != nbytes) {
    return tensor_fail(i, "constant %u has %llu bytes; its dims and dtype need %llu", t->id(),
                       static_cast<unsigned long long>(size),
                       static_cast<unsigned long long>(nbytes));
  }
  // Named: the bytes are the program's named data, whose size the backend checks when it
  // resolves the key (CompiledGraph::init).
  if (const flatbuffers::String* key = t->constant_key()) {
    if (p_.version() < kPayloadVersionNamedConstants) {
      return tensor_fail(i, "constant %u names program data in a version-%u payload", t->id(),
                         p_.version());
    }
    if (key->size() == 0 || key->size() > kMaxConstantKeyBytes || offset != 0) {
      return tensor_fail(i,
                         "constant %u: named-data key of %u bytes (1 .. %zu) with offset %llu "
                         "(must be 0)",
                         t->id(), key->size(), kMaxConstantKeyBytes,
                         static_cast<unsigned long long>(offset));
    }
    for (uint32_t c = 0; c < key->size(); ++c) {
      const char ch = key->c_str()[c];
      if (ch < 0x21 || ch > 0x7e) {
        return tensor_fail(i, "constant %u: named-data key has a non-printable byte", t->id());
      }
    }
    return Error::Ok;
  }
  // XNNPACK may read kExtraBytes past a constant it reads at run time (e.g. a static add
  // operand), so those must lie inside the blob too.
  if (offset % kConstantAlignment != 0 || offset > blob || size + kExtraBytes > blob - offset) {
    return tensor_fail(i,
                       "constant %u range [%llu, +%llu) (+%zu extra bytes) is misaligned or "
                       "outside the %llu-byte constant blob",
                       t->id(), static_cast<unsigned long long>(offset),
                       static_cast<unsigned long long>(size), kExtraBytes,
                       static_cast<unsigned long long>(blob));
  }
  return Error::Ok;
}

Error Verifier::check_dim_order(uint32_t i, const TensorInfo& ti) {
  const auto* order = ti.t->dim_order();
  if (order == nullptr || order->size() == 0) return Error::Ok;
  if (order->size() != ti.rank) {
    return tensor_fail(i, "tensor %u: dim_order has %u entries for rank %u", ti.t->id(),
                       order->size(), ti.rank);
  }
  uint32_t seen = 0;
  for (uint32_t d = 0; d < ti.rank; ++d) {
    const uint8_t v = order->Get(d);
    if (v >= ti.rank || (seen & (1u << v)) != 0) {
      return tensor_fail(i, "tensor %u: dim_order is not a permutation of 0..%u", ti.t->id(),
                         ti.rank - 1);
    }
    seen |= 1u << v;
  }
  return Error::Ok;
}

}  // namespace pteron::xnnpack::detail
