#include "kernels/optimized/util/scatter_walk.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"

namespace pteron::opt {

bool start_scatter(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                   const Tensor* src, Tensor& out, int32_t* dim, ScatterGeometry* g) {
  if (index.numel() == 0 || out.dtype() != self.dtype()) return false;
  if (src != nullptr && src->dtype() != self.dtype()) return false;
  const int32_t rank = self.dim();
  const int64_t d = dim_arg < 0 ? dim_arg + rank : dim_arg;
  if (rank == 0 || d < 0 || d >= rank) return false;
  *dim = static_cast<int32_t>(d);
  if (!scatter_geometry(self, index, src, *dim, g)) return false;
  if (expect_out_shape(op, out, self.sizes().data(), rank) != Error::Ok || !is_row_major(out)) {
    return false;
  }
  if (out.const_data() == self.const_data()) {
    return check_indices(op, index, g->size, *dim, false) == Error::Ok;
  }
  parallel_copy(out.mutable_data(), self.const_data(), self.nbytes());
  return true;
}

bool start_scatter_src(const char* op, Span<EValue*> args, ScatterSrcCall* call) {
  call->index = args[2]->tensor;
  call->src = args[3]->tensor;
  call->out = args[4]->tensor;
  int32_t dim = 0;
  return start_scatter(op, *args[0]->tensor, args[1]->i, *call->index, call->src, *call->out, &dim,
                       &call->g);
}

}  // namespace pteron::opt
