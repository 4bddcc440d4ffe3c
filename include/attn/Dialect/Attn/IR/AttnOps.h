//===- AttnOps.h - attn operations ------------------------------*- C++ -*-===//
#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir::attn {
/// The 8-bit float element types attn.attention's Q, K and V may have
/// (f8E4M3FN, f8E5M2); `t` a type or a shaped type's element type.
inline bool isFloat8(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(getElementTypeOrSelf(t));
}
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
