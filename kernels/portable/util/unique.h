// Grouping equal elements (torch.unique, unique_consecutive) or equal slices along a dim (their
// dim= forms) as torch's CPU kernels group them: sorted ascending with NaN above every number,
// or runs of equal neighbours for the consecutive forms. Equality is ==, so every NaN is a group
// of its own and -0.0 joins 0.0 (a group's value is its first member's, in sorted order).
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

struct UniqueRequest {
  const char* op;
  int32_t dim;   // the dim whose slices are grouped; -1: every element on its own (flattened)
  bool sorted;   // sort the groups; false: group runs of equal neighbours (unique_consecutive)
  bool inverse;  // fill out1: each element's (slice's) group; else out1 must be [0]
  bool counts;   // fill out2: each group's size; else out2 must be [0]
};

// out0 = the groups' values: 1-D when flattened, else self's shape with the group count at dim
// (a data-dependent size: out0 and out2 are planned at a bound and resized here). out1 (int64)
// has self's shape when flattened, [self.size(dim)] otherwise. Every real dtype and bool, any
// dim order; scratch of self's bytes plus 32 per element (slice).
Error unique_groups(KernelContext& ctx, const Tensor& self, const UniqueRequest& request,
                    Tensor& out0, Tensor& out1, Tensor& out2);

}  // namespace pteron
