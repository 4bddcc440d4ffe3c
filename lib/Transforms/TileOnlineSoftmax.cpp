//===- TileOnlineSoftmax.cpp - attn.attention -> online-softmax loop ------===//
//
// Matches: attn.attention (any layout given by its indexing maps).
// Produces:
//   scf.forall over query tiles (tm rows):
//     m = -inf, l = 0, acc = 0                      (f32 state)
//     scf.for over key tiles (tn keys):
//       S = scale * Q_t K_t^T + mask_t  (causal: -inf where n > m)   [tm x tn]
//       m, l, acc = attn.online_update S, V_t into (m, l, acc)
//     O_t = attn.finalize acc, l                     (the one divide)
// Operands are first brought to the canonical layout (b..., rows, cols) with
// linalg.transpose where their maps are not already canonical; that costs an
// O(N d) copy, never an N x N one. For causal attention the key loop stops
// at the diagonal: tiles entirely above it are never visited.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// Brings `v` (indexed by `map` over the attention loops) into the layout
/// whose dims are `order` (attention loop positions), transposing if needed.
static Value toLayout(OpBuilder &b, Location loc, Value v, AffineMap map,
                      ArrayRef<unsigned> order) {
  SmallVector<int64_t> perm;
  for (unsigned dim : order)
    perm.push_back(*map.getResultPosition(getAffineDimExpr(dim, b.getContext())));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Value empty = tensor::EmptyOp::create(
      b, loc, permuted, cast<ShapedType>(v.getType()).getElementType());
  return linalg::TransposeOp::create(b, loc, v, empty, perm)->getResult(0);
}

/// min(tile, total - iv), static when it can be.
static OpFoldResult tileSize(OpBuilder &b, Location loc, Value iv, int64_t tile,
                             OpFoldResult total) {
  std::optional<int64_t> st = getConstantIntValue(total);
  if (st && (tile >= *st))
    return b.getIndexAttr(*st);
  if (st && *st % tile == 0)
    return b.getIndexAttr(tile);
  Value t = getValueOrCreateConstantIndexOp(b, loc, total);
  Value rest = arith::SubIOp::create(b, loc, t, iv);
  Value tileV = arith::ConstantIndexOp::create(b, loc, tile);
  return arith::MinSIOp::create(b, loc, tileV, rest).getResult();
}

static Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                    float value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  return linalg::FillOp::create(b, loc, c, empty)->getResult(0);
}

/// A slice of `v` along its last two dims (rows at `rowOff` x `rowLen`,
/// columns whole) keeping all leading dims.
static Value sliceRows(OpBuilder &b, Location loc, Value v, unsigned rowDim,
                       OpFoldResult rowOff, OpFoldResult rowLen) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  offsets[rowDim] = rowOff;
  sizes[rowDim] = rowLen;
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// A slice of `v` (whose dims are the attention loops `dims`, ascending)
/// to the current tile: rows at `qOff` (tm of them) along m and, if `kOff`
/// is given, keys at `kOff` (tn of them) along n; other dims whole. Returns
/// the slice and its map over the loops (b.., m[, n]).
static std::pair<Value, AffineMap>
sliceToTile(OpBuilder &b, Location loc, Value v, ArrayRef<unsigned> dims,
            unsigned numLoops, unsigned M, Value qOff, OpFoldResult tm,
            Value kOff = Value(), OpFoldResult tn = OpFoldResult()) {
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  SmallVector<AffineExpr> res;
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (dim == M) {
      offsets[i] = qOff;
      sizes[i] = tm;
    } else if (kOff && dim == M + 1) {
      offsets[i] = kOff;
      sizes[i] = tn;
    }
    res.push_back(getAffineDimExpr(dim, ctx));
  }
  Value slice =
      tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
  return {slice, AffineMap::get(numLoops, 0, res, ctx)};
}

