//===- Passes.h - attn transformation passes --------------------*- C++ -*-===//
#ifndef ATTN_TRANSFORMS_PASSES_H
#define ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Transforms/Passes.h.inc"

/// Whether the tool was given --attn-explain (every attn pass that can say
/// why it did not do something then says so).
bool explainRequested();

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_PASSES_H
