// aten::_upsample_bilinear2d_aa.out(Tensor self, SymInt[2] output_size, bool align_corners,
//     float? scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)
// aten::_upsample_bicubic2d_aa.out(...), the same arguments
//
// Antialiased resizes (F.interpolate(..., antialias=True)): a triangle (bilinear) or Keys cubic
// (a = -0.5, PIL's) filter widened by the scale when downsampling, weights normalised per output,
// applied along W then along H (util/upsample_separable.h). float32, float64 and uint8, as torch;
// any dim order. timm and DINOv2-style ViTs resize position embeddings with the bicubic one.
#include "kernels/portable/util/upsample.h"
#include "kernels/portable/util/upsample_separable.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <SeparableFilter kFilter>
Error upsample_2d_aa_out(const char* op, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[5]->tensor;
  UpsampleShape s;
  PTERON_TRY(upsample_shape_out(op, self, 2, *args[1], &args[3], &s));
  PTERON_TRY(upsample_check_out(op, self, out, s));
  const ScalarType t = self.dtype();
  if (t != ScalarType::Float && t != ScalarType::Double && t != ScalarType::Byte) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (float32, float64, uint8)", op,
                scalar_type_name(t));
  }
  if (out.numel() == 0) return Error::Ok;
  const bool align_corners = args[2]->b;
  if (t == ScalarType::Float)
    separable_resize_2d<float>(self, out, s, align_corners, true, kFilter);
  if (t == ScalarType::Double)
    separable_resize_2d<double>(self, out, s, align_corners, true, kFilter);
  if (t == ScalarType::Byte)
    separable_resize_2d<uint8_t>(self, out, s, align_corners, true, kFilter);
  return Error::Ok;
}

Error upsample_bilinear2d_aa_out(KernelContext&, Span<EValue*> args) {
  return upsample_2d_aa_out<SeparableFilter::Linear>("aten::_upsample_bilinear2d_aa.out", args);
}

Error upsample_bicubic2d_aa_out(KernelContext&, Span<EValue*> args) {
  return upsample_2d_aa_out<SeparableFilter::Cubic>("aten::_upsample_bicubic2d_aa.out", args);
}

}  // namespace

PTERON_KERNEL("aten::_upsample_bilinear2d_aa.out", upsample_bilinear2d_aa_out, "TLBddT");
PTERON_KERNEL("aten::_upsample_bicubic2d_aa.out", upsample_bicubic2d_aa_out, "TLBddT");

}  // namespace pteron