namespace {
/// Everything the per-tile builder needs, in canonical layout.
struct Canonical {
  unsigned numBatch;
  Value q, k, v, mask;      // [b.., m, d], [b.., n, d], [b.., n, e], mask
  SmallVector<unsigned> maskDims; // attention dims of the mask, ascending
  SmallVector<unsigned> kBatch, vBatch; // batch dims K / V index (GQA: fewer)
  Value sink;                     // [sinkDims...] sink logits, or null
  SmallVector<unsigned> sinkDims; // attention dims of the sink, ascending
  SmallVector<OpFoldResult> batchSizes;
  OpFoldResult m, n, e;
  Value scale;
  Value valueScale; ///< FP8: the value's dequantization scale (or null)
  bool causal;
  std::optional<int64_t> window;
  int64_t queryOffset = 0; // query m sits at key m + queryOffset
  float maskValue = -std::numeric_limits<float>::infinity();
  /// Skip key tiles the causal/window rule masks entirely. Exact only when
  /// masked keys count as -inf: with a finite mask value they still take
  /// part in fully masked rows.
  bool skipMaskedTiles = true;
  Type outElt;
  /// The score_mod body (applied to the scaled scores) and its operands.
  Block *scoreMod = nullptr;
  SmallVector<Value> modOperands;
  SmallVector<SmallVector<unsigned>> modDims; // ascending, like maskDims
};
} // namespace

/// Applies `block` (a score_mod body) to `score` at the given indices and
/// operand elements: its ops cloned at the builder's point.
static Value applyScoreMod(OpBuilder &b, Block *block, Value score,
                           ValueRange indices, ValueRange elements) {
  IRMapping map;
  map.map(block->getArgument(0), score);
  for (auto [i, v] : llvm::enumerate(indices))
    map.map(block->getArgument(1 + i), v);
  for (auto [i, v] : llvm::enumerate(elements))
    map.map(block->getArgument(1 + indices.size() + i), v);
  for (Operation &op : block->without_terminator())
    b.clone(op, map);
  return map.lookup(block->getTerminator()->getOperand(0));
}

