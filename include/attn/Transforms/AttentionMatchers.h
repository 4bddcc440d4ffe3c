//===- AttentionMatchers.h - structural attention matcher -------*- C++ -*-===//
//
// One canonical matcher: every spelling of attention (named linalg ops,
// generics, a linalg.softmax) is normalized into the same facts, collected in
// AttentionMatch. Matching creates no IR; a failure carries a reason a user
// can act on (it feeds --attn-explain).
//
#ifndef ATTN_TRANSFORMS_ATTENTIONMATCHERS_H
#define ATTN_TRANSFORMS_ATTENTIONMATCHERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// A score modification as found by the matcher (no IR yet): a list of
/// scalar nodes in dependence order, built into attn.attention's score_mod
/// region by fuseAttention. Integers are i64, floats f32, conditions i1.
struct ScoreModNode {
  enum Kind { Score, Index, Operand, Const, Op } kind = Op;
  unsigned dim = 0;       ///< Index: attention loop (before a GQA split);
                          ///< Operand: operand number
  StringRef name;         ///< Op: the arith/math op
  SmallVector<int, 2> operands;
  enum Type { F32, I64, I1, IndexT } type = F32;
  double value = 0;       ///< Const
  int64_t predicate = -1; ///< cmpf/cmpi
};
struct ScoreModProgram {
  SmallVector<ScoreModNode> nodes;
  int result = -1;
  /// Tensors the body reads, with maps over the attention loops.
  SmallVector<Value> operands;
  SmallVector<AffineMap> operandMaps;
  SmallVector<SmallVector<int64_t>> operandUnitDims;
  /// One line for remarks.
  std::string describe(unsigned numBatch) const;
  bool empty() const { return result < 0; }
};

/// A runtime dequantization factor (FP8): a float scalar, or the one
/// element of a tensor read at fixed indices (torch-mlir's and JAX's
/// per-tensor scale tensors), that multiplies (or divides) an operand.
struct RuntimeScaleFactor {
  Value source;                 ///< a float scalar or a ranked tensor
  SmallVector<int64_t> indices; ///< the element read (tensors only)
  bool divide = false;
};

/// Everything needed to build attn.attention, found by walking back from the
/// P·V contraction.
struct AttentionMatch {
  Value query, key, value, mask; ///< operands after folding transposes
  /// Maps over (b..., m, n, d, e) for query, key, value, output, mask.
  AffineMap queryMap, keyMap, valueMap, outputMap, maskMap;
  /// Unit dims of `mask` that the scores broadcast over (dropped by a
  /// rank-reducing slice when the op is built).
  SmallVector<int64_t> maskUnitDims;
  /// An i1 mask given as "true where masked": inverted when the op is built
  /// (attn.attention keeps keys where an i1 mask is true).
  bool invertBoolMask = false;
  /// Grouped-query attention written as repeated K/V heads (a broadcast then
  /// a collapse_shape, as jnp.repeat / torch expand+reshape write it): the
  /// head dim of the other operands is viewed as (kv heads, group) with a
  /// tensor.expand_shape at these operand dims (-1: untouched), K/V read
  /// their heads before the repeat. Maps above already use the split loops.
  int64_t kvHeads = 0, groups = 0;
  int64_t queryExpandDim = -1, valueExpandDim = -1, outputExpandDim = -1,
          maskExpandDim = -1, sinkExpandDim = -1;
  /// Attention sink logits (one per row), with their map and unit dims.
  Value sink;
  AffineMap sinkMap;
  SmallVector<int64_t> sinkUnitDims;
  bool guarded = false; ///< the safe-softmax guard was absorbed
  unsigned numBatch = 0;
  double scale = 1.0;
  /// FP8: Q, K, V are 8-bit (their dequantizations folded); the value's
  /// scale multiplies the output (1: none).
  double valueScale = 1.0;
  /// FP8 with runtime per-tensor scales: factors of `scale` (Q's and K's)
  /// and of `valueScale` (V's), applied to the constants when the op is
  /// built.
  SmallVector<RuntimeScaleFactor> scaleFactors, valueScaleFactors;
  bool causal = false;
  std::optional<int64_t> window; ///< sliding window: keys m - n >= W masked
  int64_t queryOffset = 0; ///< key position of query 0 (bottom-right causal)
  /// causal/window read from an additive constant mask of 0 and <= -65504
  /// (exact: every row keeps a key, masked exps underflow to 0).
  bool fromAdditiveMask = false;
  /// The score modification (soft-capping, ALiBi, ...), if any.
  ScoreModProgram scoreMod;
  /// The program's log-sum-exp of the scores, replaced by the op's lse
  /// result: its dims as attention loops (in its order), and the position
  /// of a kept unit key dim (-1: none).
  Value lse;
  SmallVector<int64_t> lseLoops;
  int64_t lseKeptDim = -1;
  /// The head loop that a GQA split turned into (kv heads, group) loops.
  int64_t splitHeadLoop = -1;
  /// A finite score for masked keys (the program's own fill); unset: -inf.
  std::optional<double> maskValue;
  Value init;                ///< the P·V destination (zero-filled)
  Operation *root = nullptr; ///< the P·V contraction, replaced
  Operation *softmax = nullptr;  ///< the softmax (or its last op)
  Operation *qkContraction = nullptr;
  /// Ops that become dead once root is replaced, consumers first.
  SmallVector<Operation *> deadChain;
  /// Shape queries (`tensor.dim`) of dead ops: fuseAttention rewrites each
  /// in terms of values that stay (liveDimSize) before erasing the chain.
  SmallVector<Operation *> dimUsers;

  /// One line for remarks: "scale=0.125, mask=additive(b,m,n), ...".
  std::string describe() const;
};

/// Tries to recognize attention whose P·V contraction is `root`. On failure
/// returns failure and sets `why` to the first condition that failed.
FailureOr<AttentionMatch> matchAttention(Operation *root, std::string &why);

/// Dim `d` of `v` in terms of values outside `dead` (through a linalg op's
/// destination, a slice's sizes, a concat's inputs, a cast's source). With
/// `b` null only checks that it can be built: success with a null value.
FailureOr<Value> liveDimSize(Value v, int64_t d,
                             const llvm::SetVector<Operation *> &dead,
                             OpBuilder *b, Location loc);

/// True for an op that starts a softmax-like chain (linalg.softmax, or a
/// linalg op whose body has math.exp); used to find candidates for remarks.
bool isSoftmaxCandidate(Operation *op);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_ATTENTIONMATCHERS_H
