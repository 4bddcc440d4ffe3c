//===- ScoreTracer.h - symbolic view of the softmax chain -------*- C++ -*-===//
//
// Frontends spell the softmax and the score transforms in many ways: a
// linalg.softmax, or max/sub/exp/sum/div as linalg.generic or linalg.reduce,
// keep-dims or reduced row vectors, broadcasts, unit-dim reshapes, casts,
// selects on iotas. The tracer turns any of them into one small expression
// tree over the *score index space* (the dims of P), so the recognizer
// matches math (`exp(x - max_n x) / sum_n exp(...)`) instead of op spellings.
//
// A tensor read at score point i through an affine `access` is traced through
// its producer: elementwise linalg ops become their region's arithmetic,
// single-reduction linalg ops become `Reduce(combiner, n, body)`, reshapes
// and broadcasts only change the access. Contractions and anything unknown
// are leaves. Every traced op is recorded so the caller can check uses.
//
// Hostile inputs shape the implementation: the trace is a worklist, not a
// recursion (100k chained ops must not overflow the stack), every (value,
// access) pair is traced once and terms are hash-consed (a score that reads
// the previous one twice per step is a DAG, linear here, not a tree), and a
// trace that grows past kMaxTerms distinct ops gives up with a reason.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_TRANSFORMS_SCORETRACER_H
#define ATTN_LIB_TRANSFORMS_SCORETRACER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlir::attn {

/// The float value of a scalar constant, a splat constant tensor or a
/// linalg.fill of a constant.
std::optional<double> getSplatFloat(Value v);

struct Term {
  enum Kind { Leaf, Const, Index, Unary, Binary, Select, Cmp, Reduce, Softmax };
  explicit Term(Kind kind) : kind(kind) {}
  Kind kind;
  StringRef name;           ///< op name for Unary/Binary/Cmp/Reduce
  int64_t pred = -1;        ///< Cmp predicate
  SmallVector<int, 3> kids; ///< term ids
  Value leaf;               ///< Leaf
  AffineMap access;         ///< Leaf: score space -> leaf tensor dims
  double value = 0;         ///< Const
  AffineExpr index;         ///< Index: score-space expression (dim or 0)
  int dim = -1;             ///< Reduce/Softmax: the reduced score dim
  Type type;                ///< Binary: the element type it computes in
};

class ScoreTracer {
public:
  /// Distinct terms (ops of the score expression, after hash-consing)
  /// before trace() gives up ("too large"); a real attention has dozens.
  static constexpr unsigned kMaxTerms = 1u << 18;

  explicit ScoreTracer(MLIRContext *ctx) : ctx(ctx) {}

  /// Traces tensor `t` read at score point i through `access`. Returns a term
  /// id, or -1 with `why` set.
  int trace(Value t, AffineMap access);

  const Term &get(int id) const { return terms[id]; }
  /// Skips value-preserving float casts (extf/truncf).
  int stripCasts(int id) const;
  /// Terms are hash-consed: structurally equal terms have one id.
  bool equal(int a, int b) const { return a == b; }
  /// True if a leaf below `id` satisfies `pred`. `cache` (indexed by term id,
  /// -1 unknown) makes repeated queries with one predicate linear overall.
  bool containsLeaf(int id, function_ref<bool(Value)> pred,
                    std::vector<int8_t> *cache = nullptr) const;
  std::optional<double> constValue(int id) const;

  /// A tensor the program itself computes whose element at each score
  /// point is term `id`, with i1 elements: one of the traced (value, access)
  /// pairs, the last defined in the block where several are.
  std::optional<std::pair<Value, AffineMap>> boolTensorOf(int id) const;
  /// A leaf term: `v` read through `access`.
  int leafTerm(Value v, AffineMap access);
  /// A term the recognizer composes (hash-consed like traced ones).
  int compose(Term t) { return add(std::move(t)); }

  /// Ops whose results were traced through (candidates to erase).
  llvm::SetVector<Operation *> ops;
  /// Leading slices of computed tensors traced through (see trace()).
  SmallVector<Operation *> slices;
  std::string why;

private:
  using Key = std::pair<Value, AffineMap>;
  /// attempt*() result: some inputs are not traced yet (listed in `missing`).
  static constexpr int kPending = -2;

  int add(Term t);
  /// The term of `key` if traced, else kPending with `key` added to missing.
  int lookup(Value v, AffineMap access, SmallVectorImpl<Key> &missing);
  int attempt(Value t, AffineMap access, SmallVectorImpl<Key> &missing);
  int attemptLinalg(linalg::LinalgOp op, Value t, AffineMap access,
                    SmallVectorImpl<Key> &missing);
  int attemptReshape(Operation *op, Value t, AffineMap access,
                     SmallVectorImpl<Key> &missing);
  int evalBody(linalg::LinalgOp op, Value root,
               ArrayRef<AffineExpr> loopToScore, unsigned numScore,
               SmallVectorImpl<Key> &missing);

  MLIRContext *ctx;
  SmallVector<Term> terms;
  /// Hash of a term's fields -> ids with that hash (hash-consing).
  std::unordered_map<size_t, SmallVector<int, 1>> interned;
  /// Traced (value, access) pairs.
  DenseMap<Key, int> memo;
};

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_SCORETRACER_H
