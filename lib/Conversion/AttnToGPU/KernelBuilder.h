//===- KernelBuilder.h - shared pieces of the attn GPU kernels --*- C++ -*-===//
//
// The two kernel bodies of --convert-attn-to-gpu (MmaKernel.cpp: tensor
// cores; SimtKernel.cpp: one thread per query row) and what they share.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace mlir::attn::gpu_kernel {

/// Builds the kernel body for one attention.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  AttentionOp op;
  float scale;
  float maskValue;
  int64_t threads;

  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cF32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// exp(x) = 2^(x log2 e) on the special function unit (ex2.approx), as
  /// FlashAttention kernels do; -inf gives 0. No libdevice needed.
  Value exp(Value x) {
    Value y = arith::MulFOp::create(b, loc, x, cF32(1.4426950408889634f));
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                     ValueRange{y}, ValueRange{},
                                     "ex2.approx.ftz.f32 $0, $1;", Value())
        ->getResult(0);
  }
  /// lse = m + log(l) (natural log; m in log2 units when `mLog2`), -inf
  /// where l = 0, by lg2.approx (no libdevice).
  Value lse(Value m, Value l, bool mLog2) {
    Value lg2 = NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                          ValueRange{l}, ValueRange{},
                                          "lg2.approx.f32 $0, $1;", Value())
                    ->getResult(0);
    Value ln2 = cF32(0.6931471805599453f);
    Value x = mLog2 ? arith::MulFOp::create(
                          b, loc, arith::AddFOp::create(b, loc, m, lg2), ln2)
                          .getResult()
                    : fma(lg2, ln2, m);
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l,
                                        cF32(0.0f));
    return arith::SelectOp::create(
        b, loc, empty, cF32(-std::numeric_limits<float>::infinity()), x);
  }
  /// a * b + c, contractible into one fma by the backend (no libdevice).
  Value fma(Value a, Value x, Value c) {
    auto fm = arith::FastMathFlagsAttr::get(b.getContext(),
                                            arith::FastMathFlags::contract);
    Value prod = arith::MulFOp::create(b, loc, a, x, fm);
    return arith::AddFOp::create(b, loc, prod, c, fm);
  }
  Value ext(Value x) {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  /// The op's score_mod body applied to the scaled score `x` at `loops`
  /// (b..., m, n as loop values, global indices); `x` without a region.
  /// `nBase`, `nOffset`: the key index as a value plus a constant (a
  /// fragment's column), when the caller has it so.
  Value applyScoreMod(Value x, ArrayRef<Value> loops, Value nBase = Value(),
                      int64_t nOffset = 0);
  /// c where the score_mod body yields g * c (or c * g) for a positive,
  /// finite f32 constant c, as soft-capping's c tanh(s / c); else 0.
  float scoreModOuterScale();
  /// Set by a kernel that folds scoreModOuterScale() into its row maxima
  /// and exponents: applyScoreMod then yields g, without the multiply.
  bool dropScoreModOuterScale = false;
  /// Whether the body yields score + X * sitofp(e) (or score - X * ...),
  /// with e an integer sum or difference of the score's indices that holds
  /// the key index n, and X free of the score, m and n (ALiBi's
  /// slope_h * (n - m)), negations allowed on either factor; with
  /// keyAbsAllowed also X * |e| (the absolute value of e or of its
  /// conversion); with m and n below 2^20, or dynamic (the manifest's
  /// index_limit bounds them). At a fragment's column n = nBase + k that
  /// bias is X * f + k X: one term per fragment row (X f) and a multiple of
  /// X.
  bool scoreModKeyLinear();
  /// The body's key-linear form, whatever keyAbsAllowed says: 0 none,
  /// 1 X * sitofp(e), 2 with an absolute value of e or of its conversion.
  int keyLinearForm();
  /// Set by a kernel that takes scoreModKeyLinear()'s bias apart: then
  /// applyScoreMod gets the unscaled score s and returns t = s + k X / scale,
  /// storing the row's term X f here (scaled units: the score is
  /// scale * t + X f). Every score of a fragment row computes the same term
  /// (the same ops on the same values), so a kernel takes any one's. Were
  /// the body not to split (scoreModKeyLinear mirrors the split, so every
  /// score of a kernel splits alike), it returns y / scale and a zero term.
  Value *keyLinearRowTerm = nullptr;
  /// With keyLinearRowTerm, set by a kernel whose tensor cores add the
  /// multiple of X (keyLinearSlope's per-key step times the key's column
  /// within the tile): applyScoreMod then returns s itself; the row's term
  /// is X f at nBase (the kernel asks for it with the tile's first key).
  bool keyLinearOnMma = false;
  /// With keyLinearRowTerm, a probe (nOffset 1): applyScoreMod stores the
  /// unscaled step per key, c X / scale (c the key index's multiple in the
  /// integer term, e.g. -1 for m - n), here; null where it does not split.
  Value *keyLinearSlope = nullptr;
  /// Whether scoreModKeyLinear() takes a key-linear value under an absolute
  /// value, X * |e| (FlashAttention's non-causal ALiBi, -slope |m - n|):
  /// set for a kernel that gives each row the sign of e over its key tile
  /// (keyLinearSign) and applies the whole body to the scores of a tile
  /// where e changes sign in some row (the wgmma kernel).
  bool keyAbsAllowed = false;
  /// Whether the body's key-linear form (keyLinearForm) takes the absolute
  /// value of its key-linear value, whatever keyAbsAllowed says (a kernel
  /// that splits it gives keyLinearSign).
  bool scoreModKeyAbs();
  /// With keyLinearRowTerm, for such a body: the sign (f32 +1 or -1) of the
  /// key-linear value over every key of the tile, for the score's row;
  /// |e| is then sign * e and splits like e. Null: |e| is computed per score
  /// (the body does not split: a zero row term).
  Value keyLinearSign = Value();
  /// A probe (nOffset 1, keyLinearSign set): applyScoreMod stores the
  /// absolute value's argument at nBase and its step per key.
  struct KeyAbsProbe {
    Value base;
    float step = 0;
  };
  KeyAbsProbe *keyAbsProbe = nullptr;
  /// Static sizes of the attention loops (b..., m, n, d, e).
  SmallVector<int64_t> sizes = {};
  /// Computes, here, the body's values that depend only on the batch
  /// indices (ALiBi's per-head slope, constants), once per block instead of
  /// once per score. Call where `batch` is known, before any applyScoreMod.
  /// `perRowDim`: a batch dim that varies by row (GQA packing's group),
  /// whose values are left to each score.
  void hoistScoreMod(ArrayRef<Value> batch, int64_t perRowDim = -1);
  /// Score_mod operand `i` at `loops` (b..., m, n), indices clamped.
  Value readScoreModOperand(unsigned i, ArrayRef<Value> loops);
  /// hoistScoreMod's perRowDim (-1: none).
  int64_t scoreModPerRowDim = -1;
  /// tanh as `tanh.approx.f32` (one MUFU op, relative error 2^-11, what
  /// FlashAttention-3's soft-capping uses): the tensor-core kernels, whose
  /// output is 16-bit; else exactly through ex2 (f32 outputs).
  bool approxTanh = false;
  /// The output's factor (FP8's value_scale; 1 without), applied with the
  /// final 1 / sum.
  float valueScale = 1.0f;
  /// Scales computed at run time (FP8's per-tensor dequantization scales,
  /// read from kernel arguments): emit the f32 value at the insertion
  /// point. Unset: `scale` / `valueScale` are the constants.
  std::function<Value()> runtimeScale, runtimeValueScale;
  /// The score scale as an f32 value. A runtime scale must be positive and
  /// finite: the kernels take each row's max before scaling (as
  /// FlashAttention-3 does with its descale factors), so any other value
  /// becomes NaN and the output with it.
  Value scaleValue() {
    if (!runtimeScale)
      return cF32(scale);
    Value s = runtimeScale();
    Value pos =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, s, cF32(0.0f));
    Value fin =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, s,
                              cF32(std::numeric_limits<float>::infinity()));
    return arith::SelectOp::create(
        b, loc, arith::AndIOp::create(b, loc, pos, fin), s,
        cF32(std::numeric_limits<float>::quiet_NaN()));
  }
  /// scale * log2(e): the exponent's factor where the scale is folded in.
  Value scaleLog2Value() {
    if (!runtimeScale)
      return cF32(scale * 1.4426950408889634f);
    return arith::MulFOp::create(b, loc, scaleValue(),
                                 cF32(1.4426950408889634f));
  }
  Value valueScaleValue() {
    return runtimeValueScale ? runtimeValueScale() : cF32(valueScale);
  }
  IRMapping scoreModHoisted = {};
  /// The kernel argument of each score_mod operand that is not a constant
  /// (null for constants, which become constant vectors).
  SmallVector<Value> modMem = {};
  /// Inside the launch: the view (runtime sizes) of runtime score_mod
  /// operand `i` whose type has dynamic dims.
  std::function<Value(unsigned)> modView;
  /// Varlen (attn.varlen_mask as the mask, -inf fill): the S packed
  /// sequences the kernels take cu_seqlens_q/_k for (0: not varlen), and
  /// the mask's causal rule.
  int64_t varlenSeqs = 0;
  bool varlenCausal = false, varlenBottomRight = false;
  /// Varlen, up to TileKernel::kVarlenVoteSeqs sequences: the persistent
  /// Hopper kernel's producer takes the tiles by levels (tile t of every
  /// sequence, t from the most any has down) where the tables give no
  /// more of them than slots, else by slots. (A block per tile keeps the
  /// slots: each block's reduction over the table before its body cost
  /// more than the order gained, 0.89-1.01x.)
  bool varlenLevels = false;
  /// Dynamic shapes: the runtime size of each attention loop (b..., m, n,
  /// d, e) that is dynamic (a host function argument the launch captures,
  /// so a kernel parameter), null where the size is static; empty when
  /// every size is. `sizes` holds ShapedType::kDynamic there.
  SmallVector<Value> dynSizes = {};
  /// With dynamic sizes: the launch's grid x (query blocks) and y (batch
  /// entries), computed in the host function.
  Value dynGridX = {}, dynBatch = {};
  /// With a split count chosen at launch: the host function's grid z.
  Value dynSplits = {};
  bool isDynamic(unsigned d) const {
    return d < dynSizes.size() && dynSizes[d];
  }
  Value gridX(int64_t x) { return dynGridX ? dynGridX : cIdx(x); }
  Value gridY(int64_t y) { return dynBatch ? dynBatch : cIdx(y); }
  /// Query blocks of `rows` rows: ceil(M / rows), or with varlen the tile
  /// slots of TileKernel::setVarlen, floor(M / rows) + S.
  int64_t queryBlocks(int64_t M, int64_t rows) const {
    return varlenSeqs ? M / rows + varlenSeqs : (M + rows - 1) / rows;
  }
  /// memref[map(loopValues)]
  Value load(Value mem, AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    return memref::LoadOp::create(b, loc, mem, idx);
  }
};

