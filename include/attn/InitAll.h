//===- InitAll.h - one-call registration for embedders ----------*- C++ -*-===//
//
// A compiler that embeds attn calls registerAllAttnDialects on its registry
// and registerAttnPasses once; attn-opt does exactly that.
//
#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::attn {

/// The attn dialect and the dialects its passes create.
void registerAllAttnDialects(DialectRegistry &registry);

/// Every attn pass and pipeline (--attn-fuse, --attn-tile,
/// --convert-attn-to-linalg, --attn-cpu-pipeline, ...).
void registerAttnPasses();

} // namespace mlir::attn

#endif // ATTN_INITALL_H
