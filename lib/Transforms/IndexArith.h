//===- IndexArith.h - sizes as converters compute them ----------*- C++ -*-===//
//
// torch-mlir computes slice bounds in i64 with Python's index rules spelled
// out: `x[..., :-1]` becomes min/max/select clamps of `dim + 1 - 1` around
// index casts, and the offset `0` a `min(dim + 1, 0)`. Upstream value bounds
// reason about `index` values only, so these are evaluated here as
// `a * x + c` over one size `x` (a `tensor.dim`, known to be >= 0), folding
// each clamp or select whose outcome is the same for every such size. A
// value that does not reduce to that form is unknown (nullopt): never a
// guess.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_TRANSFORMS_INDEXARITH_H
#define ATTN_LIB_TRANSFORMS_INDEXARITH_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::attn {

/// a * x + c with x dim `dim` of tensor `src` (x >= 0), or a constant (no
/// x). A dim is followed to the size its tensor was created with (through
/// destinations, casts and `tensor.empty`), so two queries of one size are
/// the same x.
struct LinearSize {
  Value src;
  int64_t dim = -1;
  int64_t a = 0, c = 0;
  bool isConstant(int64_t k) const { return (!src || a == 0) && c == k; }
  bool sameSymbol(const LinearSize &o) const {
    return src == o.src && dim == o.dim;
  }
  bool operator==(const LinearSize &o) const {
    return a == o.a && c == o.c && (a == 0 || sameSymbol(o));
  }
};

/// One step toward where `v`'s sizes were chosen: the destination of a
/// pure-tensor destination-style op, or a cast's source, which have the same
/// sizes; `v` itself where there is no such step.
Value sizeOrigin(Value v);

/// `v` (index or integer) as a LinearSize, or nullopt.
std::optional<LinearSize> evalLinearSize(OpFoldResult v);
/// Dim `d` of the ranked tensor `v` as a LinearSize, or nullopt.
std::optional<LinearSize> evalDimSize(Value v, int64_t d);

/// True if `v` is provably 0 for every size.
bool isProvablyZero(OpFoldResult v);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_INDEXARITH_H