/// Constant score_mod operands of at most this many elements become
/// constant vectors in the kernel; larger ones kernel arguments whose data
/// the bundle carries.
constexpr int64_t kMaxScoreModTable = 1024;
/// The constant data of score_mod operand `i` as an in-kernel table, or
/// null.
DenseElementsAttr scoreModTable(AttentionOp op, unsigned i);
/// Why the GPU kernels cannot take `op`'s score_mod ("" if they can).
std::string scoreModIneligibility(AttentionOp op);
/// A score_mod body that keeps a score only where an id read per query row
/// equals one read per key (packed documents' segment ids: select(x_q ==
/// x_k, s, fill), possibly among other kept conditions): those operands
/// (i32 or i64, at (b..., m) and (b..., n)) and the fill. A block's rows
/// then see only keys whose id lies within their ids' [min, max].
struct SegmentMatch {
  int rowOperand = -1, keyOperand = -1;
  /// Ids the body computes (position chunks, m / C == n / C: Llama 4's
  /// chunked attention): the compared values in the region, each a
  /// function of its own position (and batch indices, constants, operands
  /// indexed by that position alone); the operands above are then -1.
  Value rowExpr = {}, keyExpr = {};
  /// The batch dims the key ids vary with (bit d: loop d), and the row ids
  /// (computed ids only).
  uint64_t keyBatchDims = 0, rowBatchDims = 0;
  /// A computed key id that never decreases along the keys (position
  /// chunks): each block finds its keys by binary search, not by a scan, so
  /// the ranges also serve split-KV, packed rows and pages.
  bool keyMonotone = false;
  /// The row ids never reach the bounds 32-bit saturation maps wider ids
  /// to (i32 ids, or computed ones whose range stays inside): a key whose
  /// saturated id equals a row's has that very id.
  bool rowIdsUnsaturated = false;
  /// Which computed ids read their position (the others read a tensor).
  bool rowFromPositions = false, keyFromPositions = false;
  bool zeroExtend = false; ///< the ids compare as unsigned (extui)
  bool int32 = true;       ///< both id tensors are i32 (else i64, saturated)
  /// The key ranges can be built: signed ids of either width, or unsigned
  /// i32 ones (64-bit unsigned ids would saturate out of order).
  bool rangeable() const { return int32 || !zeroExtend; }
  /// The body is that select alone (keeping the score itself): where every
  /// row and key of a tile has one id, the tile needs no body at all.
  bool pure = false;
  double fill = 0;
  explicit operator bool() const { return rowOperand >= 0 || rowExpr; }
  /// The ranges can drop keys: the ids give ranges, and keys causal or a
  /// window hide score the region's fill too (the mask value), so one fill
  /// folds every left-out key in after the loop.
  bool keysSkippable(AttentionOp op, float maskValue) const {
    return rangeable() && ((!op.getCausal() && !op.getWindow()) ||
                           maskValue == static_cast<float>(fill));
  }
  /// The redux kinds of the ids' order: (u)min and (u)max.
  NVVM::ReduxKind minKind() const {
    return zeroExtend ? NVVM::ReduxKind::UMIN : NVVM::ReduxKind::MIN;
  }
  NVVM::ReduxKind maxKind() const {
    return zeroExtend ? NVVM::ReduxKind::UMAX : NVVM::ReduxKind::MAX;
  }
};
SegmentMatch segmentMatch(AttentionOp op);
/// mma.sync blocks with one query position (M = 1) whose sorted key ids and
/// bare select with -inf make the binary-searched keys exactly those the
/// region keeps: the loop runs them alone and leaves the region out. Not
/// with pages (their copies take tile starts at multiples of the tile), nor
/// where the row's id could saturate (a key's saturated id would match it
/// without being its own).
inline bool exactSegmentKeys(const SegmentMatch &seg, int64_t M, bool paged) {
  return seg.keyMonotone && seg.pure && M == 1 && seg.rowIdsUnsaturated &&
         std::isinf(seg.fill) && seg.fill < 0 && !paged;
}
/// Decode (every query of [0, M) in one tile): where the ids are computed
/// from their positions and constants alone and the key ids never
/// decrease, the keys the tile's segment ranges leave from the first one's
/// `tile` (evaluated here, as the kernel's binary search would find them),
/// at least 1; none otherwise.
std::optional<int64_t> segmentKeySpan(AttentionOp op, const SegmentMatch &seg,
                                      int64_t M, int64_t N, int64_t tile);
