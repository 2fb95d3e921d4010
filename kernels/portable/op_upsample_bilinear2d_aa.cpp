// aten::_upsample_bilinear2d_aa.out(Tensor self, SymInt[2] output_size, bool align_corners,
//     float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
//
// Antialiased bilinear resize (F.interpolate(..., antialias=True)): a triangle filter widened
// by the scale when downsampling, weights normalised per output, applied along W then along H
// (util/upsample_separable.h). float32, float64 and uint8, as torch; any dim order.
#include "kernels/portable/util/upsample.h"
#include "kernels/portable/util/upsample_separable.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_upsample_bilinear2d_aa.out";

Error upsample_bilinear2d_aa_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(kOp, self, 2, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(kOp, self, out, s));
  const ScalarType t = self.dtype();
  if (t != ScalarType::Float && t != ScalarType::Double && t != ScalarType::Byte) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (float32, float64, uint8)", kOp,
                scalar_type_name(t));
  }
  if (out.numel() == 0) return Error::Ok;
  const bool align_corners = args[2]->b;
  constexpr SeparableFilter kLinear = SeparableFilter::Linear;
  if (t == ScalarType::Float)
    separable_resize_2d<float>(self, out, s, align_corners, true, kLinear);
  if (t == ScalarType::Double)
    separable_resize_2d<double>(self, out, s, align_corners, true, kLinear);
  if (t == ScalarType::Byte)
    separable_resize_2d<uint8_t>(self, out, s, align_corners, true, kLinear);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_upsample_bilinear2d_aa.out", upsample_bilinear2d_aa_out, "TLBddT");

}  // namespace pteron