static Value ext(OpBuilder &b, Location loc, Value x) {
  if (x.getType().isF32())
    return x;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

/// S = scale * Qt Kt^T + mask (with the causal rule), f32 [b.., tm, tn].
static Value buildScores(OpBuilder &b, Location loc, const Canonical &c,
                         Value qt, Value kt, Value qOff, OpFoldResult tm,
                         Value kOff, OpFoldResult tn) {
  MLIRContext *ctx = b.getContext();
  unsigned r = c.numBatch;
  SmallVector<OpFoldResult> sShape = c.batchSizes;
  sShape.append({tm, tn});
  Value s = filled(b, loc, sShape, 0.0f);

  // Contraction over d in the loop space (b.., m, n, d).
  SmallVector<AffineExpr> bExprs;
  for (unsigned i = 0; i < r; ++i)
    bExprs.push_back(getAffineDimExpr(i, ctx));
  auto dims = [&](std::initializer_list<unsigned> tail, unsigned numDims) {
    SmallVector<AffineExpr> res = bExprs;
    for (unsigned t : tail)
      res.push_back(getAffineDimExpr(t, ctx));
    return AffineMap::get(numDims, 0, res, ctx);
  };
  unsigned M = r, N = r + 1, D = r + 2;
  SmallVector<AffineExpr> kExprs;
  for (unsigned b : c.kBatch)
    kExprs.push_back(getAffineDimExpr(b, ctx));
  kExprs.append({getAffineDimExpr(N, ctx), getAffineDimExpr(D, ctx)});
  SmallVector<AffineMap> maps = {dims({M, D}, r + 3),
                                 AffineMap::get(r + 3, 0, kExprs, ctx),
                                 dims({M, N}, r + 3)};
  SmallVector<utils::IteratorType> iters(r + 2, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  s = linalg::GenericOp::create(
          b, loc, s.getType(), ValueRange{qt, kt}, ValueRange{s}, maps, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value prod = arith::MulFOp::create(nb, l, ext(nb, l, args[0]),
                                               ext(nb, l, args[1]));
            Value sum = arith::AddFOp::create(nb, l, args[2], prod);
            linalg::YieldOp::create(nb, l, sum);
          })
          ->getResult(0);

  // Scale, mask and causal rule in one elementwise pass over the tile.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> emaps;
  if (c.mask) {
    auto [slice, map] =
        sliceToTile(b, loc, c.mask, c.maskDims, r + 2, M, qOff, tm, kOff, tn);
    inputs.push_back(slice);
    emaps.push_back(map);
  }
  for (auto [v, dims] : llvm::zip(c.modOperands, c.modDims)) {
    auto [slice, map] =
        sliceToTile(b, loc, v, dims, r + 2, M, qOff, tm, kOff, tn);
    inputs.push_back(slice);
    emaps.push_back(map);
  }
  emaps.push_back(AffineMap::getMultiDimIdentityMap(r + 2, ctx));
  SmallVector<utils::IteratorType> eiters(r + 2, utils::IteratorType::parallel);
  Value scale = c.scale;
  bool hasMask = static_cast<bool>(c.mask);
  return linalg::GenericOp::create(
             b, loc, s.getType(), inputs, ValueRange{s}, emaps, eiters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value x = arith::MulFOp::create(nb, l, args.back(), scale);
               // Global query and key indices (tile offsets added).
               Value query, key;
               if (c.scoreMod || c.causal || c.window) {
                 query = arith::AddIOp::create(
                     nb, l, linalg::IndexOp::create(nb, l, M), qOff);
                 key = arith::AddIOp::create(
                     nb, l, linalg::IndexOp::create(nb, l, N), kOff);
               }
               if (c.scoreMod) {
                 SmallVector<Value> idx;
                 for (unsigned i = 0; i < r; ++i)
                   idx.push_back(linalg::IndexOp::create(nb, l, i));
                 idx.append({query, key});
                 unsigned first = hasMask ? 1 : 0;
                 x = applyScoreMod(nb, c.scoreMod, x, idx,
                                   args.slice(first, c.modOperands.size()));
               }
               Value ninf = arith::ConstantOp::create(
                   nb, l, nb.getF32FloatAttr(c.maskValue));
               if (hasMask && args[0].getType().isInteger(1))
                 x = arith::SelectOp::create(nb, l, args[0], x, ninf);
               else if (hasMask)
                 x = arith::AddFOp::create(nb, l, x, ext(nb, l, args[0]));
               if (c.causal || c.window) {
                 Value row = query, col = key;
                 if (c.queryOffset)
                   row = arith::AddIOp::create(
                       nb, l, row,
                       arith::ConstantIndexOp::create(nb, l, c.queryOffset));
                 if (c.causal) {
                   Value above = arith::CmpIOp::create(
                       nb, l, arith::CmpIPredicate::ugt, col, row);
                   x = arith::SelectOp::create(nb, l, above, ninf, x);
                 }
                 if (c.window) {
                   // m - n >= W  <=>  m >= n + W (no negative indices).
                   Value w = arith::ConstantIndexOp::create(nb, l, *c.window);
                   Value reach = arith::AddIOp::create(nb, l, col, w);
                   Value far = arith::CmpIOp::create(
                       nb, l, arith::CmpIPredicate::uge, row, reach);
                   x = arith::SelectOp::create(nb, l, far, ninf, x);
                 }
               }
               linalg::YieldOp::create(nb, l, x);
             })
      ->getResult(0);
}