/// The kernels apply a score_mod reading m or n as exact f32 sums of index
/// terms below this bound (a dynamic m or n: the manifest's index_limit).
constexpr int64_t kScoreModIndexLimit = int64_t(1) << 20;
/// Whether `op`'s score_mod reads a dynamic m or n (`sizes`: b..., m, n,
/// d, e), so that the bundle holds only below kScoreModIndexLimit.
bool scoreModNeedsIndexLimit(AttentionOp op, ArrayRef<int64_t> sizes);
/// The manifest's attention.score_mod: the body as a list of ops over value
/// ids (block arguments s, b..., m, n first; constant operands as
/// "attn.table" ops), for the launcher's reference.
FailureOr<DictionaryAttr> describeScoreMod(AttentionOp op, std::string &why);

/// Decode shapes: up to this many query rows take the mma.sync kernel with
/// 16-row warps (and split-KV when the grid would be small).
constexpr int64_t kDecodeRows = 16;
/// GQA packing puts up to this many (query head, query) rows in a block.
constexpr int64_t kPackRows = 64;
/// Split-KV by default: ranges of at least kMinSplitKeys keys, at most
/// kMaxSplits ranges (AttnToGPU.cpp, decodeSplits).
constexpr int64_t kMinSplitKeys = 256;
constexpr int64_t kMaxSplits = 256;

/// Launch shape of the tensor-core kernel.
struct MmaConfig {
  int64_t warps = 4;
  int64_t rowTiles = 1; // 16-row mma tiles per warp
  // Warps sharing each key tile: warp w takes rows of warp w % warps and
  // keys [(w / warps) * keyTile / keyWarps, ...) of every tile, with its own
  // (m, ℓ, O), merged in shared memory after the loop.
  int64_t keyWarps = 1;
  int64_t keyTile = 64;
  int64_t stages = 2;
  bool qShared = false;
  bool pipeline = false; // S of tile t + 1 issued before softmax of tile t
  int64_t rescaleThreshold = 8; // log2 units; 0: rescale every tile
  // Split-KV: grid z = splits key ranges of `chunk` keys (a whole number of
  // key tiles) from each block's first visible key; 1: none.
  int64_t splits = 1;
  int64_t chunk = 0;
  // Dynamic shapes: the split count is grid z, chosen at launch (the
  // launch rule `splits`); each block's chunk is computed from it.
  bool runtimeSplits = false;
  bool splitKV() const { return splits > 1 || runtimeSplits; }
  /// Packed documents (a segment-id region): each block's keys cut to those
  /// its rows' ids can match, found by scanning the key ids.
  bool segRanges = false;
  // GQA packing: the batch dim whose members share a block (TileKernel::
  // packDim); -1: none.
  int64_t packDim = -1;
  // Paged K/V: page size and pages of the caches (0: contiguous).
  int64_t pageSize = 0;
  int64_t pages = 0;
  // Per-sequence key counts: the batch dim kv_lens is indexed by (-1: none).
  int64_t lenDim = -1;
  /// `want` ranges over a key span of `span` keys: chunks rounded up to
  /// whole key tiles, the count then what covers the span.
  void setSplits(int64_t want, int64_t span) {
    if (want <= 1) {
      splits = 1;
      chunk = 0;
      return;
    }
    int64_t per = (span + want - 1) / want;
    chunk = (per + keyTile - 1) / keyTile * keyTile;
    splits = (span + chunk - 1) / chunk;
    if (splits <= 1) {
      splits = 1;
      chunk = 0;
    }
  }
  int64_t rowsPerBlock() const { return warps * 16 * rowTiles; }
  int64_t threads() const { return warps * keyWarps * 32; }
  int64_t keysPerWarp() const { return keyTile / keyWarps; }
  /// f32 inputs on tensor cores (mma.sync m16n8k8 TF32): 3 multiplies each
  /// product as three TF32 products of its split halves (hi*hi + hi*lo +
  /// lo*hi: f32-accurate), 1 as one TF32 product; 0: 16-bit inputs.
  int64_t tf32 = 0;
  int64_t eltBytes() const { return tf32 ? 4 : 2; }
  /// Row padding in elements: 16 bytes.
  int64_t pad() const { return 16 / eltBytes(); }
  /// Shared memory in bytes (rows padded by 16 bytes so that a warp's
  /// fragment reads spread over the banks): the K and V stage buffers, then
  /// the Q block; the output block is staged over all of them at the end.
  int64_t kBytes(int64_t D) const {
    return stages * keyTile * (D + pad()) * eltBytes();
  }
  int64_t vBytes(int64_t E) const {
    return stages * keyTile * (E + pad()) * eltBytes();
  }
  int64_t qBytes(int64_t D) const {
    return rowsPerBlock() * (D + pad()) * eltBytes();
  }
  int64_t outBytes(int64_t E) const {
    return rowsPerBlock() * (E + pad()) * eltBytes();
  }
  /// The key warps' states (m, ℓ, O per lane, f32) exchanged after the
  /// loop.
  int64_t mergeBytes(int64_t E) const {
    return keyWarps > 1 ? warps * keyWarps * 32 * rowTiles * (4 + E / 2) * 4
                        : 0;
  }
  int64_t sharedBytes(int64_t D, int64_t E) const {
    return std::max(
        {kBytes(D) + vBytes(E) + qBytes(D), outBytes(E), mergeBytes(E)});
  }
};

/// Launch shape of the Hopper (wgmma) kernel.
struct WgmmaConfig {
  int64_t warpGroups = 2; // each owns 64 query rows
  int64_t keyTile = 128;
  int64_t stages = 2;
  int64_t rescaleThreshold = 8;
  int64_t minBlocks = 0; // resident blocks ptxas leaves registers for
  bool pipeline = false; // S of tile t with P V of tile t - 1 in flight
  // One more warpgroup that only streams Q/K/V in (cp.async completing on
  // mbarriers); the others only compute, with more registers (setmaxnreg).
  bool warpSpecialized = false;
  // Warp-specialized, pipelined, two computing warpgroups: they take turns
  // issuing their wgmma (named barriers), one's softmax under the other's.
  bool pingpong = false;
  // Warp-specialized: the producer loads K and V with the tensor memory
  // accelerator (one thread, tensor maps `tmap_k`/`tmap_v` as arguments).
  bool tma = false;
  // With tma, Q by TMA too (tensor map `tmap_q`); not beside a mask tile in
  // the K/V stages (measured 0.94-1.01x there: step 61).
  bool tmaQ = false;
  // Persistent (warp-specialized, pipelined): the launch has this many
  // blocks (0: one per query tile), each running query tiles until none is
  // left: its first is its block index, the next from a global counter
  // (the workspace `tile_counter`) that its producer takes while the
  // consumers still compute, so that the next tile's Q and first K/V
  // tiles load under this one's last products and epilogue.
  // Warp-specialized, pipelined, TMA: the stage of key tile t holds K (and
  // a mask tile) of tile t and V of tile t - 1, which iteration t reads
  // together (S of t, P V of t - 1), so a stage is held for one iteration
  // and two stages prefetch a whole tile; a query tile of T key tiles
  // takes T + 1 stages (the first without V, the last V only).
  bool shiftV = false;
  // With shiftV and TMA: a 16- or 32-bit mask tile in the ring arrives by
  // TMA too (tensor map `tmap_mask`, 128-byte panels), so that one thread
  // issues every copy (producer at 40 registers) and Q loads by TMA as well.
  bool tmaMask = false;
  int64_t persistentBlocks = 0;
  bool persistent() const { return persistentBlocks > 0; }
  // The launch-shape defaults found a persistent launch faster here.
  bool wantPersistent = false;
  int64_t rowsPerBlock() const { return 64 * warpGroups; }
  int64_t consumerThreads() const { return 128 * warpGroups; }
  int64_t threads() const {
    return 128 * (warpGroups + (warpSpecialized ? 1 : 0));
  }
  /// setmaxnreg targets (multiples of 8). With setmaxnreg in the kernel,
  /// ptxas gives every thread the cap at entry (65536 registers over the
  /// block: 168 for 384 threads, 128 for 512; 255 for 256, counted as 240
  /// here, which needs no increase). The consumers can only take what the
  /// producer gives back: the block's total must not grow, or
  /// setmaxnreg.inc waits forever.
  int64_t entryRegs() const {
    return std::min<int64_t>(240, 65536 / threads() / 8 * 8);
  }
  /// A cp.async producer's 64-bit copy addressing spilled 156 bytes at 56
  /// registers (12 at 88); 88 / 208 measured 0.99-1.05x (mean +2%) the
  /// 56 / 224 split at D = 128 (docs/performance.md, log step 39); three
  /// consumer warpgroups keep 56 there. With Q, K and V by TMA one thread
  /// issues the copies: 40 / 232 (no spills at D = 128: 0.98-1.06x 88 / 208,
  /// log step 63) and, with three consumer warpgroups, 32 / 160 (log step
  /// 62).
  int64_t producerRegs() const {
    // FP8: the producer also transposes V (4 x 4-byte blocks in registers).
    // With a key trim (trims()) it also scans the mask row: 56.
    if (transposedV())
      return trims() ? 56 : transposeProducerRegs;
    if (tma && tmaQ)
      return warpGroups < 3 ? 40 : 32;
    return warpGroups < 3 ? 88 : 56;
  }
  int64_t consumerRegs() const {
    int64_t total = (warpGroups + 1) * entryRegs() - producerRegs();
    return std::min<int64_t>(240, total / warpGroups / 8 * 8);
  }
  /// Shared memory in bytes: Q, then the K and V stage buffers, unpadded
  /// (the 128-byte swizzle spreads the accesses over the banks), plus 1024
  /// bytes to align them to the swizzle pattern; the output block (rows
  /// padded by 8) is staged over them at the end.
  /// Head dims are held in whole 64-column panels (D = 96: two panels, the
  /// second half used).
  static int64_t panelCols(int64_t x) { return (x + 63) / 64 * 64; }
  /// FP8 (8-bit Q, K, V): a 128-byte panel row holds 128 elements; the
  /// layout is that of 16-bit operands with half the head dim (cols2). V
  /// arrives row-major in a staging buffer and is transposed by the
  /// producer into its stage, E rows of keys (K-major, as FP8 wgmma reads
  /// B) in panels of 128 keys (128-byte swizzle), the last one of 64 keys
  /// (64-byte swizzle) where keyTile is an odd multiple of 64.
  bool fp8 = false;
  /// TF32 (f32 Q, K, V, f32-precision=tf32): k8 wgmma on 32-bit operands,
  /// which read B K-major only too: the layout of 16-bit operands with
  /// twice the head dim (a 128-byte panel row holds 32 elements), V
  /// transposed by the producer as FP8's, E rows of keyTile keys in
  /// 32-key panels.
  bool tf32 = false;
  /// V^T in the stages, written by the producer from a staging buffer.
  bool transposedV() const { return fp8 || tf32; }
  // The producer's registers where it transposes V (FP8, TF32): 56, or 40
  // for FP8 past a head dim of 64, where its transpose addresses are made
  // per tile (no spills, consumers at 232), 72 for dynamic TF32.
  int64_t transposeProducerRegs = 56;
  int64_t cols2(int64_t x) const {
    return fp8 ? (x + 1) / 2 : tf32 ? 2 * x : x;
  }
  /// TF32, a block per query tile: each consumer thread holds its A
  /// fragments of Q (rows g and g + 8, D / 2 registers), read from global
  /// memory once; Q takes no shared memory.
  bool qInRegs = false;
  int64_t qBytes(int64_t D) const {
    return qInRegs ? 0 : rowsPerBlock() * panelCols(cols2(D)) * 2;
  }
  int64_t kBytes(int64_t D) const {
    return stages * keyTile * panelCols(cols2(D)) * 2;
  }
  /// A stage's V (FP8: V^T, whose panels of 128 keys are E * 128 bytes and
  /// a last one of 64 keys E * 64: keyTile * E bytes where E is a multiple
  /// of 128, more where rows are padded to whole panels).
  int64_t vStageBytes(int64_t E) const {
    return keyTile * panelCols(cols2(E)) * 2;
  }
  int64_t vBytes(int64_t E) const { return stages * vStageBytes(E); }
  /// FP8: V's staging buffers (two: tile t + 1's V lands while the
  /// producer transposes tile t's), each with its mbarrier.
  int64_t stagingBufs = 1;
  int64_t stagingBytes(int64_t E) const {
    return transposedV() ? stagingBufs * keyTile * panelCols(cols2(E)) * 2 : 0;
  }
  int64_t outEltBytes = 2;
  int64_t outBytes(int64_t E) const {
    return rowsPerBlock() * (E + 8) * outEltBytes;
  }
  /// The mbarriers of the warp-specialized kernel (Q full, K/V full and
  /// empty per stage) follow the buffers.
  int64_t barrierOffset(int64_t D, int64_t E) const {
    return std::max(qBytes(D) + kBytes(D) + vBytes(E) + stagingBytes(E),
                    outBytes(E));
  }
  /// FP8: the staging buffer's mbarrier, after the others.
  /// TF32: K lands on a barrier of its stage (after the staging ones),
  /// where the producer waits to round it to TF32 in place before the
  /// stage's full arrival.
  int64_t kLandedSlots() const { return tf32 ? stages : 0; }
  int64_t kLandedSlot() const { return stagingBarrierSlot() + stagingBufs; }
  int64_t stagingBarrierSlot() const {
    return 2 * stages + 1 + persistentSlots() + (trims() ? 5 : 0);
  }
  /// Persistent varlen: the producer publishes each tile's place in its
  /// sequence (first row, q/k bases, row and key limits: five i32) so that
  /// the consumers do not search the tables again.
  bool varlenSlots = false;
  /// Persistent with a runtime tile count (dynamic m or batch): the
  /// producer also publishes each tile's (query block, batch entry), one
  /// slot more (mapSlot()), so that the consumers keep no divisors of the
  /// mapping (their registers held the multipliers, which ptxas spilled
  /// and reloaded per tile beside a segment-id region). Also varlen by
  /// levels (KernelBuilder::varlenLevels).
  bool publishMap = false;
  int64_t persistentSlots() const {
    return persistent() ? (varlenSlots ? 6 : 3) + (publishMap ? 1 : 0) : 0;
  }
  int64_t mapSlot() const { return 2 * stages + persistentSlots(); }
  /// Persistent: then Q's empty barrier, the tile the consumers run next
  /// (i32) and the producer's two broadcast slots (i32 each), with varlen
  /// three more (varlenSlots); trimming the keys (trims()): each producer
  /// warp's last kept key and the published end of the key loop, five
  /// 8-byte slots.
  int64_t barrierBytes() const {
    return warpSpecialized || tma
               ? 8 * (2 * stages + 1) + 8 * persistentSlots() +
                     (trims() ? 40 : 0) +
                     (transposedV() ? 8 * (stagingBufs + kLandedSlots()) : 0) +
                     (segTrim ? 8 * kSegSlots : 0)
               : 0;
  }
  /// Segment ids (segmentMatch) with a producer warpgroup and TMA: the
  /// producer's threads find each tile's key range from the ids and
  /// publish it with Q (26 8-byte slots after the others: three rounds of
  /// its warps' reductions, 16 words each, then the range and its
  /// interior, 4 words).
  bool segTrim = false;
  static constexpr int64_t kSegSlots = 26;
  int64_t segSlot() const {
    return 2 * stages + 1 + persistentSlots() + (trims() ? 5 : 0) +
           (transposedV() ? stagingBufs + kLandedSlots() : 0);
  }
  /// A key padding mask (keyMaskTrimmable) with a producer warpgroup: its
  /// threads scan the block's mask row while Q and the first tiles load and
  /// publish the end of the key loop (past the last kept key) with Q's
  /// arrival. Not with persistent blocks.
  bool trimKeys = false;
  bool trims() const { return trimKeys && warpSpecialized && !persistent(); }
  /// A mask tensor that indexes m and n is staged in shared memory, one
  /// key tile at a time per warpgroup, when maskRowBytes > 0 (its rows:
  /// keyTile elements plus 16 bytes, so that the fragment reads of 8 rows
  /// fall in different banks); it follows the barriers, 16-byte aligned.
  /// With a producer warpgroup the mask tile is part of each K/V stage
  /// (maskInRing): the producer copies it ahead with K and V.
  int64_t maskRowBytes = 0;
  bool maskInRing() const { return warpSpecialized && maskRowBytes; }
  /// With shiftV and rows of whole 128-byte panels (maskSwizzle) the ring's
  /// mask rows are keyTile elements, unpadded, in 128-byte panels whose
  /// 16-byte chunks sit at chunk ^ (row % 8) (the fragment reads of 8 rows
  /// still fall in different banks; TMA's 128-byte swizzle).
  bool maskSwizzle = false;
  bool maskSwizzled() const { return maskSwizzle && maskInRing(); }
  /// 16-byte aligned; swizzled 1024-byte aligned (the 128-byte swizzle
  /// pattern of TMA repeats every 1024 bytes of address).
  int64_t maskAlign() const { return maskSwizzled() ? 1024 : 16; }
  int64_t maskOffset(int64_t D, int64_t E) const {
    return (barrierOffset(D, E) + barrierBytes() + maskAlign() - 1) /
           maskAlign() * maskAlign();
  }
  /// Rows of the staged mask tile: the block's, once per stage in the ring.
  int64_t maskRows() const {
    return (maskInRing() ? stages : 1) * rowsPerBlock();
  }
  int64_t maskBytes() const { return maskRows() * maskRowBytes; }
  /// A bias linear in the key index (keyLinearBias, never beside a mask
  /// tile) added by the tensor cores: one more k-step of S = Q K^T whose B
  /// is a constant panel of key positions (keyTile rows, unswizzled, after
  /// the barriers: 32 bytes a row) and whose A the per-key step. 0: the
  /// kernel adds it with one fma per score.
  bool keyPosMma = false;
  int64_t keyPosBytes() const { return keyPosMma ? keyTile * 32 : 0; }
  int64_t keyPosOffset(int64_t D, int64_t E) const {
    return (barrierOffset(D, E) + barrierBytes() + 127) / 128 * 128;
  }
  int64_t sharedBytes(int64_t D, int64_t E) const {
    return 1024 + (maskRowBytes ? maskOffset(D, E) + maskBytes()
                   : keyPosMma  ? keyPosOffset(D, E) + keyPosBytes()
                                : barrierOffset(D, E) + barrierBytes());
  }
};