/// lse = log of the softmax denominator per row: m + log(ℓ) in the
/// running state's natural units; -inf where ℓ = 0 (fully masked).
static Value buildLse(OpBuilder &b, Location loc, Value m, Value l) {
  auto type = cast<RankedTensorType>(m.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, m), type.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(),
                                                   b.getContext());
  SmallVector<utils::IteratorType> par(type.getRank(),
                                       utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{m, l}, ValueRange{init},
             ArrayRef<AffineMap>{id, id, id}, par,
             [](OpBuilder &nb, Location nl, ValueRange a) {
               Value zero = arith::ConstantOp::create(nb, nl,
                                                      nb.getF32FloatAttr(0));
               Value ninf = arith::ConstantOp::create(
                   nb, nl,
                   nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
               Value empty = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OEQ, a[1], zero);
               Value lse = arith::AddFOp::create(
                   nb, nl, a[0], math::LogOp::create(nb, nl, a[1]));
               linalg::YieldOp::create(
                   nb, nl, arith::SelectOp::create(nb, nl, empty, ninf, lse)
                               .getResult());
             })
      ->getResult(0);
}

/// The online-softmax loop for one query tile: O_t [b.., tm, e] and, when
/// `lse` is given, the tile's log-sum-exp [b.., tm] into it.
static Value buildQueryTile(OpBuilder &b, Location loc, const Canonical &c,
                            Value qt, Value qOff, OpFoldResult tm,
                            int64_t keyTile, Value *lse = nullptr) {
  unsigned r = c.numBatch;
  SmallVector<OpFoldResult> rowShape = c.batchSizes;
  rowShape.push_back(tm);
  SmallVector<OpFoldResult> accShape = rowShape;
  accShape.push_back(c.e);
  Value m0 = filled(b, loc, rowShape, -std::numeric_limits<float>::infinity());
  Value l0 = filled(b, loc, rowShape, 0.0f);
  if (c.sink) {
    // The sink is the first "key" every row has seen: m = sink, ℓ = 1
    // (exp(sink - sink)), acc = 0, so it joins the normalization only.
    MLIRContext *ctx = b.getContext();
    // Named copies: lambdas capture them (structured bindings are C++20).
    auto sliced = sliceToTile(b, loc, c.sink, c.sinkDims, r + 1, r, qOff, tm);
    Value st = sliced.first;
    AffineMap sinkMap = sliced.second;
    AffineMap rowId = AffineMap::getMultiDimIdentityMap(r + 1, ctx);
    SmallVector<utils::IteratorType> par(r + 1, utils::IteratorType::parallel);
    auto fromSink = [&](Value init, bool sumOfOne) {
      return linalg::GenericOp::create(
                 b, loc, init.getType(), st, init,
                 ArrayRef<AffineMap>{sinkMap, rowId}, par,
                 [&](OpBuilder &nb, Location l, ValueRange args) {
                   Value x = ext(nb, l, args[0]);
                   if (sumOfOne) {
                     Value ninf = arith::ConstantOp::create(
                         nb, l, nb.getF32FloatAttr(
                                    -std::numeric_limits<float>::infinity()));
                     Value none = arith::CmpFOp::create(
                         nb, l, arith::CmpFPredicate::OEQ, x, ninf);
                     Value zero = arith::ConstantOp::create(
                         nb, l, nb.getF32FloatAttr(0.0f));
                     Value one = arith::ConstantOp::create(
                         nb, l, nb.getF32FloatAttr(1.0f));
                     x = arith::SelectOp::create(nb, l, none, zero, one);
                   }
                   linalg::YieldOp::create(nb, l, x);
                 })
          ->getResult(0);
    };
    m0 = fromSink(m0, false);
    l0 = fromSink(l0, true);
  }
  Value acc0 = filled(b, loc, accShape, 0.0f);

  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value step = arith::ConstantIndexOp::create(b, loc, keyTile);
  Value ub = getValueOrCreateConstantIndexOp(b, loc, c.n);
  Value lb = zero;
  // The key position of the tile's first query.
  Value qPos = qOff;
  if (c.queryOffset)
    qPos = arith::AddIOp::create(
        b, loc, qOff, arith::ConstantIndexOp::create(b, loc, c.queryOffset));
  if (c.window && c.skipMaskedTiles) {
    // Keys before the first row's window are masked for every row.
    Value reach = arith::ConstantIndexOp::create(b, loc, *c.window - 1);
    Value start = arith::SubIOp::create(b, loc, qPos, reach);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          qPos, reach);
    lb = arith::SelectOp::create(b, loc, inRange, start, zero);
  }
  if (c.causal && c.skipMaskedTiles) {
    // Keys after the last row of this tile are masked for every row.
    Value end = arith::AddIOp::create(
        b, loc, qPos, getValueOrCreateConstantIndexOp(b, loc, tm));
    ub = arith::MinSIOp::create(b, loc, ub, end);
  }
  bool dynamicBounds = c.causal || c.window;
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{m0, l0, acc0},
      [&](OpBuilder &nb, Location l, Value j, ValueRange state) {
        // With the causal bound the trip count depends on the query tile, so
        // the last key tile is only known to be ragged at run time.
        OpFoldResult tn = dynamicBounds ? OpFoldResult(arith::MinSIOp::create(
                                         nb, l,
                                         arith::ConstantIndexOp::create(
                                             nb, l, keyTile),
                                         arith::SubIOp::create(nb, l, ub, j))
                                         .getResult())
                                   : tileSize(nb, l, j, keyTile, c.n);
        Value kt = sliceRows(nb, l, c.k, c.kBatch.size(), j, tn);
        Value vt = sliceRows(nb, l, c.v, c.vBatch.size(), j, tn);
        Value s = buildScores(nb, l, c, qt, kt, qOff, tm, j, tn);
        DenseI64ArrayAttr vBatchAttr;
        if (c.vBatch.size() != r)
          vBatchAttr = nb.getDenseI64ArrayAttr(
              llvm::to_vector_of<int64_t>(c.vBatch));
        auto upd = OnlineUpdateOp::create(nb, l, state[0].getType(),
                                          state[1].getType(),
                                          state[2].getType(), s, vt, state[0],
                                          state[1], state[2], vBatchAttr);
        scf::YieldOp::create(nb, l, upd->getResults());
      });
  auto outType = RankedTensorType::get(
      cast<RankedTensorType>(acc0.getType()).getShape(), c.outElt);
  if (lse)
    *lse = buildLse(b, loc, loop.getResult(0), loop.getResult(1));
  Value acc = loop.getResult(2);
  if (c.valueScale) {
    // O = value_scale * acc / sum: the value's scale, once per output.
    auto accType = cast<RankedTensorType>(acc.getType());
    Value empty = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, acc), accType.getElementType());
    Value vs = c.valueScale;
    acc = linalg::MapOp::create(
              b, loc, ValueRange{acc}, empty,
              [&](OpBuilder &nb, Location l, ValueRange args) {
                linalg::YieldOp::create(
                    nb, l,
                    ValueRange{
                        arith::MulFOp::create(nb, l, args[0], vs).getResult()});
              })
              ->getResult(0);
  }
  return FinalizeOp::create(b, loc, outType, acc, loop.getResult(1));
}