/// The memref argument holding operand `name` (q, k, v, mask, sink, out),
/// or null; and that operand's indexing map.
using MemArgFn = llvm::function_ref<Value(StringRef)>;
using MapOfFn = llvm::function_ref<AffineMap(StringRef)>;

/// What the two tensor-core kernel bodies share inside the launch: the
/// operand index space (loop values, indices through the op's maps), index
/// arithmetic, and the pieces of the tile loop that do not depend on the
/// mma flavour (cp.async of tile rows, key range, score mask, quad
/// reductions, the lazy-rescale vote, the output epilogue). Values the
/// kernels compute themselves (tid, c2) are set by them, in their order.
struct TileKernel {
  KernelBuilder &kb;
  MemArgFn memArg;
  MapOfFn mapOf;
  ArrayRef<int64_t> sizes;
  unsigned r;
  int64_t threads;
  Value tid;                  // thread id in the block
  Value c2;                   // 2 * (lane % 4): first column of a fragment pair
  int64_t barrierThreads = 0; // blockBarrier: 0 the block, else named bar 1
  SmallVector<Value> loops;   // b..., m, n, d, e
  std::optional<int64_t> window;
  // Scores in natural units (S = scale Q K^T + mask, compared and
  // exponentiated as 2^(s log2 e - m log2 e)) rather than pre-scaled into
  // the exp2 domain: with a float mask tensor, a finite fill or a score_mod
  // region, whose values are natural scores (a finite fill such as
  // -0.7 * FLT_MAX would overflow to -inf once scaled, and a fully masked
  // row would average nothing instead of every key). A bool mask with the
  // -inf fill only selects -inf, and a sink is only the starting m (scaled
  // by log2 e there): both keep the exp2 domain.
  bool natural;
  int64_t queryOffset; // query m sits at key m + queryOffset
  // GQA packing (decode): batch dim `packDim` (the query-head group, which
  // K and V do not index) moves into the block's rows: row ρ is query
  // m = ρ mod M of group member ρ / M, so a kv head's K/V tiles are read
  // once for all its query heads. -1: rows are queries.
  int64_t packDim = -1;
  // Paged K/V (attn.page_gather operands): memArg("k"/"v") are caches,
  // read at page table[b_seq, n / pageSize] (clamped to the pages) and
  // slot n mod pageSize; pageSize 0: contiguous K/V.
  int64_t pageSize = 0;
  int64_t pages = 0;
  unsigned seqDim = 0;
  // The table entries of the pages a copy of K/V rows from `pageRow0`
  // spans (page pageFirst + j, clamped), read once for the K and the V
  // copy of a tile instead of once per 16-byte chunk.
  Value pageRow0, pageFirst;
  SmallVector<Value> pageEntries;
  // A chunk's page and slot when copyRows knows them (page-aligned whole
  // tiles: the entry by the chunk's static row), read by indices().
  Value pageOverride, slotOverride;
  // The page and slot of key limit - 1, which the rows of a ragged last
  // tile read (hoistLastPage: computed once, before the key loop).
  Value lastPageLimit, lastPage, lastSlot;
  // Per-sequence key counts (attn.length_mask masks): the block's keys end
  // at keyLimit (an index in [0, N]); null: at N.
  Value keyLimit;
  /// keyLimit, or N.
  Value keyEnd() { return keyLimit ? keyLimit : Nv(); }
  /// Keys left out of the loop by a segment-id range (WgmmaConfig::segTrim)
  /// score this fill (the region's): foldHiddenKeys counts them.
  std::optional<float> hiddenFill;
  /// scoreMod leaves the score_mod region out (a pure segment-id body on a
  /// tile inside one document).
  bool skipRegion = false;
  // Varlen (kb.varlenSeqs): a block runs one query tile of one packed
  // sequence; loops[r] and loops[r + 1] are positions within it. Its
  // q/out/lse rows sit at qBase + m and its K/V rows at kBase + n (clamped
  // to the tokens); its rows end at rowLimit, its keys at keyLimit, and
  // the causal rule places query m at key m + offsetV (bottom-right:
  // len_k - len_q, which may be negative). Null when not varlen.
  Value qBase, kBase, rowLimit, offsetV;
  /// The causal rule: the op's, or the varlen mask's.
  bool causal;
  /// rowLimit, or the rows the blocks cover.
  Value rowEnd() {
    return rowLimit ? rowLimit : packDim < 0 ? Mv() : idx(rowsTotal());
  }
  /// The key position of query `query` for causal and window (signed).
  Value keyPosOf(Value query) {
    return offsetV ? add(query, offsetV) : add(query, queryOffset);
  }
  /// The first query row of block `blockX` (tiles of `rows` rows):
  /// blockX * rows, or with varlen its tile's first row within its
  /// sequence (setVarlen), after which the rest of the body runs only in
  /// blocks with rows (the slots past a sequence's tiles, up to S per batch
  /// entry, exit at once instead of loading Q and a K/V prologue;
  /// block-uniform).
  Value firstRow(Value blockX, int64_t rows);
  /// The query block this block runs: grid x index `blockX`, or with causal
  /// the reverse order (the longest key ranges start first, so that short
  /// ones fill the tail of the grid). `gridDimX`: the launch's grid x,
  /// read when it is dynamic; `gridX`: the static count otherwise.
  Value queryBlock(Value blockX, Value gridDimX, int64_t gridX);
  /// Varlen: finds block `blockX`'s sequence and query tile from the
  /// tables, sets qBase, kBase, rowLimit, keyLimit and offsetV, and returns
  /// the tile's first row in its sequence. Blocks past the last tile get no
  /// rows and no keys.
  Value setVarlen(Value blockX, int64_t rows);
  /// Varlen: sets qBase, kBase, rowLimit, keyLimit and offsetV from values
  /// setVarlen made elsewhere (a persistent producer's, published).
  void setVarlen(Value q0, Value k0, Value rowsLeft, Value keysLeft);
  /// The query tiles of `rows` rows of sequences lane + 32 j (i32, one per
  /// j; 0 past S), in the calling thread's lane; entries clamped as
  /// setVarlen clamps them.
  SmallVector<Value> varlenTileCounts(int64_t rows);
  /// Varlen by levels: tile `tile` (of `rows` rows) of sequence `seq`,
  /// as setVarlen(blockX, rows) sets and returns it for a slot (no tile
  /// past the sequence's last: no rows, no keys). Where `levelOn` is set,
  /// setVarlen(blockX, rows) takes (levelSeq, levelTile) instead of its
  /// slot where levelOn holds (a block-uniform i1; a constant true: only
  /// them).
  Value setVarlenTile(Value seq, Value tile, int64_t rows);
  Value levelOn, levelSeq, levelTile;
  /// Varlen tables of at most this many sequences are searched by a warp
  /// vote (setVarlen) and can be taken by levels (varlenTileCounts).
  static constexpr int64_t kVarlenVoteSeqs = 256;

private:
  /// setVarlen by the block's slot: the sequence from the tables.
  Value setVarlenSlot(Value blockX, int64_t rows);
  /// Sets the fields for a sequence at q0/k0 of lq/lk tokens and returns
  /// tile `tile`'s first row, or no rows and keys where `found` does not
  /// hold.
  Value setVarlenFound(Value found, Value q0, Value lq, Value k0, Value lk,
                       Value tile, int64_t rows);

public:
  /// The launch body's gpu.terminator (after the varlen guard if any).
  void terminate();
  Operation *bodyGuard = nullptr;
  /// The cache page the block table names at `column` of this sequence's
  /// row, clamped to the cache's pages.
  Value pageAt(Value column);
  /// Paged K/V: the raw table entries of the pages a copy of `count` key
  /// rows from `row0` spans, as copyRows reads them up front (empty where it
  /// reads them per chunk instead). A loop may read them an iteration ahead
  /// and hand them to setPageEntries before the copy.
  SmallVector<Value> loadPageEntries(Value row0, int64_t count);
  void setPageEntries(Value row0, ValueRange entries);
  /// Paged K/V: the page and slot of key `limit` - 1 here, for copyRows'
  /// ragged last tiles (inside the key loop they would wait on the table
  /// after the barrier, every tile).
  void hoistLastPage(Value limit);

  static bool naturalScores(KernelBuilder &kb, MemArgFn memArg);
  TileKernel(KernelBuilder &kb, MemArgFn memArg, MapOfFn mapOf,
             ArrayRef<int64_t> sizes, unsigned r, int64_t threads)
      : kb(kb), memArg(memArg), mapOf(mapOf), sizes(sizes), r(r),
        threads(threads), loops(r + 4), window(kb.op.getWindow()),
        natural(naturalScores(kb, memArg)),
        queryOffset(kb.op.getQueryOffsetOrZero()),
        causal(kb.op.getCausal() || kb.varlenCausal) {}
  int64_t M() const { return sizes[r]; }
  /// Loop `d`'s size as a value: a constant, or the runtime size.
  Value size(unsigned d) {
    return kb.isDynamic(d) ? kb.dynSizes[d] : idx(sizes[d]);
  }
  Value Mv() { return size(r); }
  /// rowsTotal() as a value.
  Value rowsTotalV() { return packDim < 0 ? Mv() : idx(rowsTotal()); }
  Value Nv() { return size(r + 1); }
  /// min(row, last row) for a block row (a query, or with packing a packed
  /// row).
  Value clampRow(Value row) {
    return packDim < 0 ? clamp(row, Mv()) : clamp(row, rowsTotal());
  }
  /// Rows the blocks cover: M, or M x the group with packing.
  int64_t rowsTotal() const {
    return packDim < 0 ? M() : M() * sizes[packDim];
  }
  /// Sets loops[r] (and the group's loop with packing) for row `rho`.
  void setRow(Value rho);
  /// The query index m of row `rho` (for causal/window masks).
  Value queryOf(Value rho);
  int64_t N() const { return sizes[r + 1]; }

  Value idx(int64_t v) { return kb.cIdx(v); }
  Value add(Value x, int64_t k);
  Value add(Value x, Value y);
  Value mul(Value x, int64_t k);
  Value divu(Value x, int64_t k);
  Value remu(Value x, int64_t k);
  /// Division by a divisor 1 <= d < 2^31 computed at run time, through a
  /// multiplier made once (Granlund-Montgomery, as CUTLASS's FastDivmod):
  /// q = (umulhi(n, m) + n) >> l for n < 2^31, l = ceil(log2 d),
  /// m = floor(2^32 (2^l - d) / d) + 1. Three instructions per division
  /// instead of a division routine where it repeats (once per query tile
  /// of a persistent block). A constant d stays a plain (folded) division.
  struct FastDiv {
    Value d, m, l; // d: index; m, l: i32 (null for a constant d)
  };
  FastDiv fastDiv(Value d);
  Value divu(const FastDiv &f, Value n);
  Value remu(const FastDiv &f, Value n);
  /// min(x, hi - 1)
  Value clamp(Value x, int64_t hi);
  Value clamp(Value x, Value hi);

  /// The byte address (i64) of mem[idx] (any strided memref; a shared one
  /// gives its shared-window address); `base`: mem's aligned pointer as an
  /// index where the caller hoisted it.
  Value byteAddress(Value mem, ValueRange idx, Value base = Value());
  /// A 16-byte `cp.async.cg` from src[srcIdx] (global) to dst[dstIdx]
  /// (shared), asking L2 to fetch the surrounding 128 bytes with it
  /// (`.L2::128B`; NVVM's op has no prefetch hint, hence inline PTX). It
  /// joins the thread's next commit group as nvgpu's copies do. For K/V
  /// rows: 1.016-1.027x on the decode kernel; the staged bias tiles keep
  /// nvgpu's copies (0.91-1.02x with the hint; log step 78).
  void asyncCopy16(Value dst, ValueRange dstIdx, Value src, ValueRange srcIdx);
  /// Multipliers for setBatch's dynamic batch sizes (made once, before a
  /// persistent block's tile loop).
  void prepareBatchDivs();
  SmallVector<std::optional<FastDiv>> batchDivs;
  /// The batch dims as setBatch takes them apart, fastest first.
  SmallVector<unsigned> batchOrder();
  /// x and y combined as redux.sync's `kind` does: (u)min, (u)max, add.
  Value reduxCombine(NVVM::ReduxKind kind, Value x, Value y);
  /// Segment-id operand `operand` (segmentMatch) at loop `dim` (m or n) =
  /// `at` of the current batch entry, as i32: 64-bit ids (torch's int64)
  /// saturated, which is monotone, so a key that matches a row still lies
  /// within the rows' [min, max] of ids.
  Value segmentId(int operand, unsigned dim, Value at);
  /// The row (key: false/true) id of `seg` at position `at`: the operand
  /// read as above, or the region's computed id evaluated there.
  Value segmentId(const SegmentMatch &seg, bool key, Value at);
  /// An i32 or i64 id as i32, i64 saturated (monotone).
  Value idToI32(Value v);
  /// loops[0..r) from the flattened batch index (grid y). Batch dims the
  /// mask tensor does not index vary fastest: blocks that read the same
  /// mask slice (a bias per head, shared by the batch) then run together
  /// and share it in L2 instead of each reading it from memory.
  void setBatch(Value flat);
  /// Asks L2 for the mask rows of the key tile at n0 for the block's `rows`
  /// query rows from blockRow (one `prefetch.global.L2` per 128-byte line),
  /// a tile ahead of their loads. Only for masks that index both m and n.
  void prefetchMask(Value n0, Value blockRow, int64_t rows, int64_t tile);
  /// The mask's aligned pointer (index), and the byte address (i64) from
  /// it of the element at the current loops (byteAddress).
  Value maskBase();
  Value maskAddress(Value base);
  /// Operand `name`'s indices for the current loop values.
  SmallVector<Value> indices(StringRef name);
  /// Asynchronous 16-byte copies (asyncCopy16) of `count` rows x `width`
  /// columns of operand `name` (row loop `rowDim` from `row0`, clamped below
  /// `limit`; column loop `colDim`) into `tile` at dst(rowLocal, chunk);
  /// they join the thread's next commit group. Threads past the last chunk
  /// repeat it (same bytes to the same place).
  using DstFn = llvm::function_ref<SmallVector<Value>(Value, Value)>;
  void copyRows(StringRef name, Value tile, int64_t count, int64_t width,
                unsigned rowDim, Value row0, Value limit, unsigned colDim,
                DstFn dst);