FailureOr<Value> mlir::attn::tileOnlineSoftmax(RewriterBase &rewriter,
                                               AttentionOp op,
                                               const TileOptions &options) {
  if (options.keyTile <= 0 || options.queryTile < 0)
    return rewriter.notifyMatchFailure(op, "tile sizes must be positive");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  unsigned r = op.getNumBatchDims();
  unsigned M = op.getMDim(), N = op.getNDim(), D = op.getDDim(),
           E = op.getEDim();
  SmallVector<unsigned> batch = llvm::to_vector(llvm::seq<unsigned>(0, r));
  auto order = [&](std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> o = batch;
    o.append(tail.begin(), tail.end());
    return o;
  };

  Canonical c;
  c.numBatch = r;
  c.q = toLayout(rewriter, loc, op.getQuery(), op.getQueryMap(), order({M, D}));
  // K and V keep only the batch dims they index: a K/V head shared by a
  // group of query heads is read, never copied per query head.
  auto present = [&](AffineMap map, std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> o;
    for (unsigned b : batch)
      if (map.isFunctionOfDim(b))
        o.push_back(b);
    SmallVector<unsigned> dims = o;
    dims.append(tail.begin(), tail.end());
    return std::make_pair(o, dims);
  };
  auto [kBatch, kOrder] = present(op.getKeyMap(), {N, D});
  auto [vBatch, vOrder] = present(op.getValueMap(), {N, E});
  c.kBatch = kBatch;
  c.vBatch = vBatch;
  c.k = toLayout(rewriter, loc, op.getKey(), op.getKeyMap(), kOrder);
  c.v = toLayout(rewriter, loc, op.getValue(), op.getValueMap(), vOrder);
  if (Value mask = op.getMask()) {
    AffineMap mm = op.getMaskMap();
    for (AffineExpr e : mm.getResults())
      c.maskDims.push_back(cast<AffineDimExpr>(e).getPosition());
    llvm::sort(c.maskDims);
    c.mask = toLayout(rewriter, loc, mask, mm, c.maskDims);
  }
  if (Value sink = op.getSink()) {
    AffineMap sm = op.getSinkMap();
    for (AffineExpr e : sm.getResults())
      c.sinkDims.push_back(cast<AffineDimExpr>(e).getPosition());
    llvm::sort(c.sinkDims);
    c.sink = toLayout(rewriter, loc, sink, sm, c.sinkDims);
  }
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(rewriter, loc, c.q);
  c.batchSizes.assign(qSizes.begin(), qSizes.begin() + r);
  c.m = qSizes[r];
  c.n = tensor::getMixedSizes(rewriter, loc, c.k)[c.kBatch.size()];
  c.e = tensor::getMixedSizes(rewriter, loc, c.v)[c.vBatch.size() + 1];
  c.scale = op.getScale();
  c.valueScale = op.getValueScale();
  c.causal = op.getCausal();
  c.window = op.getWindow();
  c.queryOffset = op.getQueryOffsetOrZero();
  if (std::optional<APFloat> mv = op.getMaskValue()) {
    c.maskValue = mv->convertToFloat();
    c.skipMaskedTiles = std::isinf(c.maskValue);
  }
  c.outElt = op.getResult().getType().getElementType();
  c.scoreMod = op.getScoreModBlock();
  for (auto [i, v] : llvm::enumerate(op.getModOperands())) {
    AffineMap map = op.getModOperandMap(i);
    SmallVector<unsigned> dims;
    for (AffineExpr e : map.getResults())
      dims.push_back(cast<AffineDimExpr>(e).getPosition());
    llvm::sort(dims);
    c.modOperands.push_back(toLayout(rewriter, loc, v, map, dims));
    c.modDims.push_back(dims);
  }

  // Destination in canonical layout: the init itself when its map is.
  SmallVector<unsigned> outOrder = order({M, E});
  Value init = op.getInit();
  Value canonInit = toLayout(rewriter, loc, init, op.getOutputMap(), outOrder);
  bool outCanonical = canonInit == init;

  Value result, lse;
  bool wantLse = static_cast<bool>(op.getLse());
  std::optional<int64_t> mStatic = getConstantIntValue(c.m);
  if (options.queryTile == 0 || (mStatic && *mStatic <= options.queryTile)) {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    result = buildQueryTile(rewriter, loc, c, c.q, zero, c.m, options.keyTile,
                            wantLse ? &lse : nullptr);
  } else {
    int64_t tq = options.queryTile;
    SmallVector<Value> shared = {canonInit};
    if (wantLse) {
      SmallVector<OpFoldResult> rows = c.batchSizes;
      rows.push_back(c.m);
      shared.push_back(tensor::EmptyOp::create(rewriter, loc, rows,
                                               rewriter.getF32Type()));
    }
    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{c.m},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(tq)}, shared,
        std::nullopt);
    OpBuilder::InsertionGuard g(rewriter);
    rewriter.setInsertionPoint(forall.getTerminator());
    Value i = forall.getInductionVars()[0];
    OpFoldResult tm = tileSize(rewriter, loc, i, tq, c.m);
    Value qt = sliceRows(rewriter, loc, c.q, r, i, tm);
    Value lt;
    Value ot = buildQueryTile(rewriter, loc, c, qt, i, tm, options.keyTile,
                              wantLse ? &lt : nullptr);
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    auto insert = [&](Value tile, Value into, bool withE) {
      unsigned rank = r + (withE ? 2 : 1);
      SmallVector<OpFoldResult> sizes = c.batchSizes;
      sizes.push_back(tm);
      if (withE)
        sizes.push_back(c.e);
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[r] = i;
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      tensor::ParallelInsertSliceOp::create(rewriter, loc, tile, into, offsets,
                                            sizes, strides);
    };
    insert(ot, forall.getRegionIterArgs()[0], /*withE=*/true);
    if (wantLse)
      insert(lt, forall.getRegionIterArgs()[1], /*withE=*/false);
    result = forall.getResult(0);
    if (wantLse)
      lse = forall.getResult(1);
  }
  if (wantLse) {
    // Canonical [b.., m] -> the output's order without e.
    SmallVector<unsigned> lseOrder;
    for (AffineExpr e : op.getOutputMap().getResults())
      if (cast<AffineDimExpr>(e).getPosition() != E)
        lseOrder.push_back(cast<AffineDimExpr>(e).getPosition());
    SmallVector<int64_t> perm;
    SmallVector<unsigned> canon = order({M});
    for (unsigned d : lseOrder)
      perm.push_back(llvm::find(canon, d) - canon.begin());
    auto lseType = cast<RankedTensorType>(op.getLse().getType());
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      SmallVector<OpFoldResult> dsts;
      for (int64_t p : perm)
        dsts.push_back(tensor::getMixedSize(rewriter, loc, lse, p));
      Value empty = tensor::EmptyOp::create(rewriter, loc, dsts,
                                            rewriter.getF32Type());
      lse = linalg::TransposeOp::create(rewriter, loc, lse, empty, perm)
                ->getResult(0);
    }
    if (lse.getType() != lseType)
      lse = tensor::CastOp::create(rewriter, loc, lseType, lse);
  }

  if (!outCanonical) {
    // Write the canonical result into the caller's layout.
    SmallVector<int64_t> perm(r + 2);
    AffineMap om = op.getOutputMap();
    for (unsigned i = 0; i < r + 2; ++i)
      perm[i] = llvm::find(outOrder, om.getDimPosition(i)) - outOrder.begin();
    result = linalg::TransposeOp::create(rewriter, loc, result, init, perm)
                 ->getResult(0);
  } else if (result.getType() != op.getResult().getType()) {
    result =
        tensor::CastOp::create(rewriter, loc, op.getResult().getType(), result);
  }
  if (wantLse)
    rewriter.replaceOp(op, ValueRange{result, lse});
  else
    rewriter.replaceOp(op, result);
  return result;
}

namespace {
struct AttnTilePass : public attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    TileOptions options{tileQ, tileKV};
    for (AttentionOp op : ops)
      if (failed(tileOnlineSoftmax(rewriter, op, options))) {
        op.emitError("cannot tile attention: tile sizes must be positive "
                     "(tile-kv > 0, tile-q >= 0), got tile-q = ")
            << static_cast<int64_t>(tileQ)
            << ", tile-kv = " << static_cast<int64_t>(tileKV);
        return signalPassFailure();
      }
  }
};
} // namespace