  /// Keys the block's rows [blockRow, blockRow + rows) can see: [lb, ub).
  std::pair<Value, Value> keyRange(Value blockRow, int64_t rows);
  /// The end of the whole key tiles (of `tile` keys) from lb that every
  /// row of the block sees: they run without the per-element mask.
  Value unmaskedEnd(Value lb, Value ub, Value blockRow, int64_t tile);
  /// The key-tile loop over [lb, ub) in steps of `tile`, as two scf.for:
  /// the whole tiles every row sees up to `split` without the per-element
  /// mask, the boundary tiles after (from `maskedFrom` if given, else
  /// `split`); `body(n0, state, withMask)` yields the next state. Returns
  /// the final state.
  using TileBodyFn = llvm::function_ref<void(Value, ValueRange, bool)>;
  SmallVector<Value> tileLoops(Value lb, Value split, Value ub, int64_t tile,
                               ValueRange init, TileBodyFn body,
                               Value maskedFrom = Value());
  /// Keys that causal/window hide from every row of a block are left out
  /// of its key loop. With a finite fill they still count (each scores the
  /// fill): foldHiddenKeys adds them to the final state of each row as one
  /// more tile of `count` equal scores, exactly: m' = max(m, fill),
  /// ℓ' = α ℓ + count β, O' = α O + β Σ V over those keys, with
  /// α = e^(m - m'), β = e^(fill - m'). The sum over V is only computed in a
  /// warp where some β is not 0 (a fill within ~88 of the row max), rarely.
  /// `o[s]` holds row slot s's O values at columns eb * 8 + c2 + j in (eb, j)
  /// order; `m`, `l` its max and partial sum (natural units; both updated).
  /// No-op without
  /// a finite fill or without causal/window.
  void foldHiddenKeys(Value lb, Value ub, int64_t tile, MutableArrayRef<Value> m,
                      MutableArrayRef<Value> l,
                      MutableArrayRef<SmallVector<Value>> o, int64_t E);
  /// The score of key `col` for row `row` (a query, or with GQA packing a
  /// packed row, queryOf giving its query): the mask tensor (when there is
  /// one, on every tile: added, or an i1 mask selecting the fill) and, in a
  /// `boundary` tile, the position masks: the fill above the causal
  /// diagonal and outside the window, -inf past N (keys that do not exist).
  /// `maskElt`: the mask element, loaded ahead by loadMaskPairs (else
  /// loaded here).
  /// `colBase` + `colOffset` = `col` (a constant offset) lets the
  /// score_mod region convert key distances once per fragment row.
  Value scoreMod(Value x, Value col, Value row, bool boundary,
                 Value maskElt = Value(), Value colBase = Value(),
                 int64_t colOffset = 0);
  /// For a body whose key-linear value is under an absolute value
  /// (KernelBuilder::scoreModKeyAbs): that value's sign over keys n0 ..
  /// n0 + keys - 1 of `row` (f32 +1 or -1, into `sign`), and whether it
  /// changes sign there (i1: then the row needs the whole body per score).
  Value keyAbsSign(Value n0, Value row, int64_t keys, Value &sign);
  /// The mask tensor's elements at (row, col) and (row, col + 1) for each
  /// (row, col) (col even), in that order; empty without a mask tensor.
  /// Issued before the S product so that their latency hides under it; one
  /// 2-element load each where the mask is contiguous along n and aligned.
  /// `packed`: each aligned pair stays one 2-element vector (a register to
  /// carry across a loop), for unpackMask to split where it is used.
  SmallVector<Value> loadMaskPairs(ArrayRef<std::pair<Value, Value>> rowCol,
                                   bool boundary, bool packed = false);
  /// loadMaskPairs(..., packed = true)'s values as one element each.
  SmallVector<Value> unpackMask(ArrayRef<Value> vals);
  /// The last key the block's mask row keeps (i32, -1 if none; N - 1 where
  /// the row is not 16-byte aligned), over this thread's part of the row
  /// (`threads` threads from `tid`, 16-byte loads, four in flight) and then
  /// the warp (keyMaskTrimmable masks). `between` is emitted after the
  /// first loads are issued (copies that should queue behind them).
  Value lastKeptKey(llvm::function_ref<void()> between = {});
  /// The running (m, ℓ) a row starts from: (-inf, 0), or with a sink
  /// (sink, 1) (ℓ on the first lane of the quad only, since the lanes'
  /// partial sums are added at the end). Natural units.
  std::pair<Value, Value> initialState(Value row);
  /// Sum or max over each group of `lanes` adjacent lanes (a power of two
  /// up to 32), by xor shuffles.
  Value laneReduce(Value x, bool isMax, int64_t lanes);
  /// Sum or max over the 4 lanes (a quad) holding one fragment row.
  Value quadReduce(Value x, bool isMax) { return laneReduce(x, isMax, 4); }
  /// 2^x (ex2.approx; -inf gives 0).
  Value ex2(Value x);
  /// Natural scores with the -inf fill: P = 2^(s log2 e - m log2 e) in one
  /// fma, as the exp2-domain kernel's exponent. Not where m log2 e could
  /// overflow: a finite fill, or a bf16/f32 bias (finfo.min over a whole
  /// row); an f16 bias stays within 65504.
  bool fmaExponent() const;
  /// Whether the kernel takes a score_mod bias linear in the key index
  /// apart (KernelBuilder::scoreModKeyLinear): natural scores with the one-fma
  /// exponent, no float mask tensor, a static positive scale.
  bool keyLinearBias() const { return keyLinearBiasFor(kb, memArg); }
  static bool keyLinearBiasFor(KernelBuilder &kb, MemArgFn memArg) {
    // A region makes the scores natural; the one-fma exponent then needs
    // the -inf fill. A mask tensor only if boolean: it selects -inf after
    // the region, in any units (a float bias would be added to the
    // unscaled t).
    Value mask = memArg("mask");
    return kb.op.hasScoreMod() && std::isinf(kb.maskValue) && kb.scale > 0 &&
           !kb.runtimeScale &&
           (!mask ||
            cast<MemRefType>(mask.getType()).getElementType().isInteger(1)) &&
           kb.scoreModKeyLinear();
  }
  /// 2^(x - ref) for row maxima x, ref in the scores' units: with
  /// fmaExponent() from the same rounded products m log2 e that P's
  /// exponents subtract, so that the rescale α and P agree exactly.
  Value expDiff(Value x, Value ref);
  /// Fast-math flags of the score's scale multiply (natural units): it may
  /// contract with a bias add into one fma (and reassociate in a region).
  arith::FastMathFlags scaleFlags() const {
    return kb.op.hasScoreMod()
               ? arith::FastMathFlags::contract | arith::FastMathFlags::reassoc
               : arith::FastMathFlags::contract;
  }
  /// Lazy rescaling's test, warp-uniform: did some row's tile maximum
  /// exceed its reference m by more than 2^threshold (threshold in log2
  /// units; converted when the scores are natural)?
  Value anyRowGrew(ArrayRef<Value> tileMax, ArrayRef<Value> m,
                   int64_t threshold);

  /// A barrier over the block, or over the first `barrierThreads` threads
  /// (named barrier 1) when only those take part.
  void blockBarrier();
  /// Whether the output block can leave through shared memory (e is the
  /// output's innermost dim): then the caller waits for the last copies,
  /// places a barrier and passes a shared view to storeOutput.
  bool outputStaged();
  /// One divide per row, then the output. Row slot s holds the partial
  /// row sum l[s] (reduced over the quad here), query row rows[s], and
  /// O values oAt(s, eb, j) at columns eb * 8 + c2 + j. With `oTile` (a
  /// [rows x E + 8] shared view, the caller's barrier done) the block is
  /// staged there and leaves with 16-byte stores; otherwise element by
  /// element. Rows past M are not stored.
  /// With an lse result, `m` holds row slot s's running max (the
  /// reference its l and O are relative to; in log2 units when `mLog2`,
  /// the scale folded in) and the first lane of each quad writes
  /// lse = m + log l (natural log; -inf where l = 0).
  /// `writer` (warp-uniform, optional): whether this warp stores its rows
  /// (warps holding the same rows, as key warps do after their merge,
  /// store once).
  void storeOutput(Value oTile, int64_t rowsPerBlock, int64_t E, Value blockRow,
                   ArrayRef<Value> l, ArrayRef<Value> rows,
                   llvm::function_ref<Value(int64_t)> rowLocalAt,
                   llvm::function_ref<Value(int64_t, int64_t, int64_t)> oAt,
                   ArrayRef<Value> m = {}, bool mLog2 = false,
                   Value writer = Value());
};

/// Split-KV's epilogue (SplitKV.cpp), in place of storeOutput: the block
/// writes its key range's normalized partial O (f32) and its (m, ℓ) to the
/// workspace (o_part[z, flat, m, e], ml_part[z, flat, m, 2]; m in log2
/// units when `mLog2`), counts itself done on locks[flat, blockX]; the
/// last of the tile's `splits` blocks (or, mergeSlices > 1, the last K, a
/// slice of rows each) merges all partials exactly (weights
/// ℓ_z e^(m_z - max m), fully masked ranges weigh 0), writes out (and
/// lse), and resets the counter.
/// Arguments as storeOutput's (`writer`: which warps store the partial);
/// `smem` is the block's dynamic shared memory of `smemBytes` bytes (its
/// first 4 bytes carry the "last" flag; the merge may stage its statistics
/// after them), `z` the split index.
void storePartialAndMerge(
    TileKernel &tk, Value smem, Value z, Value flat, Value blockX,
    Value blockRow, int64_t rowsPerBlock, int64_t E, ArrayRef<Value> l,
    ArrayRef<Value> m, ArrayRef<Value> rows,
    llvm::function_ref<Value(int64_t, int64_t, int64_t)> oAt, bool mLog2,
    Value writer = Value(), int64_t smemBytes = 0);

/// How many blocks of a split query tile share its merge, a slice of the
/// tile's rows each (SplitKV.cpp): 1 (the last block merges them all) or,
/// where the merge takes four or more rounds of the block's `threads` over
/// (row, 4 columns) tasks and reads 64 KB or more, 4 to 8 (the last blocks
/// to finish; the kernel must count each block started first,
/// countSplitStarted). `splits` may be ShapedType::kDynamic (chosen at
/// launch): then the slices are shared from minSlicedSplits ranges at run
/// time, and the last block runs them all below.
int64_t mergeSlices(int64_t splits, int64_t rowsPerBlock, int64_t rowsTotal,
                    int64_t E, int64_t threads);
/// The fewest ranges whose merge of `rows` rows is shared by K blocks.
int64_t minSlicedSplits(int64_t rows, int64_t E, int64_t K);
/// Counts the block started on its query tile's counter (locks[flat,
/// blockX]) where mergeSlices > 1: a block waits on the blocks of its tile
/// only once all have started. `when`: an extra condition (i1), if any.
void countSplitStarted(TileKernel &tk, Value flat, Value blockX,
                       Value when = Value());

/// Whether the tensor-core kernel handles this attention (f16/bf16 inputs
/// and output of one type, or f32 throughout as TF32 unless `tf32` is 0;
/// rows contiguous along d / e; D and E multiples of 16, of 8 for f32, up
/// to 256).
bool mmaEligible(AttentionOp op, MapOfFn mapOf, int64_t D, int64_t E,
                 int64_t tf32 = 3);
/// Why not (for remarks); empty when eligible.
std::string mmaIneligibility(AttentionOp op, MapOfFn mapOf, int64_t D,
                             int64_t E, int64_t tf32 = 3);
/// Q and K contiguous along d and V along e (the tensor-core kernels read
/// their rows 16 bytes at a time).
bool headDimsContiguous(AttentionOp op, MapOfFn mapOf);

/// Emits the gpu.launch of the tensor-core kernel (and the host return) at
/// the builder's insertion point. `sizes` are the loop sizes (b..., m, n, d,
/// e), `r` the number of batch dims, `batch` their product.
void buildMmaKernel(KernelBuilder &kb, MemArgFn memArg, MapOfFn mapOf,
                    ArrayRef<int64_t> sizes, unsigned r, int64_t batch,
                    const MmaConfig &cfg);

/// Whether the wgmma kernel handles it: mmaEligible (D, E multiples of 16
/// up to 256), FP8, or f32 as TF32 where `tf32` is 1 (D, E multiples of 32
/// up to 128).
bool wgmmaEligible(AttentionOp op, MapOfFn mapOf, int64_t D, int64_t E,
                   int64_t tf32 = 3);
std::string wgmmaIneligibility(AttentionOp op, MapOfFn mapOf, int64_t D,
                               int64_t E, int64_t tf32 = 3);

/// Why the warp-specialized kernel could not load Q/K/V by TMA ("" if it
/// can): Q/K/V of rank <= 5 with the head dim last
/// and rows of a multiple of 16 bytes.
std::string tmaIneligibility(AttentionOp op, MapOfFn mapOf);

/// Bytes per staged row of the mask (WgmmaConfig::maskRowBytes) for key
/// tiles of `keyTile`, or 0 when the mask is read from global memory: a
/// float mask that indexes m and n, contiguous along n, whose rows and tiles
/// start 16-byte aligned (N and keyTile multiples of 16 bytes, no window).
int64_t wgmmaMaskRowBytes(AttentionOp op, int64_t N, int64_t keyTile);

/// A bool mask over the keys only (no query dim; contiguous along n, in rows
/// of 16-byte multiples, static shape) with the -inf fill and no window:
/// keys past the last one it keeps can be dropped from the key loop
/// (TileKernel::lastKeptKey).
bool keyMaskTrimmable(AttentionOp op, float maskValue);

/// Emits the gpu.launch of the Hopper kernel (wgmma, sm_90a), as
/// buildMmaKernel.
void buildWgmmaKernel(KernelBuilder &kb, MemArgFn memArg, MapOfFn mapOf,
                      ArrayRef<int64_t> sizes, unsigned r, int64_t batch,
                      const WgmmaConfig &cfg);

/// Emits the gpu.launch of the SIMT kernel: `kb.threads` query rows per
/// block, one per thread, grid (gridX, batch).
void buildSimtKernel(KernelBuilder &kb, MemArgFn memArg, MapOfFn mapOf,
                     ArrayRef<int64_t> sizes, unsigned r, int64_t gridX,
                     int64_t batch);

} // namespace mlir::attn::gpu_kernel

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELBUILDER_H
