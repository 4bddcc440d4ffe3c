//===- WgmmaKernel.cpp - the Hopper (sm_90a) attention kernel -------------===//
//
// Block: `warpGroups` warpgroups of 4 warps, each owning 64 query rows
// (tile-q = 64 * warpGroups). Per key tile of tile-kv keys:
//   S = Q K^T   D/16 wgmma m64n{tile-kv}k16, Q and K read by the tensor
//               cores from shared memory through matrix descriptors
//   masked keys -> -inf (boundary tiles only); online softmax in the exp2
//               domain exactly as the mma.sync kernel (quad shuffles, lazy
//               rescaling of O and ℓ, one divide per row at the end)
//   O += P V    tile-kv/16 wgmma m64n{E}k16, P from registers (the S
//               accumulators re-packed as 16-bit pairs), V from shared
//               memory read transposed (MN-major descriptor)
// Q, K and V live in shared memory in the 128-byte-swizzle layout the
// descriptors name: each 64-column panel is rows of 128 bytes whose 16-byte
// chunks are permuted by chunk ^ (row % 8), in 1024-byte atoms of 8 rows.
// K/V tiles stream through `stages` buffers, one barrier per tile: by TMA
// (tma: thread 0 issues Q's box and each K/V tile's boxes a tile ahead onto
// per-stage mbarriers that every thread then waits on), or with cp.async
// (one group per tile; pipelined loops and staged mask tiles), whose
// writers fence the async proxy before the barrier because the tensor
// cores read through it. Every wgmma batch is
// committed and waited for before its accumulators are used; the waits pass
// the accumulators through so that no use is scheduled above them.
//
// FP8 (cfg.fp8: e4m3/e5m2 Q, K, V; warp-specialized with TMA only): Q K^T
// is k32 wgmma on the 16-bit layout at half the head dim (a 128-byte panel
// row holds 128 elements); P is rounded to e4m3 four values per register;
// FP8 wgmma reads B K-major only, so V arrives row-major in a staging
// buffer and the producer warpgroup writes V^T into the stage (byte
// permutes of 4 x 4-byte blocks, each 32 keys in the order P's A fragments
// hold them), fences the async proxy and arrives on the stage's full
// barrier beside K's TMA bytes.
//
// Warp-specialized (warp-specialize=1): one more warpgroup only copies Q and
// the K/V tiles (cp.async, arriving on per-stage mbarriers as they land)
// with few registers, and the computing warpgroups wait on those barriers
// instead of block barriers, with the registers the producer gave back
// (setmaxnreg); they free a stage by arriving on its empty barrier. With
// tma=1 one producer thread loads Q, K and V by cp.async.bulk.tensor.
//
// Persistent (persistent=1, warp-specialized and pipelined): the launch
// has at most one block per multiprocessor, and each runs query tiles
// until a global counter (the workspace tile_counter) is past the last.
// Q gets an empty barrier too: the producer loads the next tile's first
// K/V tile, then (once the consumers' last S product of this tile is done)
// its Q, and passes the tile's number through shared memory with Q's full
// barrier; the K/V stages and their phases run on across tiles. The
// output leaves from registers (16-byte groups after quad shuffles), as
// the buffers already hold the next tile.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>
#include <limits>
#include <tuple>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

std::string gpu_kernel::wgmmaIneligibility(AttentionOp op, MapOfFn mapOf,
                                           int64_t D, int64_t E, int64_t tf32) {
  if (isFloat8(op.getQuery().getType())) {
    // FP8: k32 steps; V^T rows are E, the A fragments 32 keys. A mask
    // tensor is read into the score fragments a tile ahead, never staged
    // (the producer's stage arrivals are V^T's).
    Type out = op.getInit().getType().getElementType();
    if (!out.isF16() && !out.isBF16())
      return "an FP8 attention writes f16 or bf16 here (the output is " +
             std::string(out.isF32() ? "f32" : "other") + ")";
    if (D % 32 != 0 || E % 32 != 0 || D > 256 || E > 256)
      return "FP8 takes D and E multiples of 32 up to 256 (D = " +
             std::to_string(D) + ", E = " + std::to_string(E) + ")";
    if (!headDimsContiguous(op, mapOf))
      return "q, k or v is not contiguous along its head dim";
    return "";
  }
  std::string why = mmaIneligibility(op, mapOf, D, E, tf32);
  if (!why.empty())
    return why;
  if (op.getQuery().getType().getElementType().isF32()) {
    // TF32: k8 steps on 32-bit operands, V^T written by the producer (as
    // FP8's); Q, two K/V stages and V's staging buffer fit to D = 128.
    if (tf32 != 1)
      return "q is f32 and f32-precision=3xtf32 (the split products run on "
             "mma.sync; f32-precision=tf32 takes wgmma)";
    if (D % 32 != 0 || E % 32 != 0 || D > 128 || E > 128)
      return "TF32 on wgmma takes D and E multiples of 32 up to 128 (D = " +
             std::to_string(D) + ", E = " + std::to_string(E) + ")";
  }
  // Head dims live in 64-column swizzled panels (the last one partly
  // used); S = Q K^T takes D / 16 k-steps and P V is one m64nEk16 wgmma per
  // 16 keys, so any multiple of 16 up to 256 works (mmaIneligibility).
  return "";
}

std::string gpu_kernel::tmaIneligibility(AttentionOp op, MapOfFn mapOf) {
  // Dynamic shapes too: the loader encodes each call's sizes. Varlen too:
  // the boxes start at the sequence's packed row (TileKernel::indices);
  // rows past its end belong to the next sequence and are masked like a
  // ragged tile's, rows past T arrive as zeros.
  unsigned r = op.getNumBatchDims();
  for (auto [name, tensor, inner] :
       {std::tuple{StringRef("q"), op.getQuery(), r + 2},
        std::tuple{StringRef("k"), op.getKey(), r + 2},
        std::tuple{StringRef("v"), op.getValue(), r + 3}}) {
    auto t = cast<RankedTensorType>(tensor.getType());
    AffineMap map = mapOf(name);
    // Tensor maps have at most 5 dims; the box's 64 columns run along the
    // contiguous (last) dim, which must be d (e for V).
    if (t.getRank() > 5)
      return (name + " has rank " + Twine(t.getRank()) +
              "; tensor maps take at most 5 dims")
          .str();
    if (cast<AffineDimExpr>(map.getResults().back()).getPosition() != inner)
      return (name + "'s contiguous dim is not its head dim").str();
    // Row strides (bytes) must be multiples of 16.
    if (t.getShape().back() * t.getElementTypeBitWidth() / 8 % 16 != 0)
      return (name + "'s rows are not a multiple of 16 bytes").str();
  }
  return "";
}

int64_t gpu_kernel::wgmmaMaskRowBytes(AttentionOp op, int64_t N,
                                      int64_t keyTile) {
  // A dynamic N: the rows' alignment is not known.
  if (!op.getMask() || op.getWindow() || ShapedType::isDynamic(N))
    return 0;
  Type elt = op.getMask().getType().getElementType();
  if (!isa<FloatType>(elt))
    return 0;
  unsigned r = op.getNumBatchDims();
  AffineMap map = op.getMaskMap();
  if (!map.isFunctionOfDim(r) ||
      cast<AffineDimExpr>(map.getResults().back()).getPosition() != r + 1)
    return 0;
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  if ((N * eltBytes) % 16 != 0 || (keyTile * eltBytes) % 16 != 0)
    return 0;
  return keyTile * eltBytes + 16;
}

bool gpu_kernel::keyMaskTrimmable(AttentionOp op, float maskValue) {
  if (!op.getMask() || op.getWindow() || !std::isinf(maskValue) ||
      maskValue > 0)
    return false;
  auto type = cast<ShapedType>(op.getMask().getType());
  if (auto memref = dyn_cast<MemRefType>(type))
    if (!memref.getLayout().isIdentity())
      return false;
  unsigned r = op.getNumBatchDims();
  AffineMap map = op.getMaskMap();
  if (!type.getElementType().isInteger(1) || !type.hasStaticShape() ||
      map.getNumResults() == 0 || map.isFunctionOfDim(r))
    return false;
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  return last && last.getPosition() == r + 1 &&
         type.getShape().back() % 16 == 0;
}

bool gpu_kernel::wgmmaEligible(AttentionOp op, MapOfFn mapOf, int64_t D,
                               int64_t E, int64_t tf32) {
  return wgmmaIneligibility(op, mapOf, D, E, tf32).empty();
}

namespace {
/// Inline-asm emission for the wgmma instructions and their ordering.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }

  /// One inline-asm statement with side effects. `outs` f32 results, and
  /// `tied` inputs bound to those results (read-modify-write registers).
  SmallVector<Value> asmCall(StringRef text, ArrayRef<Value> inputs,
                             StringRef inConstraints, ArrayRef<Value> tied,
                             StringRef outConstraint, size_t outs) {
    // An empty outConstraint: "f" or "r" by the tied value's type.
    std::string constraints;
    for (size_t i = 0; i < outs; ++i) {
      std::string c = outConstraint.str();
      if (c.empty())
        c = tied[i].getType().isF32() ? "f" : "r";
      constraints += (i ? ",=" : "=") + c;
    }
    if (!inConstraints.empty())
      constraints += (outs ? "," : "") + inConstraints.str();
    for (size_t i = 0; i < tied.size(); ++i)
      constraints += "," + std::to_string(i);
    SmallVector<Value> operands(inputs);
    llvm::append_range(operands, tied);
    SmallVector<Type> types;
    for (size_t i = 0; i < outs; ++i)
      types.push_back(tied.empty() ? b.getF32Type() : tied[i].getType());
    Type resType =
        outs == 0   ? LLVM::LLVMVoidType::get(b.getContext())
        : outs == 1 ? types[0]
                    : LLVM::LLVMStructType::getLiteral(b.getContext(), types);
    auto op = LLVM::InlineAsmOp::create(
        b, loc, resType, operands, text, constraints,
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    SmallVector<Value> res;
    if (outs == 1)
      res.push_back(op.getResult(0));
    else
      for (size_t i = 0; i < outs; ++i)
        res.push_back(LLVM::ExtractValueOp::create(
            b, loc, op.getResult(0), ArrayRef<int64_t>{(int64_t)i}));
    return res;
  }
  /// One inline-asm statement with side effects and one i32 result ($0).
  Value asmI32(StringRef text, ArrayRef<Value> inputs,
               StringRef inConstraints) {
    std::string constraints = "=r";
    if (!inConstraints.empty())
      constraints += "," + inConstraints.str();
    return LLVM::InlineAsmOp::create(
               b, loc, b.getI32Type(), inputs, text, constraints,
               /*has_side_effects=*/true, /*is_align_stack=*/false,
               LLVM::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               ArrayAttr())
        .getResult(0);
  }
  /// `text` on the accumulator registers `acc` (f32 or i32), returned as
  /// new values: an ordering point that code using them cannot cross.
  SmallVector<Value> through(StringRef text, ArrayRef<Value> acc) {
    if (acc.empty()) {
      asmCall(text, {}, "", {}, "", 0);
      return {};
    }
    return asmCall(text, {}, "", acc, "", acc.size());
  }
};

/// The warp-specialized kernel's mbarriers, 8 bytes each after the
/// buffers: slot 0 is Q's (full), slot 1 + s stage s's full one, slot
/// 1 + S + s its empty one. Full barriers count the producer's 128 threads
/// (`fullCount` for a stage's: 1, the TMA thread's expect-tx arrival, or
/// 129 with a mask tile that the 128 copy with cp.async beside it), empty
/// ones the consumers'. The two-block kernel with TMA uses Q's and the
/// full ones (thread 0's expect-tx arrivals); its empty ones stay unused.
struct StageBarriers {
  Emitter &em;
  TileKernel &tk;
  Value base; // i32 shared-memory address of slot 0
  Value zero; // index 0
  int64_t stages;
  bool persistent = false;
  int64_t qCount = 128; // Q full's arrivals
  int64_t extraSlot = -1; // FP8's staging barriers (one arrival), if set
  int64_t extraSlots = 1;

  Value q() { return zero; }
  /// Persistent: Q's buffer is free again (the consumers' threads arrive).
  Value qEmpty() { return tk.idx(1 + 2 * stages); }
  Value full(Value stage) { return tk.add(stage, 1); }
  Value empty(Value stage) { return tk.add(stage, 1 + stages); }
  Value addr(Value slot) {
    OpBuilder &b = em.b;
    return arith::AddIOp::create(
        b, em.loc, base,
        arith::MulIOp::create(
            b, em.loc,
            arith::IndexCastOp::create(b, em.loc, b.getI32Type(), slot),
            em.i32(8)));
  }
  /// Thread 0 initializes every slot; the caller then places a barrier.
  /// Persistent: Q's full barrier also counts thread 0's arrival after it
  /// wrote the tile number.
  void init(Value tid, int64_t consumers, int64_t fullCount) {
    OpBuilder &b = em.b;
    Value first =
        arith::CmpIOp::create(b, em.loc, arith::CmpIPredicate::eq, tid, zero);
    auto ifOp = scf::IfOp::create(b, em.loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    for (int64_t slot = 0; slot < 1 + 2 * stages + (persistent ? 1 : 0);
         ++slot)
      em.asmCall("mbarrier.init.shared::cta.b64 [$0], $1;",
                 {addr(tk.idx(slot)),
                  em.i32(slot == 0        ? qCount
                         : slot <= stages ? fullCount
                                          : consumers)},
                 "r,r", {}, "", 0);
    for (int64_t i = 0; extraSlot >= 0 && i < extraSlots; ++i)
      em.asmCall("mbarrier.init.shared::cta.b64 [$0], $1;",
                 {addr(tk.idx(extraSlot + i)), em.i32(1)}, "r,r", {}, "", 0);
  }
  /// Arrives once this thread's cp.async copies so far have landed.
  void arriveOnCopies(Value slot) {
    em.asmCall("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];",
               {addr(slot)}, "r", {}, "", 0);
  }
  /// Arrives and expects `bytes` more from the copy engine (TMA) this phase.
  void arriveExpectTx(Value slot, int64_t bytes) {
    arriveExpectTx(slot, em.i32(bytes));
  }
  void arriveExpectTx(Value slot, Value bytes) {
    em.asmCall("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 "
               "st, [$0], $1;\n}",
               {addr(slot), bytes}, "r,r", {}, "", 0);
  }
  void arrive(Value slot) {
    em.asmCall("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [$0];\n}",
               {addr(slot)}, "r", {}, "", 0);
  }
  /// Spins until the phase of parity `parity` (index 0/1) has completed.
  void wait(Value slot, Value parity) {
    OpBuilder &b = em.b;
    Location loc = em.loc;
    Value a = addr(slot);
    Value par = arith::IndexCastOp::create(b, loc, b.getI32Type(), parity);
    auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
    Value done = em.asmI32(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, "
        "[$1], $2;\nselp.u32 $0, 1, 0, p;\n}",
        {a, par}, "r,r");
    Value again = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, done,
                                        em.i32(0));
    scf::ConditionOp::create(b, loc, again, ValueRange{});
    b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
    scf::YieldOp::create(b, loc);
  }
};

/// "{$first, ..., $(first + n - 1)}"
std::string regList(size_t first, size_t n) {
  std::string s = "{";
  for (size_t i = 0; i < n; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + "}";
}
} // namespace

void gpu_kernel::buildWgmmaKernel(KernelBuilder &kb, MemArgFn memArg,
                                  MapOfFn mapOf, ArrayRef<int64_t> sizes,
                                  unsigned r, int64_t batch,
                                  const WgmmaConfig &cfg) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AttentionOp op = kb.op;
  Emitter em{b, loc};
  TileKernel tk(kb, memArg, mapOf, sizes, r, cfg.threads());
  const int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2],
                E = sizes[r + 3];
  const int64_t BN = cfg.keyTile, S = cfg.stages;
  const int64_t BM = cfg.rowsPerBlock(), T = cfg.threads();
  const int64_t gridX = kb.queryBlocks(M, BM);
  const int64_t sRegs = BN / 2, oRegs = E / 2;
  Type elt = op.getQuery().getType().getElementType();
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  Value outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();
  // FP8 (cfg.fp8): k32 wgmma on 8-bit operands, B always K-major.
  // TF32 (cfg.tf32): k8 wgmma on f32 operands (the tensor cores read
  // their top 19 bits), B K-major as FP8's.
  const bool fp8 = cfg.fp8, tf32 = cfg.tf32, vT = cfg.transposedV();
  MLIRContext *ctx = b.getContext();
  // Packed documents: the key operand's ids bound each tile's keys; the
  // keys left out score the region's fill.
  const SegmentMatch seg = cfg.segTrim ? segmentMatch(op) : SegmentMatch();
  if (cfg.segTrim)
    tk.hiddenFill = static_cast<float>(seg.fill);
  std::string ty = fp8    ? (isa<Float8E4M3FNType>(elt) ? "e4m3" : "e5m2")
                   : tf32 ? "tf32"
                   : elt.isF16() ? "f16"
                                 : "bf16";
  // Elements per wgmma k-step: 32 bytes of each row.
  const int64_t kStep = fp8 ? 32 : tf32 ? 8 : 16;

  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // Panels of 64 columns (128 bytes per row), swizzled; with FP8 in 16-bit
  // units (a panel row is 128 elements).
  const int64_t Dp = WgmmaConfig::panelCols(cfg.cols2(D)),
                Ep = WgmmaConfig::panelCols(cfg.cols2(E));
  auto qType = MemRefType::get({Dp / 64, BM, 64}, elt, AffineMap(), workgroup);
  auto kType =
      MemRefType::get({S, Dp / 64, BN, 64}, elt, AffineMap(), workgroup);
  auto vType =
      MemRefType::get({S, Ep / 64, BN, 64}, elt, AffineMap(), workgroup);
  const int64_t outPad = 8;
  auto oType =
      MemRefType::get({BM, E + outPad}, outElt, AffineMap(), workgroup);
  const int64_t qOff = 0, kOff = cfg.qBytes(D), vOff = kOff + cfg.kBytes(D),
                stageOff = vOff + cfg.vBytes(E);

  Value c1 = tk.idx(1);
  Value dynBytes = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(cfg.sharedBytes(D, E)));
  const bool persistent = cfg.persistent();
  // Persistent with a dynamic m or batch: as many blocks as tiles, at most
  // persistentBlocks, counted at launch.
  const bool dynTiles = persistent && (kb.dynGridX || kb.dynBatch);
  Value launchX = !persistent ? kb.gridX(gridX)
                  : dynTiles
                      ? arith::MinUIOp::create(
                            b, loc,
                            arith::MulIOp::create(b, loc, kb.gridX(gridX),
                                                  kb.gridY(batch)),
                            tk.idx(cfg.persistentBlocks))
                            .getResult()
                      : tk.idx(cfg.persistentBlocks);
  auto launch = gpu::LaunchOp::create(
      b, loc, launchX, persistent ? c1 : kb.gridY(batch), c1, tk.idx(T), c1,
      c1, dynBytes);
  func::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  auto smemOp = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  Value smem = smemOp;
  // The swizzle pattern repeats every 1024 bytes of address: the buffers
  // start at the first 1024-aligned byte (sharedBytes has the slack).
  // Segment-id (document, chunk) ranges in a persistent block over a
  // runtime tile count: attn-gpu-align-shared declares the memory
  // 1024-aligned, so the pad below folds to 0 instead of living in a
  // register through the kernel (ptxas spilled it in the consumers; those
  // kernels 1.00-1.03x). Elsewhere the fold measured 0.99-1.00x (static and
  // plain dynamic kernels) and 0.94-0.98x (a dynamic per-key bias: ptxas
  // then spilled other values), so they keep their code (log step 191).
  if (dynTiles && cfg.segTrim)
    smemOp->setAttr("attn.align", b.getI64IntegerAttr(1024));
  Value rawBase = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  Value pad = tk.remu(
      arith::SubIOp::create(b, loc, tk.idx(1024), tk.remu(rawBase, 1024)),
      1024);
  Value base = tk.add(rawBase, pad);
  auto view = [&](MemRefType t, int64_t offset) -> Value {
    return memref::ViewOp::create(b, loc, t, smem, tk.add(pad, offset),
                                  ValueRange{});
  };
  Value qTile = view(qType, qOff);
  Value kTile = view(kType, kOff);
  Value vTile = view(vType, vOff);
  // The staged mask tile (WgmmaConfig::maskRowBytes): each warpgroup's 64
  // rows of the current key tile.
  const bool stagedMask = cfg.maskRowBytes > 0;
  Value maskTile;
  Type maskElt;
  int64_t maskEltBytes = 0;
  if (stagedMask) {
    maskElt = cast<MemRefType>(memArg("mask").getType()).getElementType();
    maskEltBytes = maskElt.getIntOrFloatBitWidth() / 8;
    // Swizzled (maskSwizzled): 128-byte panel rows, panel-major per stage.
    const int64_t panels = cfg.maskSwizzled() ? cfg.maskRowBytes / 128 : 1;
    maskTile = view(MemRefType::get({cfg.maskRows() * panels,
                                     cfg.maskRowBytes / panels / maskEltBytes},
                                    maskElt, AffineMap(), workgroup),
                    cfg.maskOffset(D, E));
  }

  // Persistent: the query tiles (gridXv per batch entry, tilesV in all) and
  // the blocks, as values (runtime ones with dynamic sizes).
  Value gridXv, batchV, tilesV, blocksV;
  if (persistent && !dynTiles) {
    gridXv = tk.idx(gridX);
    batchV = tk.idx(batch);
    tilesV = tk.idx(gridX * batch);
    blocksV = tk.idx(cfg.persistentBlocks);
  } else if (persistent) {
    memArg("q"); // the views (and runtime sizes) first, in argument order
    // Varlen: floor(T / BM) + S tile slots (TileKernel::setVarlen).
    gridXv = !kb.dynGridX ? tk.idx(gridX)
             : kb.varlenSeqs
                 ? tk.add(tk.divu(tk.Mv(), BM), kb.varlenSeqs)
                 : arith::CeilDivUIOp::create(b, loc, tk.Mv(), tk.idx(BM))
                       .getResult();
    batchV = tk.idx(1);
    for (unsigned i = 0; i < r; ++i)
      batchV = arith::MulIOp::create(b, loc, batchV, tk.size(i));
    tilesV = arith::MulIOp::create(b, loc, gridXv, batchV);
    blocksV = launch.getGridSize().x;
  }

  Value tid = launch.getThreadIds().x;
  tk.tid = tid;
  Value c0 = tk.idx(0);
  Value wg = tk.divu(tid, 128);
  Value warpInWg = tk.remu(tk.divu(tid, 32), 4);
  Value lane = tk.remu(tid, 32);
  Value g = tk.divu(lane, 4);
  Value c2 = tk.mul(tk.remu(lane, 4), 2);
  tk.c2 = c2;

  // The key-linear bias on the tensor cores (cfg.keyPosMma): the B panel
  // of one more k-step of S (m64nBNk16), written once per block,
  // unswizzled: 8-row core matrices of 16-byte rows, columns 0-7 of key row
  // j at 16 j (j in columns 0-3, zeros in 4-7), columns 8-15 (zeros) BN * 16
  // bytes on. With A (enterKeyPos) holding the per-key step c X / scale
  // split into four parts in columns 0-3, the step adds step * j, j the
  // key's column in its tile. In bf16 whatever Q and K are (the product
  // accumulates into the same f32 registers): its range is f32's, so no
  // step overflows where the fma's would not, and j < 256 is exact.
  const bool keyPosMma = cfg.keyPosMma;
  const int64_t keyPosOff = keyPosMma ? cfg.keyPosOffset(D, E) : 0;
  Type bf16 = b.getBF16Type();
  if (keyPosMma) {
    Value panel = view(
        MemRefType::get({2 * BN, 8}, bf16, AffineMap(), workgroup), keyPosOff);
    auto fill = scf::ForOp::create(b, loc, tid, tk.idx(2 * BN), tk.idx(T));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(fill.getBody());
      Value i = fill.getInductionVar();
      Value j = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                tk.idx(BN)),
          i, c0);
      Value jf = arith::TruncFOp::create(
          b, loc, bf16,
          arith::UIToFPOp::create(
              b, loc, f32, arith::IndexCastUIOp::create(b, loc, i32, j)));
      Value z = arith::ConstantOp::create(b, loc, b.getZeroAttr(bf16));
      vector::StoreOp::create(b, loc,
                              vector::FromElementsOp::create(
                                  b, loc, VectorType::get({8}, bf16),
                                  ValueRange{jf, jf, jf, jf, z, z, z, z}),
                              panel, ValueRange{i, c0});
    }
    // The tensor cores read it through the async proxy.
    em.through("fence.proxy.async.shared::cta;", {});
    gpu::BarrierOp::create(b, loc);
  }

  // The query tile's rows (blockRow, the thread's rows) from its grid x
  // index; a persistent block sets them per tile (enterTile).
  Value blockRow, warpRowLocal, rows[2];
  // `row0`: the tile's first row as published (persistent varlen).
  // The query block of tile x of its batch entry (longest first under
  // causal).
  auto blockOf = [&](Value x) {
    return tk.queryBlock(x, persistent ? gridXv : launch.getGridSize().x,
                         gridX);
  };
  // `isBlock`: x is blockOf's result already (published by the producer).
  auto enterRows = [&](Value x, Value row0 = Value(), bool isBlock = false) {
    Value blockX = row0 ? Value() : isBlock ? x : blockOf(x);
    // Varlen: the block's query tile within its sequence (tables read here).
    // A persistent block's empty slot (no such tile) runs an empty key loop
    // and stores no row.
    blockRow = row0                          ? row0
               : persistent && kb.varlenSeqs ? tk.setVarlen(blockX, BM)
                                             : tk.firstRow(blockX, BM);
    // Within the block: the thread's rows g and g + 8 of its warp's 16.
    if (!warpRowLocal)
      warpRowLocal = tk.add(tk.mul(wg, 64), tk.mul(warpInWg, 16));
    for (int64_t h = 0; h < 2; ++h)
      rows[h] = tk.add(tk.add(blockRow, warpRowLocal), tk.add(g, 8 * h));
  };
  if (persistent)
    warpRowLocal = tk.add(tk.mul(wg, 64), tk.mul(warpInWg, 16));
  // 16-bit outputs: tanh.approx (as FlashAttention-3) is accurate enough.
  kb.approxTanh = !tf32;
  // The key-linear k-step's A fragment for the tile's slope (after
  // hoistScoreMod): the per-key step c X / scale (applyScoreMod's probe)
  // as four bf16 parts, each the rounding of what the earlier ones left
  // (to about 2^-36 of it), in columns 0-3 of rows g and g + 8 (A
  // registers 0 and 1; 2 and 3 hold columns 8-15, zero).
  Value keyPosA;
  auto enterKeyPos = [&]() {
    if (!keyPosMma)
      return;
    Value step, term;
    kb.keyLinearRowTerm = &term;
    kb.keyLinearSlope = &step;
    // X |e|: the step for a tile where e >= 0 (issueS negates it per row).
    kb.keyLinearSign = kb.cF32(1.0f);
    tk.scoreMod(kb.cF32(0.0f), tk.idx(0), rows[0], /*boundary=*/false, Value(),
                tk.idx(0), 1);
    kb.keyLinearRowTerm = nullptr;
    kb.keyLinearSlope = nullptr;
    kb.keyLinearSign = Value();
    // scoreModKeyLinear mirrors the split, so the probe always splits;
    // were it not to, every score would hold its whole bias already.
    if (!step)
      step = kb.cF32(0.0f);
    Value parts[4], rest = step;
    for (Value &part : parts) {
      part = arith::TruncFOp::create(b, loc, bf16, rest);
      rest = arith::SubFOp::create(b, loc, rest,
                                   arith::ExtFOp::create(b, loc, f32, part));
    }
    // Lane t of a quad: columns 2t and 2t + 1, so t = 0 holds parts 0 and
    // 1, t = 1 parts 2 and 3, the others zeros.
    Value zeroB = arith::ConstantOp::create(b, loc, b.getZeroAttr(bf16));
    Value is0 =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c2, tk.idx(0));
    Value is1 =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c2, tk.idx(2));
    Value pair[2];
    for (int64_t k = 0; k < 2; ++k) {
      pair[k] = arith::SelectOp::create(
          b, loc, is0, parts[k],
          arith::SelectOp::create(b, loc, is1, parts[2 + k], zeroB));
    }
    Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, bf16),
                                             ValueRange{pair[0], pair[1]});
    keyPosA = vector::ExtractOp::create(
        b, loc, vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), v),
        ArrayRef<int64_t>{0});
  };
  if (!persistent) {
    enterRows(launch.getBlockIds().x);
    tk.setBatch(launch.getBlockIds().y);
    kb.hoistScoreMod(ArrayRef<Value>(tk.loops).take_front(r));
    enterKeyPos();
  }

  // Rows into the swizzled panels tile[prefix..., panel, row, chunk ^ row %
  // 8] (8 chunks of 16 bytes per 128-byte panel row).
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto copyRows = [&](SmallVectorImpl<Value> &tokens, StringRef name,
                      Value tile, ValueRange prefix, int64_t count,
                      int64_t width, unsigned rowDim, Value row0, Value limit,
                      unsigned colDim) {
    tk.copyRows(name, tile, count, width, rowDim, row0, limit, colDim,
                [&](Value rowLocal, Value chunk) {
                  Value swz = arith::XOrIOp::create(b, loc, tk.remu(chunk, 8),
                                                    tk.remu(rowLocal, 8));
                  SmallVector<Value> dst(prefix.begin(), prefix.end());
                  dst.append({tk.divu(chunk, 8), rowLocal, tk.mul(swz, 8)});
                  return dst;
                });
  };
  auto copyQ = [&]() {
    SmallVector<Value> tokens;
    copyRows(tokens, "q", qTile, {}, BM, D, r, blockRow, tk.Mv(), r + 2);
    nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  const bool ws = cfg.warpSpecialized;
  // Two-block kernel with TMA (cfg.tma: not pipelined, no staged mask
  // tile): thread 0 loads Q and each K/V tile by cp.async.bulk.tensor onto
  // mbarriers.
  const bool tmaTwoBlock = !ws && cfg.tma;
  if (!ws && !tmaTwoBlock)
    copyQ();

  // Matrix descriptors (PTX ISA, "matrix-descriptor-format"): start
  // address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride
  // byte offset >> 4 in 32-45, the layout in 62-63 (1: 128-byte swizzle,
  // 2: 64-byte).
  // Two forms of the same descriptors. By default a 64-bit add, shift,
  // mask and OR per descriptor. Narrow: the start address field as 32-bit
  // arithmetic, the buffers' base field once, then (offset >> 4) and the
  // leading byte offset added as one constant per operand and k-step, the
  // high word a constant (exact: every offset is a multiple of 16 and
  // base + offset stays below the 2^18 bytes the 14 bits hold). The narrow
  // form issues fewer instructions (the D = 256 causal kernel 2928 -> 2640
  // SASS) and measured 1.01-1.15x on the persistent 16-bit kernels past
  // D = 128 (D = 256; MLA's 192/128 1.00-1.08x), but 0.88-0.91x on the same
  // kernels with a block per query tile, 0.93-0.97x at D = 128 and
  // 0.90-0.96x with FP8 (log steps 157-159 and 162; the loss is in the
  // K/V stage descriptors, not understood).
  const bool narrowDesc = persistent && std::max(D, E) > 128 && !fp8;
  Value base64 = arith::IndexCastUIOp::create(b, loc, i64, base);
  // The start address field of a 64-bit shared-memory address.
  auto addrField = [&](Value addr) -> Value {
    return arith::AndIOp::create(
        b, loc,
        arith::ShRUIOp::create(b, loc, addr,
                               arith::ConstantIntOp::create(b, loc, 4, 64)),
        arith::ConstantIntOp::create(b, loc, 0x3FFF, 64));
  };
  Value baseField;
  if (narrowDesc)
    baseField = arith::TruncIOp::create(b, loc, i32, addrField(base64));
  // `bytes` (a value, the same for a tile's k-steps) + `constBytes`.
  // `swizzle`: the 128-byte swizzle (1 in bits 62-63), else none (0).
  // swizzle64: the 64-byte pattern instead (FP8's last V^T panel of 64
  // keys).
  auto desc = [&](Value bytes, int64_t constBytes, int64_t lbo, int64_t sbo,
                  bool swizzle = true, bool swizzle64 = false) -> Value {
    const int64_t layout = swizzle64 ? int64_t(2) << 62
                           : swizzle ? int64_t(1) << 62
                                     : 0;
    if (!narrowDesc) {
      Value off = bytes ? tk.add(bytes, constBytes) : tk.idx(constBytes);
      Value field = addrField(arith::AddIOp::create(
          b, loc, base64, arith::IndexCastUIOp::create(b, loc, i64, off)));
      int64_t hi = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | layout;
      return arith::OrIOp::create(b, loc, field,
                                  arith::ConstantIntOp::create(b, loc, hi, 64));
    }
    Value field = baseField;
    if (bytes)
      field = arith::AddIOp::create(
          b, loc, field,
          arith::IndexCastUIOp::create(
              b, loc, i32, arith::ShRUIOp::create(b, loc, bytes, tk.idx(4))));
    // The leading byte offset (bits 16-29) joins the added constant: the
    // start address field cannot carry into it.
    field = arith::AddIOp::create(
        b, loc, field,
        arith::ConstantIntOp::create(
            b, loc, (constBytes >> 4) | ((lbo >> 4) << 16), 32));
    field = arith::ExtUIOp::create(b, loc, i64, field);
    int64_t hi = ((sbo >> 4) << 32) | layout;
    return arith::OrIOp::create(b, loc, field,
                                arith::ConstantIntOp::create(b, loc, hi, 64));
  };
  // Q (A, K-major) and K (B, K-major): k-step ks is panel ks / 4, bytes
  // (ks % 4) * 32 into the 128-byte rows; 8-row atoms 1024 bytes apart.
  // Q's descriptors from the warpgroup index as lane 0 has it (shfl): a
  // value ptxas knows is warp-uniform, so they live in uniform registers,
  // not in two vector registers each. The two-block kernel with a masked
  // key loop spilled those (20-24 bytes at 128 registers; D = 64 causal:
  // 0.98-1.03x, D = 128 at N = 256 and varlen 0.98-1.02x without them);
  // on the warp-specialized kernels it measured 0.98-0.99x (log step 177).
  const bool maskedLoop = tk.causal || tk.window || kb.isDynamic(r + 1) ||
                          tk.N() % BN != 0 || memArg("mask") ||
                          kb.op.hasScoreMod() || kb.varlenSeqs;
  Value wgQ = wg;
  if (!ws && std::max(D, E) <= 128 && maskedLoop)
    wgQ = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        em.asmI32("shfl.sync.idx.b32 $0, $1, 0, 31, -1;",
                  {arith::IndexCastUIOp::create(b, loc, b.getI32Type(), wg)},
                  "r"));
  Value qRows = tk.mul(wgQ, 64 * 128);
  auto qDesc = [&](int64_t ks) {
    return desc(qRows, qOff + (ks / 4) * BM * 128 + (ks % 4) * 32,
                /*lbo=*/16, /*sbo=*/1024);
  };
  auto kDesc = [&](Value buf, int64_t ks) {
    return desc(tk.mul(buf, BN * Dp * 2),
                kOff + (ks / 4) * BN * 128 + (ks % 4) * 32, 16, 1024);
  };
  // V (B, MN-major, read transposed): k-step kk is keys 16 kk.. (two
  // atoms, 1024 bytes apart = stride offset); 64-column panels BN * 128
  // bytes apart (leading offset).
  auto vDesc = [&](Value buf, int64_t kk) {
    // FP8, TF32: V^T (K-major, E rows of 128-byte panels of keys, panels
    // E * 128 bytes apart): k-step kk is bytes (kk % 4) * 32 into the rows
    // of panel kk / 4, like K's. FP8's last panel of 64 keys (BN % 128):
    // 64-byte rows in the 64-byte swizzle, 8-row atoms 512 bytes apart.
    if (vT && fp8 && BN % 128 && kk / 4 == BN / 128)
      return desc(tk.mul(buf, cfg.vStageBytes(E)),
                  vOff + (kk / 4) * E * 128 + (kk % 4) * 32, 16, 512,
                  /*swizzle=*/true, /*swizzle64=*/true);
    if (vT)
      return desc(tk.mul(buf, BN * Ep * 2),
                  vOff + (kk / 4) * E * 128 + (kk % 4) * 32, 16, 1024);
    return desc(tk.mul(buf, BN * Ep * 2), vOff + kk * 16 * 128,
                /*lbo=*/BN * 128, /*sbo=*/1024);
  };

  // The block's mask tile at key n0 into stage `buf` (maskInRing).
  std::function<void(SmallVectorImpl<Value> &, Value, Value)> copyMaskTile;
  auto issue = [&](Value n0, Value buf) -> Value {
    SmallVector<Value> tokens;
    copyRows(tokens, "k", kTile, buf, BN, D, r + 1, n0, tk.Nv(), r + 2);
    copyRows(tokens, "v", vTile, buf, BN, E, r + 1, n0, tk.Nv(), r + 3);
    if (copyMaskTile)
      copyMaskTile(tokens, n0, buf);
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  // TMA (cfg.tma): operand `name`'s key rows n0.. into stage `buf` of the
  // tile at `tileOff` (`panels` 64-column panels), one box of 64 columns x
  // BN rows per panel from the tensor map `tmap_<name>` the launcher
  // encoded (dims innermost first, 128-byte swizzle: the layout the
  // descriptors read; rows past N arrive as zeros), completing on the
  // mbarrier at `bar`.
  // The global address (i64) of a memref's first element.
  auto addressOf = [&](Value mem) -> Value {
    return arith::IndexCastUIOp::create(
        b, loc, i64, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem));
  };
  // One box of 64 columns x `rows` rows per 64-column panel of operand
  // `name` (rows from `row0` along loop `rowDim`, columns along `colDim`)
  // into consecutive panels of `rows` x 128 bytes from shared address `dst`
  // (index), completing on the mbarrier at `bar`.
  auto tmaBox = [&](StringRef name, unsigned rowDim, Value row0,
                    unsigned colDim, int64_t rows, int64_t panels, Value dst,
                    Value bar, Value col0 = Value()) {
    Value mapPtr = addressOf(memArg(("tmap_" + name).str()));
    tk.loops[rowDim] = row0;
    tk.loops[colDim] = col0 ? col0 : c0;
    SmallVector<Value> idx = tk.indices(name);
    const size_t rank = idx.size();
    // A panel's elements along the contiguous dim: 128 bytes' worth.
    const int64_t panelElems =
        1024 /
        cast<MemRefType>(memArg(name).getType()).getElementTypeBitWidth();
    std::string text = "cp.async.bulk.tensor." + std::to_string(rank) +
                       "d.shared::cluster.global.tile.mbarrier::complete_tx::"
                       "bytes [$0], [$1, " +
                       regList(2, rank) + "], [$" + std::to_string(rank + 2) +
                       "];";
    std::string constraints = "r,l";
    for (size_t i = 0; i < rank; ++i)
      constraints += ",r";
    constraints += ",r";
    for (int64_t p = 0; p < panels; ++p) {
      SmallVector<Value> ops;
      ops.push_back(
          arith::IndexCastOp::create(b, loc, i32, tk.add(dst, p * rows * 128)));
      ops.push_back(mapPtr);
      for (size_t i = 0; i < rank; ++i) {
        Value c = idx[rank - 1 - i];
        if (i == 0 && p)
          c = tk.add(c, p * panelElems);
        ops.push_back(arith::IndexCastOp::create(b, loc, i32, c));
      }
      ops.push_back(bar);
      em.asmCall(text, ops, constraints, {}, "", 0);
    }
  };
  // K or V: key rows n0.. into stage `buf` of the tile at `tileOff`.
  auto tmaTile = [&](StringRef name, int64_t tileOff, int64_t panels,
                     unsigned colDim, Value n0, Value buf, Value bar) {
    tmaBox(name, r + 1, n0, colDim, BN, panels,
           tk.add(tk.add(base, tk.mul(buf, BN * panels * 64 * 2)), tileOff),
           bar);
  };
  // `name`'s row `row` along loop `rowDim` (column 0 along `colDim`)
  // into L2.
  auto prefetchRow = [&](StringRef name, unsigned rowDim, Value row,
                         unsigned colDim) {
    Value mem = memArg(name);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mem);
    tk.loops[rowDim] = row;
    tk.loops[colDim] = c0;
    Value elems = meta.getOffset();
    for (auto [i, x] : llvm::enumerate(tk.indices(name)))
      elems = tk.add(elems, arith::MulIOp::create(b, loc, x,
                                                  meta.getStrides()[i]));
    int64_t eltBytes =
        cast<MemRefType>(mem.getType()).getElementTypeBitWidth() / 8;
    Value addr = arith::AddIOp::create(
        b, loc, addressOf(mem),
        arith::IndexCastUIOp::create(b, loc, i64,
                                     tk.mul(elems, eltBytes)));
    em.asmCall("prefetch.global.L2 [$0];", {addr}, "l", {}, "", 0);
  };
  // TMA onto `bars` (both kernels' callers are one thread): Q's box and
  // stage `stage`'s K/V tile at key n0, with their bytes expected. Q's
  // first row into L2: Q stays a kernel parameter, and the first (callers
  // pass q, k, v in the order the kernel first uses them).
  auto prefetchQ = [&] {
    prefetchRow("q", r, tk.clamp(blockRow, tk.Mv()), r + 2);
  };
  auto tmaLoadQ = [&](StageBarriers &bars) {
    bars.arriveExpectTx(bars.q(), BM * Dp * 2);
    tmaBox("q", r, blockRow, r + 2, BM, Dp / 64, tk.add(base, qOff),
           bars.addr(bars.q()));
  };
  // FP8: tile n0's V into staging buffer `sb` (its barrier: the slot after
  // the stages' ones, + sb), expected bytes on it.
  auto tmaLoadStagedV = [&](StageBarriers &bars, Value sb, Value n0) {
    Value slot = tk.add(sb, cfg.stagingBarrierSlot());
    bars.arriveExpectTx(slot, BN * Ep * 2);
    // tmaTile's buffer index: staging buffers are BN * Ep * 2 bytes apart.
    tmaTile("v", stageOff, Ep / 64, r + 3, n0, sb, bars.addr(slot));
  };
  auto tmaLoadKV = [&](StageBarriers &bars, Value stage, Value n0) {
    Value full = bars.addr(bars.full(stage));
    if (vT) {
      // K into its stage; V row-major into a staging buffer (its own
      // barrier), which the producer then transposes into V's stage. With
      // two staging buffers V comes a tile ahead (tmaLoadStagedV).
      // TF32: K on its own barrier (the producer rounds it in place first,
      // roundK); thread 0's arrival on the full one expects no bytes.
      if (tf32) {
        Value landed = tk.add(stage, cfg.kLandedSlot());
        bars.arriveExpectTx(landed, BN * Dp * 2);
        tmaTile("k", kOff, Dp / 64, r + 2, n0, stage, bars.addr(landed));
        bars.arrive(bars.full(stage));
      } else {
        bars.arriveExpectTx(bars.full(stage), BN * Dp * 2);
        tmaTile("k", kOff, Dp / 64, r + 2, n0, stage, full);
      }
      if (cfg.stagingBufs == 1)
        tmaLoadStagedV(bars, c0, n0);
      return;
    }
    bars.arriveExpectTx(bars.full(stage), BN * (Dp + Ep) * 2);
    tmaTile("k", kOff, Dp / 64, r + 2, n0, stage, full);
    tmaTile("v", vOff, Ep / 64, r + 3, n0, stage, full);
  };
  // shiftV: the stage of the tile at n0 gets its K and, unless it is the
  // query tile's first (`withV` false), V of the tile before it; after the
  // last tile a stage with its V alone (tmaLoadLastV).
  auto tmaLoadShifted = [&](StageBarriers &bars, Value stage, Value n0,
                            Value withV) {
    Value full = bars.addr(bars.full(stage));
    const int64_t maskBytes = cfg.tmaMask ? BM * cfg.maskRowBytes : 0;
    bars.arriveExpectTx(
        bars.full(stage),
        arith::SelectOp::create(b, loc, withV,
                                em.i32(BN * (Dp + Ep) * 2 + maskBytes),
                                em.i32(BN * Dp * 2 + maskBytes)));
    tmaTile("k", kOff, Dp / 64, r + 2, n0, stage, full);
    if (cfg.tmaMask)
      tmaBox("mask", r, blockRow, r + 1, BM, cfg.maskRowBytes / 128,
             tk.add(base, tk.add(tk.mul(stage, BM * cfg.maskRowBytes),
                                 cfg.maskOffset(D, E))),
             full, n0);
    auto ifV = scf::IfOp::create(b, loc, withV, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifV.getThenRegion().front());
    tmaTile("v", vOff, Ep / 64, r + 3, tk.add(n0, -BN), stage, full);
  };
  auto tmaLoadLastV = [&](StageBarriers &bars, Value stage, Value n0) {
    bars.arriveExpectTx(bars.full(stage), BN * Ep * 2);
    tmaTile("v", vOff, Ep / 64, r + 3, n0, stage, bars.addr(bars.full(stage)));
  };
  // This thread's copies older than the `pending` youngest groups are in
  // shared memory; fence them to the async proxy, then a block barrier.
  Value lastGroup;
  auto landed = [&](int64_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                     b.getI32IntegerAttr(pending));
    em.through("fence.proxy.async.shared::cta;", {});
    gpu::BarrierOp::create(b, loc);
  };

  // Named values, not structured bindings: lambdas capture them (C++20).
  Value lb, ub;
  // Segment ids: the keys [segInnerLo, segInnerHi) where the tile's rows and
  // keys all have one id (cfg.segTrim, as the producer published them).
  Value segInnerLo, segInnerHi;
  auto enterKeys = [&]() {
    std::pair<Value, Value> range = tk.keyRange(blockRow, BM);
    lb = range.first;
    ub = range.second;
  };
  if (!persistent)
    enterKeys();
  if (!ws && !tmaTwoBlock)
    for (int64_t st = 0; st + 1 < S; ++st)
      lastGroup = issue(tk.add(lb, st * BN), tk.idx(st));

  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  // Scores in the exp2 domain with the scale folded into the exponent's
  // fma, or natural (TileKernel::natural: scaled first, 2^((s - m) log2 e)).
  const bool natural = tk.natural;
  const bool foldScale = kb.scale > 0 && !natural;
  Value scaleLog2 = kb.scaleLog2Value();
  Value scoreScale = natural ? kb.scaleValue() : scaleLog2;
  Value log2e = kb.cF32(1.4426950408889634f);
  const bool fmaExponent = tk.fmaExponent();
  // Natural units only for a finite fill (no mask tensor, no region): a
  // tile without masked keys holds no fill, so its scores stay raw and P's
  // exponent is the plain kernel's one fma, s * scale log2 e - m log2 e
  // (m then includes this tile's max: a real score, not the fill, and its
  // product with log2 e cannot overflow). Saves two ops per score there.
  const bool rawInterior =
      natural && kb.scale > 0 && !memArg("mask") && !kb.op.hasScoreMod();
  // A score_mod ending in a multiply by c > 0 (soft-capping's c tanh(s / c))
  // with nothing added after it (no mask tensor) and the -inf fill: the
  // scores stay g, the row maxima are c max(g) (exact: c > 0 is monotone
  // under rounding) and P's exponent fma takes c log2 e. One op per score.
  const float outerScale =
      tk.fmaExponent() && !memArg("mask") ? kb.scoreModOuterScale() : 0.0f;
  kb.dropScoreModOuterScale = outerScale > 0;
  Value expFactor =
      outerScale > 0 ? kb.cF32(outerScale * 1.4426950408889634f) : log2e;
  // A bias linear in the key index (ALiBi's slope (n - m)), the -inf fill,
  // no mask tensor, a static positive scale: the score is
  // scale (s + k X / scale) + X f (applyScoreMod's split), so each score
  // takes t = fma(X / scale, k, s) (one op, against the scale's multiply
  // and the bias's add), the row's term X f enters its tile maximum before
  // the quad reduction, and P's exponent fma takes scale log2 e with the
  // reference (X f - m) log2 e. One op per score.
  const bool keyLinear = tk.keyLinearBias();
  // The row terms of the tile prepare() took apart, for exponentiate().
  Value keyRow[2];
  // A key-linear value under an absolute value (FlashAttention's
  // non-causal ALiBi, -slope |m - n|) is linear over a tile where it keeps
  // its sign: per tile, each of the thread's rows takes that sign, and a
  // warp holding a row where it changes sign within the tile (the
  // diagonal's tile) applies the whole body per score instead.
  const bool keyAbs = keyLinear && kb.scoreModKeyAbs();
  struct TileSigns {
    Value sign[2]; // f32 +1 or -1
    Value mixed;   // i1, warp-uniform
  };
  auto computeTileSigns = [&](Value n0) -> TileSigns {
    TileSigns ts;
    Value mixed;
    for (int64_t h = 0; h < 2; ++h) {
      Value rowMixed = tk.keyAbsSign(n0, rows[h], BN, ts.sign[h]);
      mixed = h ? arith::OrIOp::create(b, loc, mixed, rowMixed).getResult()
                : rowMixed;
    }
    Value allLanes = arith::ConstantIntOp::create(b, loc, -1, 32);
    ts.mixed = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), allLanes, mixed,
                                        NVVM::VoteSyncKind::any);
    return ts;
  };
  // Kept where issueS computed them, for the next prepare() of the same
  // tile (taken once: a value kept longer might not dominate a later use);
  // else computed there.
  DenseMap<Value, TileSigns> signsAt;
  auto tileSigns = [&](Value n0) -> TileSigns {
    auto it = signsAt.find(n0);
    if (it == signsAt.end())
      return computeTileSigns(n0);
    TileSigns ts = it->second;
    signsAt.erase(it);
    return ts;
  };
  // S = Q K^T: D / 16 wgmma, the first one without accumulating.
  std::string sInst = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(BN) +
                      "k" + std::to_string(kStep) + ".f32." + ty + "." + ty +
                      " ";
  // 16-bit types take the transpose immediates (both K-major: 0).
  std::string sTail = vT ? ", p, 1, 1;\n}" : ", p, 1, 1, 0, 0;\n}";
  // TF32 with Q in registers (cfg.qInRegs): k-step ks's A fragment is
  // qA[4 ks..4 ks + 3] (loadQRegs).
  SmallVector<Value> qA;
  auto issueS = [&](Value buf, Value n0) -> SmallVector<Value> {
    SmallVector<Value> acc(sRegs, zero);
    if (cfg.qInRegs) {
      for (int64_t ks = 0; ks < D / 8; ++ks) {
        std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                           std::to_string(sRegs + 5) + ", 0;\n" + sInst +
                           regList(0, sRegs) + ", " + regList(sRegs, 4) +
                           ", $" + std::to_string(sRegs + 4) + sTail;
        acc = em.asmCall(text,
                         {qA[4 * ks], qA[4 * ks + 1], qA[4 * ks + 2],
                          qA[4 * ks + 3], kDesc(buf, ks), em.i32(ks ? 1 : 0)},
                         "r,r,r,r,l,r", acc, "f", sRegs);
      }
      return acc;
    }
    for (int64_t ks = 0; ks < cfg.cols2(D) / 16; ++ks) {
      std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                         std::to_string(sRegs + 2) + ", 0;\n" + sInst +
                         regList(0, sRegs) + ", $" + std::to_string(sRegs) +
                         ", $" + std::to_string(sRegs + 1) + sTail;
      acc = em.asmCall(text, {qDesc(ks), kDesc(buf, ks), em.i32(ks ? 1 : 0)},
                       "l,l,r", acc, "f", sRegs);
    }
    // The key-linear k-step: A from registers (rows g and g + 8 of
    // columns 0-7; 8-15 zero), B the panel of key positions, accumulating.
    if (keyPosMma) {
      std::string text =
          "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(sRegs + 5) +
          ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(BN) +
          "k16.f32.bf16.bf16 " + regList(0, sRegs) + ", " + regList(sRegs, 4) +
          ", $" + std::to_string(sRegs + 4) + ", p, 1, 1, 0;\n}";
      Value none = em.i32(0);
      // X |e|: the step negated on a row where e <= 0 over the tile (its
      // four bf16 parts' sign bits), none on a warp whose tile is mixed.
      Value a[2] = {keyPosA, keyPosA};
      if (keyAbs) {
        TileSigns ts = signsAt[n0] = computeTileSigns(n0);
        Value flipped = arith::XOrIOp::create(
            b, loc, keyPosA,
            arith::ConstantIntOp::create(b, loc, 0x80008000, 32));
        for (int64_t h = 0; h < 2; ++h) {
          Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            ts.sign[h], zero);
          a[h] = arith::SelectOp::create(
              b, loc, ts.mixed, none,
              arith::SelectOp::create(b, loc, neg, flipped, keyPosA));
        }
      }
      acc = em.asmCall(text,
                       {a[0], a[1], none, none,
                        desc(Value(), keyPosOff, /*lbo=*/BN * 16, /*sbo=*/128,
                             /*swizzle=*/false),
                        em.i32(1)},
                       "r,r,r,r,l,r", acc, "f", sRegs);
    }
    return acc;
  };
  // Ping-pong (warp-specialized, pipelined, two warpgroups): a warpgroup
  // waits for its turn before it issues its wgmma and passes the turn on
  // after, so that the two alternate on the tensor cores and one's softmax
  // runs under the other's products.
  std::function<void()> takeTurn, passTurn;
  auto computeS = [&](Value buf, Value n0) -> SmallVector<Value> {
    em.through("wgmma.fence.sync.aligned;", {});
    if (takeTurn)
      takeTurn();
    SmallVector<Value> acc = issueS(buf, n0);
    em.through("wgmma.commit_group.sync.aligned;", {});
    if (passTurn)
      passTurn();
    return em.through("wgmma.wait_group.sync.aligned 0;", acc);
  };

  // State: m[2], ℓ[2], O[oRegs], buffer; (m, ℓ) from (-inf, 0) or a sink.
  Value m0[2], l0[2];
  SmallVector<Value> init;
  auto enterState = [&]() {
    for (int64_t h = 0; h < 2; ++h)
      std::tie(m0[h], l0[h]) = tk.initialState(rows[h]);
    init = {m0[0], m0[1], l0[0], l0[1]};
    init.append(oRegs, zero);
    init.push_back(c0);
  };
  if (!persistent)
    enterState();

  // FP8: P is always e4m3 (3 mantissa bits; e5m2's 2 doubled the error
  // against the f32 reference: 5.1e-2 against 2.6e-2), V is either.
  std::string pTy = fp8 ? "e4m3" : ty;
  // TF32: P's values rounded to TF32 (to nearest, ties away), as the
  // mma.sync kernel's operands; unrounded the tensor cores would truncate.
  auto roundTf32 = [&](Value x) -> Value {
    return NVVM::ConvertFloatToTF32Op::create(b, loc, i32, x,
                                              NVVM::FPRoundingMode::RNA);
  };
  auto v4Type =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  auto loadV4 = [&](Value addr) -> Value {
    return LLVM::InlineAsmOp::create(
               b, loc, v4Type, ValueRange{addr},
               "ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r",
               /*has_side_effects=*/true, /*is_align_stack=*/false,
               LLVM::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               ArrayAttr())
        .getResult(0);
  };
  // Four 32-bit words to shared address `addr` (i32).
  auto storeV4 = [&](Value addr, ArrayRef<Value> words) {
    em.asmCall("st.shared.v4.b32 [$0], {$1, $2, $3, $4};",
               {addr, words[0], words[1], words[2], words[3]}, "r,r,r,r,r", {},
               "", 0);
  };
  auto wordOf = [&](Value v4, int64_t j) -> Value {
    return arith::BitcastOp::create(
        b, loc, f32,
        LLVM::ExtractValueOp::create(b, loc, v4, ArrayRef<int64_t>{j}));
  };
  // TF32: Q and K arrive by TMA as f32, which the tensor cores would
  // truncate to TF32 (a bias toward zero that showed as 3.2e-3 of error
  // at large logits): `count` 16-byte chunks from shared address `at`
  // (i32, chunk i at at + 16 i for i = `first` + `step` k) are rounded in
  // place; the caller fences the async proxy and syncs. `count` is a
  // multiple of `step` (K tiles and Q panels are whole rounds of 128
  // threads).
  auto roundInPlace = [&](Value at, Value first, int64_t count, int64_t step) {
    assert(count % step == 0 && "a partial round of the threads");
    for (int64_t k = 0; k * step < count; ++k) {
      Value i = tk.add(first, k * step);
      Value a = arith::AddIOp::create(
          b, loc, at, arith::IndexCastOp::create(b, loc, i32, tk.mul(i, 16)));
      Value v = loadV4(a);
      SmallVector<Value> words;
      for (int64_t j = 0; j < 4; ++j)
        words.push_back(roundTf32(wordOf(v, j)));
      storeV4(a, words);
    }
  };
  std::string pvInst = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(E) +
                       "k" + std::to_string(kStep) + ".f32." + pTy + "." + ty +
                       " ";
  // FP8: four P values (f32) to one register of e4m3 values, the first
  // in the low byte (a conversion puts its first source in the high half).
  // Past D = 64 by NVVM's conversion op: made by an asm statement, P's
  // loop-carried registers were copied right before the P V wgmma, and
  // ptxas serialized the products for it (C7513); the op measured
  // 1.02-1.09x at D = 128 and 1.05-1.31x at D = 256 (with the producer's
  // spills gone, below). At D <= 64 (three computing warpgroups) the asm
  // form, serialized, measured 1.02-1.08x the op (log step 88).
  Type i16 = b.getIntegerType(16);
  auto cvtPair = [&](Value lo, Value hi) -> Value {
    return NVVM::ConvertF32x2ToF8x2Op::create(
        b, loc, i16, hi, lo, NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::SATFINITE, /*relu=*/false,
        Float8E4M3FNType::get(b.getContext()));
  };
  auto packQuad = [&](Value x0, Value x1, Value x2, Value x3) -> Value {
    if (std::max(D, E) > 64) {
      // The two halves as one register (mov.b32 {lo, hi}), as packPair.
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, i16),
          ValueRange{cvtPair(x0, x1), cvtPair(x2, x3)});
      return vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), v),
          ArrayRef<int64_t>{0});
    }
    std::string cvt = "cvt.rn.satfinite." + pTy + "x2.f32 ";
    return LLVM::InlineAsmOp::create(
               b, loc, i32, ValueRange{x0, x1, x2, x3},
               "{\n.reg .b16 l, h;\n" + cvt + "l, $2, $1;\n" + cvt +
                   "h, $4, $3;\nmov.b32 $0, {l, h};\n}",
               "=r,f,f,f,f", /*has_side_effects=*/false,
               /*is_align_stack=*/false, LLVM::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               ArrayAttr())
        .getResult(0);
  };
  auto pairType = VectorType::get({2}, elt);
  auto i32x1 = VectorType::get({1}, i32);
  auto packPair = [&](Value lo, Value hi) -> Value {
    Value v = vector::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{arith::TruncFOp::create(b, loc, elt, lo),
                   arith::TruncFOp::create(b, loc, elt, hi)});
    return vector::ExtractOp::create(
        b, loc, vector::BitCastOp::create(b, loc, i32x1, v),
        ArrayRef<int64_t>{0});
  };

  // Scores in the exp2 domain's units (scale folded later when positive),
  // masked keys -inf; returns the two row maxima (scaled), quad-reduced.
  // The mask tensor's elements for score register i (see prepare), loaded
  // before the tile's S product is issued.
  auto loadMask = [&](Value n0, bool withMask, bool packed = false) {
    SmallVector<std::pair<Value, Value>> pairs;
    for (int64_t i = 0; i < sRegs; i += 2)
      pairs.push_back({rows[(i / 2) % 2], tk.add(tk.add(n0, (i / 4) * 8), c2)});
    return tk.loadMaskPairs(pairs, withMask, packed);
  };
  // Staged: the warpgroup copies its rows of the key tile at n0 into
  // shared memory (cp.async, 16-byte chunks: coalesced, unlike the fragment
  // reads of 8 rows x 16 bytes straight from global memory) as one group;
  // readMask waits for it (`pending` younger groups of this thread may stay
  // in flight), syncs the warpgroup and reads the fragments. Before a copy
  // the warpgroup is synced too: nobody still reads the previous tile.
  Value maskGroup;
  auto syncWarpGroup = [&]() {
    Value id = arith::IndexCastOp::create(b, loc, i32, tk.add(wg, 4));
    em.asmCall("bar.sync $0, 128;", {id}, "r", {}, "", 0);
  };
  auto issueMaskCopy = [&](Value n0) {
    const int64_t ce = 16 / maskEltBytes, chunks = BN / ce, total = 64 * chunks;
    Value wgTid = tk.remu(tid, 128);
    SmallVector<Value> tokens;
    for (int64_t it = 0; it * 128 < total; ++it) {
      Value i = tk.add(wgTid, it * 128);
      if ((it + 1) * 128 > total)
        i = tk.clamp(i, total);
      Value rowLocal = tk.add(tk.mul(wg, 64), tk.divu(i, chunks));
      Value col = tk.mul(tk.remu(i, chunks), ce);
      tk.loops[r] = tk.clamp(tk.add(blockRow, rowLocal), tk.Mv());
      tk.loops[r + 1] =
          arith::MinUIOp::create(b, loc, tk.add(n0, col), tk.idx(N - ce));
      tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, maskTile, ValueRange{rowLocal, col}, memArg("mask"),
          tk.indices("mask"), b.getIndexAttr(ce), /*srcElements=*/Value(),
          /*bypassL1=*/b.getUnitAttr()));
    }
    maskGroup =
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  const bool maskRing = cfg.maskInRing();
  if (maskRing && !cfg.tmaMask)
    copyMaskTile = [&](SmallVectorImpl<Value> &tokens, Value n0, Value buf) {
      const int64_t ce = 16 / maskEltBytes, chunks = BN / ce,
                    total = BM * chunks;
      for (int64_t it = 0; it * tk.threads < total; ++it) {
        Value i = tk.add(tk.tid, it * tk.threads);
        if ((it + 1) * tk.threads > total)
          i = tk.clamp(i, total);
        Value rowLocal = tk.divu(i, chunks);
        Value col = tk.mul(tk.remu(i, chunks), ce);
        tk.loops[r] = tk.clamp(tk.add(blockRow, rowLocal), tk.Mv());
        tk.loops[r + 1] =
            arith::MinUIOp::create(b, loc, tk.add(n0, col), tk.idx(N - ce));
        Value dstRow = tk.add(tk.mul(buf, BM), rowLocal), dstCol = col;
        if (cfg.maskSwizzled()) {
          // Chunk q of the row: panel q / 8, chunk q % 8 ^ row % 8 in it.
          const int64_t panels = cfg.maskRowBytes / 128;
          Value q = tk.remu(i, chunks);
          dstRow = tk.add(
              tk.mul(tk.add(tk.mul(buf, panels), tk.divu(q, 8)), BM), rowLocal);
          dstCol = tk.mul(arith::XOrIOp::create(b, loc, tk.remu(q, 8),
                                                tk.remu(rowLocal, 8)),
                          ce);
        }
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, tokenType, maskTile, ValueRange{dstRow, dstCol},
            memArg("mask"), tk.indices("mask"), b.getIndexAttr(ce),
            /*srcElements=*/Value(),
            /*bypassL1=*/b.getUnitAttr()));
      }
    };
  // The fragments of the staged tile: this warpgroup's rows, or with the
  // ring the block's rows of stage `buf` (landed with its K/V: no wait).
  auto readMask = [&](int64_t pending, Value buf = Value()) {
    Value rowBase = warpRowLocal;
    if (maskRing) {
      rowBase = tk.add(tk.mul(buf, BM), warpRowLocal);
    } else {
      nvgpu::DeviceAsyncWaitOp::create(b, loc, maskGroup,
                                       b.getI32IntegerAttr(pending));
      syncWarpGroup();
    }
    SmallVector<Value> out;
    auto pairType = VectorType::get({2}, maskElt);
    // Swizzled (maskSwizzled): 128-byte panels of pe elements, chunk c of
    // row g (+ 8) at c ^ g, so column c2 + 8 j is in panel 8 j / pe at
    // ((8 j % pe + hi) ^ g ce) + lo, hi and lo c2's chunk and in-chunk
    // parts (ce elements per 16-byte chunk, ce <= 8).
    const int64_t ce = 16 / maskEltBytes, pe = 128 / maskEltBytes;
    Value gSwz, hi, lo;
    if (cfg.maskSwizzled()) {
      gSwz = tk.mul(g, ce);
      hi = arith::AndIOp::create(b, loc, c2, tk.idx(~(ce - 1)));
      lo = arith::AndIOp::create(b, loc, c2, tk.idx(ce - 1));
      rowBase =
          tk.add(tk.mul(buf, BM * (cfg.maskRowBytes / 128)), warpRowLocal);
    }
    for (int64_t i = 0; i < sRegs; i += 2) {
      Value row = tk.add(rowBase, tk.add(g, 8 * ((i / 2) % 2)));
      Value col = tk.add(c2, (i / 4) * 8);
      if (gSwz) {
        const int64_t j8 = (i / 4) * 8;
        row = tk.add(row, j8 / pe * BM);
        col = tk.add(arith::XOrIOp::create(b, loc, tk.add(hi, j8 % pe), gSwz),
                     lo);
      }
      Value v = vector::LoadOp::create(
          b, loc, pairType, maskTile, ValueRange{row, col},
          /*nontemporal=*/false, llvm::MaybeAlign(2 * maskEltBytes));
      for (int64_t j = 0; j < 2; ++j)
        out.push_back(
            vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{j}));
    }
    return out;
  };
  auto prepare = [&](SmallVector<Value> &s, Value n0, bool withMask,
                     Value(&tileMax)[2], ArrayRef<Value> maskVals) {
    // s[i]: 8-key block i / 4, row h = (i / 2) % 2, key c2 + i % 2.
    const bool raw = rawInterior && !withMask;
    // `sign`: keyAbs's per-row signs (null: the whole body per score).
    auto takeApart = [&](SmallVector<Value> &sv, const Value *sign) {
      SmallVector<Value> rowTerms(sRegs);
      kb.keyLinearOnMma = keyPosMma;
      for (int64_t i = 0; i < sRegs && !raw; ++i) {
        Value &x = sv[i];
        if (!foldScale && !keyLinear)
          x = arith::MulFOp::create(b, loc, x, scoreScale, tk.scaleFlags());
        kb.keyLinearRowTerm = keyLinear ? &rowTerms[i] : nullptr;
        kb.keyLinearSign = sign ? sign[(i / 2) % 2] : Value();
        if (withMask || memArg("mask") || kb.op.hasScoreMod())
          x = tk.scoreMod(x, tk.add(tk.add(n0, (i / 4) * 8 + i % 2), c2),
                          rows[(i / 2) % 2], withMask,
                          maskVals.empty() ? Value() : maskVals[i],
                          tk.add(n0, c2), (i / 4) * 8 + i % 2);
        kb.keyLinearRowTerm = nullptr;
        kb.keyLinearSign = Value();
      }
      kb.keyLinearOnMma = false;
      // Each fragment row's term: its first score's (registers 0 and 2); with
      // the key-linear k-step, which added the bias's multiple of the key's
      // column within the tile (c2 + k), the term at n0 itself.
      for (int64_t h = 0; h < 2 && keyLinear; ++h) {
        keyRow[h] = rowTerms[2 * h];
        if (!keyPosMma)
          continue;
        kb.keyLinearRowTerm = &keyRow[h];
        kb.keyLinearOnMma = true;
        kb.keyLinearSign = sign ? sign[h] : Value();
        tk.scoreMod(zero, n0, rows[h], /*boundary=*/false, Value(), n0, 1);
        kb.keyLinearRowTerm = nullptr;
        kb.keyLinearOnMma = false;
        kb.keyLinearSign = Value();
      }
    };
    if (cfg.segTrim && seg.pure) {
      // A pure segment-id body is the identity on a tile inside one
      // document: only the others apply it.
      auto sge = [&](Value x, Value y) {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x, y);
      };
      Value inside = arith::AndIOp::create(b, loc, sge(n0, segInnerLo),
                                           sge(segInnerHi, tk.add(n0, BN)));
      auto ifOp = scf::IfOp::create(b, loc, SmallVector<Type>(sRegs, f32),
                                    inside, /*withElse=*/true);
      for (int branch = 0; branch < 2; ++branch) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(branch == 0 ? &ifOp.getThenRegion().front()
                                               : &ifOp.getElseRegion().front());
        SmallVector<Value> sb(s);
        tk.skipRegion = branch == 0;
        takeApart(sb, nullptr);
        tk.skipRegion = false;
        scf::YieldOp::create(b, loc, sb);
      }
      s.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    } else if (!keyAbs) {
      takeApart(s, nullptr);
    } else {
      TileSigns ts = tileSigns(n0);
      SmallVector<Type> types(sRegs + 2, f32);
      auto ifOp = scf::IfOp::create(b, loc, types, ts.mixed, /*withElse=*/true);
      for (int branch = 0; branch < 2; ++branch) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(branch == 0 ? &ifOp.getThenRegion().front()
                                               : &ifOp.getElseRegion().front());
        SmallVector<Value> sb(s);
        takeApart(sb, branch == 0 ? nullptr : ts.sign);
        sb.append({keyRow[0], keyRow[1]});
        scf::YieldOp::create(b, loc, sb);
      }
      s.assign(ifOp.getResults().begin(), ifOp.getResults().begin() + sRegs);
      keyRow[0] = ifOp.getResult(sRegs);
      keyRow[1] = ifOp.getResult(sRegs + 1);
    }
    for (int64_t h = 0; h < 2; ++h) {
      Value mt;
      for (int64_t i = 0; i < sRegs; ++i)
        if ((i / 2) % 2 == h)
          mt = mt ? arith::MaximumFOp::create(b, loc, mt, s[i]).getResult()
                  : s[i];
      // Key-linear: this lane's maximum in scaled units (its row term is
      // its own: the lane's first column).
      if (keyLinear)
        mt = kb.fma(mt, scoreScale, keyRow[h]);
      mt = tk.quadReduce(mt, /*isMax=*/true);
      if (foldScale || raw)
        mt = arith::MulFOp::create(b, loc, mt, raw ? scoreScale : scaleLog2);
      else if (outerScale > 0)
        mt = arith::MulFOp::create(b, loc, mt, kb.cF32(outerScale));
      tileMax[h] = mt;
    }
  };
  // P = 2^(s - m) for the row references m, packed as the A fragments of
  // P V: k-step kk takes 8-key blocks 2 kk and 2 kk + 1, registers (row g,
  // row g + 8) of each, like mma.sync's A layout. Adds the row sums to lsum.
  // `raw`: s unscaled (prepare's rawInterior tiles), m natural.
  auto exponentiate = [&](SmallVector<Value> &s, Value(&m)[2], Value(&lsum)[2],
                          bool raw = false) -> SmallVector<Value> {
    Value negM[2], ref[2], negMLog2[2];
    for (int64_t h = 0; h < 2; ++h) {
      Value isNinf =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m[h], ninf);
      ref[h] = arith::SelectOp::create(b, loc, isNinf, zero, m[h]);
      negM[h] = arith::NegFOp::create(b, loc, ref[h]);
      negMLog2[h] = arith::MulFOp::create(b, loc, negM[h], log2e);
      if (keyLinear)
        negMLog2[h] = kb.fma(keyRow[h], log2e, negMLog2[h]);
    }
    Value factor = keyLinear ? scaleLog2 : expFactor;
    auto expAll = [&](bool fma) {
      for (int64_t i = 0; i < sRegs; ++i) {
        int64_t h = (i / 2) % 2;
        s[i] = raw         ? tk.ex2(kb.fma(s[i], scaleLog2, negMLog2[h]))
               : foldScale ? tk.ex2(kb.fma(s[i], scaleLog2, negM[h]))
               : fma       ? tk.ex2(kb.fma(s[i], factor, negMLog2[h]))
                           : tk.expDiff(s[i], ref[h]);
        lsum[h] = arith::AddFOp::create(b, loc, lsum[h], s[i]);
      }
    };
    // Scores in log2 units that the scale could not be folded into (a
    // negative scale) take 2^(s - m) as they are.
    if (raw || foldScale || fmaExponent || !natural) {
      expAll(fmaExponent);
    } else {
      // Natural units where a row may hold a huge value (a bf16/f32 bias
      // with finfo.min, a finite fill): one fma, as for an f16 bias, while
      // both rows' references of the warp are moderate (|m| <= 2^16, whose
      // m log2 e is exact to 2^-8), else x - m first (a finfo.min row then
      // averages V exactly). A warp-uniform branch.
      Value moderate = arith::ConstantIntOp::create(b, loc, 1, 1);
      for (int64_t h = 0; h < 2; ++h)
        for (float bound : {65536.0f, -65536.0f})
          moderate = arith::AndIOp::create(
              b, loc, moderate,
              arith::CmpFOp::create(b, loc,
                                    bound > 0 ? arith::CmpFPredicate::OLE
                                              : arith::CmpFPredicate::OGE,
                                    ref[h], kb.cF32(bound)));
      Value all = NVVM::VoteSyncOp::create(
          b, loc, b.getI1Type(), arith::ConstantIntOp::create(b, loc, -1, 32),
          moderate, NVVM::VoteSyncKind::all);
      SmallVector<Type> types(sRegs + 2, f32);
      auto ifOp = scf::IfOp::create(b, loc, types, all, /*withElse=*/true);
      SmallVector<Value> s0(s);
      Value l0[2] = {lsum[0], lsum[1]};
      for (int branch = 0; branch < 2; ++branch) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(branch == 0 ? &ifOp.getThenRegion().front()
                                               : &ifOp.getElseRegion().front());
        s = s0;
        lsum[0] = l0[0];
        lsum[1] = l0[1];
        expAll(/*fma=*/branch == 0);
        SmallVector<Value> yield(s);
        yield.append({lsum[0], lsum[1]});
        scf::YieldOp::create(b, loc, yield);
      }
      s.assign(ifOp.getResults().begin(), ifOp.getResults().begin() + sRegs);
      lsum[0] = ifOp.getResult(sRegs);
      lsum[1] = ifOp.getResult(sRegs + 1);
    }
    SmallVector<Value> p;
    if (tf32) {
      // k-step kk (8 keys, block kk of S): A registers (g, t), (g + 8, t),
      // (g, t + 4), (g + 8, t + 4) take S's (g, 2t), (g + 8, 2t), (g, 2t + 1),
      // (g + 8, 2t + 1): k position t is key 2t and t + 4 key 2t + 1, the
      // order in which the producer wrote V^T.
      for (int64_t kk = 0; kk < BN / 8; ++kk)
        for (int64_t i : {0, 2, 1, 3})
          p.push_back(roundTf32(s[4 * kk + i]));
      return p;
    }
    if (fp8) {
      // k-step kk (32 keys, 8-key blocks 4 kk..4 kk + 3): register part
      // holds row g (even part) or g + 8 of blocks 4 kk + 2 (part / 2) and
      // the next, keys c2, c2 + 1 of each: k positions 4 t.. of the A
      // fragment are keys 2t, 2t + 1, 8 + 2t, 9 + 2t, the order in which
      // the producer wrote V^T.
      for (int64_t kk = 0; kk < BN / 32; ++kk)
        for (int64_t part = 0; part < 4; ++part) {
          int64_t i = 4 * (4 * kk + 2 * (part / 2)) + 2 * (part % 2);
          p.push_back(packQuad(s[i], s[i + 1], s[i + 4], s[i + 5]));
        }
      return p;
    }
    for (int64_t kk = 0; kk < BN / 16; ++kk)
      for (int64_t part = 0; part < 4; ++part) {
        int64_t i = 4 * (2 * kk + part / 2) + 2 * (part % 2);
        p.push_back(packPair(s[i], s[i + 1]));
      }
    return p;
  };
  // O += P V from buffer `buf`: tile-kv / 16 wgmma (not committed). With
  // `accumulate` (i32), the first k-step's scale-d is that value: 0 makes
  // it O = P V, so O needs no zeros before a query tile's first product.
  auto issuePV = [&](ArrayRef<Value> p, Value buf, SmallVector<Value> o,
                     Value accumulate = Value()) {
    for (int64_t kk = 0; kk < BN / kStep; ++kk) {
      // scale-d (a predicate: 1, or `accumulate` at the first k-step);
      // scale-a, scale-b 1; B transposed (FP8: no transpose immediate, V^T
      // is K-major).
      std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                         std::to_string(oRegs + 5) + ", 0;\n" + pvInst +
                         regList(0, oRegs) + ", " + regList(oRegs, 4) + ", $" +
                         std::to_string(oRegs + 4) +
                         (vT ? ", p, 1, 1;\n}" : ", p, 1, 1, 1;\n}");
      o = em.asmCall(text,
                     {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3],
                      vDesc(buf, kk),
                      kk == 0 && accumulate ? accumulate : em.i32(1)},
                     "r,r,r,r,l,r", o, "f", oRegs);
    }
    return o;
  };

  auto softmaxPV = [&](SmallVector<Value> s, Value n0, Value buf, ValueRange st,
                       bool withMask,
                       ArrayRef<Value> maskVals) -> SmallVector<Value> {
    Value tileMax[2];
    prepare(s, n0, withMask, tileMax, maskVals);
    SmallVector<Value> next(st);
    auto rescale = [&]() {
      SmallVector<Value> out(st);
      Value alpha[2];
      for (int64_t h = 0; h < 2; ++h) {
        Value mNew = arith::MaximumFOp::create(b, loc, st[h], tileMax[h]);
        Value isNinf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             mNew, ninf);
        Value ms = arith::SelectOp::create(b, loc, isNinf, zero, mNew);
        alpha[h] = tk.expDiff(st[h], ms);
        out[h] = mNew;
        out[2 + h] = arith::MulFOp::create(b, loc, alpha[h], st[2 + h]);
      }
      for (int64_t i = 0; i < oRegs; ++i)
        out[4 + i] =
            arith::MulFOp::create(b, loc, st[4 + i], alpha[(i / 2) % 2]);
      return out;
    };
    if (cfg.rescaleThreshold <= 0) {
      next = rescale();
    } else {
      // Lazy rescaling, as in the mma.sync kernel (exact; warp-uniform).
      Value any = tk.anyRowGrew(tileMax, {st[0], st[1]}, cfg.rescaleThreshold);
      SmallVector<Type> types;
      for (Value v : st)
        types.push_back(v.getType());
      auto ifOp = scf::IfOp::create(b, loc, types, any, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, loc, rescale());
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, loc, st);
      }
      next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
    Value m[2] = {next[0], next[1]};
    Value lsum[2] = {zero, zero};
    SmallVector<Value> p = exponentiate(s, m, lsum, rawInterior && !withMask);
    for (int64_t h = 0; h < 2; ++h)
      next[2 + h] = arith::AddFOp::create(b, loc, next[2 + h], lsum[h]);
    p = em.through("", p);
    SmallVector<Value> o(next.begin() + 4, next.begin() + 4 + oRegs);
    o = em.through("wgmma.fence.sync.aligned;", o);
    o = issuePV(p, buf, o);
    em.through("wgmma.commit_group.sync.aligned;", {});
    o = em.through("wgmma.wait_group.sync.aligned 0;", o);
    for (int64_t i = 0; i < oRegs; ++i)
      next[4 + i] = o[i];
    return next;
  };

  // Q has landed once only the S - 1 K/V groups may be pending.
  if (!cfg.pipeline && !ws && !tmaTwoBlock)
    landed(S - 1);
  // With a producer warpgroup, `acquire(t)` waits for tile t to be in its
  // buffer (t % stages) and `release(t)` frees that buffer; without one
  // (both unset) this thread's own copies stream the tiles in.
  std::function<void(Value)> acquire, release;
  // The state's last value: the tile's buffer, or with a producer warpgroup
  // the tile's number.
  auto tileBody = [&](Value n0, ValueRange st, bool withMask) {
    Value last = st.back(), buf = last;
    int64_t pending = 0;
    if (acquire) {
      buf = tk.remu(last, S);
      acquire(last);
      if (stagedMask && !maskRing) {
        syncWarpGroup();
        issueMaskCopy(n0);
      }
    } else {
      landed(S - 2);
      if (stagedMask) {
        issueMaskCopy(n0);
        pending = 1;
      }
      issue(tk.add(n0, (S - 1) * BN), tk.remu(tk.add(buf, S - 1), S));
    }
    SmallVector<Value> maskVals;
    if (!stagedMask) {
      tk.prefetchMask(tk.add(n0, BN), blockRow, BM, BN);
      maskVals = loadMask(n0, withMask);
    }
    SmallVector<Value> acc = computeS(buf, n0);
    if (stagedMask)
      maskVals = readMask(pending, buf);
    SmallVector<Value> next =
        softmaxPV(acc, n0, buf, st.drop_back(), withMask, maskVals);
    if (release)
      release(last);
    next.push_back(acquire ? tk.add(last, 1) : tk.remu(tk.add(buf, 1), S));
    scf::YieldOp::create(b, loc, next);
  };
  // Intra-warpgroup overlap (pipeline): iteration t issues S = Q K^T of
  // tile t and O += P V of tile t - 1 back to back, waits for S only (the
  // older group), runs the softmax of tile t while P V runs, then waits for
  // O and rescales it. The row reference moves (lazily) before P is formed,
  // so the rescale only needs α. V of tile t - 1 is read during iteration t:
  // tile t + stages - 2 is prefetched (stages >= 3). State: m[2], ℓ[2],
  // O[oRegs], P of the previous tile, its number (buffer: number % stages).
  // With a producer warpgroup, iteration t acquires tile t and releases
  // tile t - 1 once its P V is done.
  const int64_t pRegs = 4 * BN / kStep; // P's A fragments
  // Persistent: Q's buffer is released once the tile's last S product is
  // done (before its last P V); tiles are numbered on across query tiles
  // from `t0`, and `nextTile` gets the number after this query tile's last.
  std::function<void()> afterLastS;
  auto pipelinedLoop = [&](Value lb, Value split, Value ub,
                           Value t0 = Value(),
                           Value *nextTile = nullptr) -> SmallVector<Value> {
    if (!t0)
      t0 = c0;
    Value buf0 = persistent ? tk.remu(t0, S) : c0;
    // O is undefined until the query tile's first P V, which overwrites it
    // (scale-d 0): no zeros written per query tile (64 registers; twice
    // where the key range may be empty, a dynamic N). Not past e = 128, nor
    // where tiles read a mask or score_mod tensor or take the key-linear
    // k-step: there ptxas then waited for every product before the softmax
    // (D = 256: 0.80x; log step 216).
    const bool undefO = E <= 128 && !memArg("mask") && !keyPosMma &&
                        llvm::none_of(kb.modMem, [](Value v) { return v; });
    SmallVector<Value> oUndef(
        oRegs, undefO ? LLVM::PoisonOp::create(b, loc, f32).getResult() : zero);
    auto accumulateAfter = [&](Value pTile) -> Value {
      if (!undefO)
        return Value();
      return arith::ExtUIOp::create(
          b, loc, i32,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, pTile, t0));
    };
    // A mask tensor read from global memory (not staged) with a producer
    // warpgroup: tile t's fragments are loaded during tile t - 1 and carried
    // in the state (packed pairs), a whole tile ahead of their use; issued
    // with the S product only, their latency showed (log step 68). The
    // tile loaded ahead is clamped into [0, N): past the loop's end it is
    // not used. Only where a boundary tile may exist are keys clamped per
    // pair.
    const bool maskAhead = ws && !stagedMask && memArg("mask");
    const bool aheadInTiles =
        !kb.isDynamic(r + 1) && N % BN == 0 && N >= BN;
    auto loadAhead = [&](Value n0) -> SmallVector<Value> {
      Value next = tk.add(n0, BN);
      if (aheadInTiles)
        next = arith::MinUIOp::create(b, loc, next, tk.idx(N - BN));
      return loadMask(next, /*withMask=*/!aheadInTiles, /*packed=*/true);
    };

    // Softmax of scores `s` of the tile at n0 against references m:
    // returns m', α (1 when no row of the warp moved), P and the row sums.
    auto softmax = [&](SmallVector<Value> s, Value n0, Value(&m)[2],
                       bool withMask, ArrayRef<Value> maskVals,
                       Value(&alpha)[2], Value(&lsum)[2],
                       Value &any) -> SmallVector<Value> {
      Value tileMax[2];
      prepare(s, n0, withMask, tileMax, maskVals);
      if (cfg.rescaleThreshold <= 0) {
        any = arith::ConstantIntOp::create(b, loc, 1, 1);
      } else {
        any = tk.anyRowGrew(tileMax, m, cfg.rescaleThreshold);
      }
      Value one = kb.cF32(1.0f);
      Value mNew[2];
      for (int64_t h = 0; h < 2; ++h) {
        Value grown = arith::MaximumFOp::create(b, loc, m[h], tileMax[h]);
        mNew[h] = arith::SelectOp::create(b, loc, any, grown, m[h]);
        Value isNinf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             mNew[h], ninf);
        Value ms = arith::SelectOp::create(b, loc, isNinf, zero, mNew[h]);
        alpha[h] =
            arith::SelectOp::create(b, loc, any, tk.expDiff(m[h], ms), one);
        lsum[h] = zero;
      }
      SmallVector<Value> p =
          exponentiate(s, mNew, lsum, rawInterior && !withMask);
      m[0] = mNew[0];
      m[1] = mNew[1];
      return p;
    };
    // (m, ℓ, O, P, the next tile's mask, buffer) in loop order.
    auto pack = [&](Value(&m)[2], Value(&l)[2], ArrayRef<Value> o,
                    ArrayRef<Value> p, ArrayRef<Value> ahead, Value buf) {
      SmallVector<Value> st = {m[0], m[1], l[0], l[1]};
      llvm::append_range(st, o);
      llvm::append_range(st, p);
      llvm::append_range(st, ahead);
      st.push_back(buf);
      return st;
    };
    Value any0 =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lb, ub);
    SmallVector<Type> types(4 + oRegs, f32);
    types.append(pRegs, i32);
    // The first two tiles' masks (in range even where the loop is empty).
    SmallVector<Value> mask0, ahead0;
    if (maskAhead) {
      mask0 = loadMask(lb, /*withMask=*/true);
      ahead0 = loadAhead(lb);
    }

    for (Value v : ahead0)
      types.push_back(v.getType());
    types.push_back(b.getIndexType());
    // The first tile: S, softmax (masked: it may be a boundary tile).
    auto first = scf::IfOp::create(b, loc, types, any0, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&first.getThenRegion().front());
      if (acquire)
        acquire(t0);
      else
        landed(S - 2);
      SmallVector<Value> maskVals;
      if (stagedMask) {
        if (!maskRing)
          issueMaskCopy(lb);
      } else if (maskAhead) {
        tk.prefetchMask(tk.add(lb, 2 * BN), blockRow, BM, BN);
        maskVals = mask0;
      } else {
        tk.prefetchMask(tk.add(lb, BN), blockRow, BM, BN);
        maskVals = loadMask(lb, /*withMask=*/true);
      }
      SmallVector<Value> acc = computeS(buf0, lb);
      if (stagedMask)
        maskVals = readMask(0, buf0);
      Value m[2] = {m0[0], m0[1]}, alpha[2], lsum[2], any, l[2];
      SmallVector<Value> p;
      if (kb.isDynamic(r) || kb.isDynamic(r + 1)) {
        // Dynamic sizes: whether the first tile has masked keys is known
        // only at run time (a static kernel's bounds fold); a uniform
        // branch spares a full first tile the per-score bounds.
        Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           tk.add(lb, BN), split);
        SmallVector<Type> types(pRegs, i32);
        types.append(6, f32);
        types.push_back(b.getI1Type());
        auto ifOp = scf::IfOp::create(b, loc, types, full, /*withElse=*/true);
        for (int branch = 0; branch < 2; ++branch) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(branch == 0
                                         ? &ifOp.getThenRegion().front()
                                         : &ifOp.getElseRegion().front());
          Value mb[2] = {m0[0], m0[1]}, ab[2], lb2[2], anyB;
          SmallVector<Value> pb = softmax(acc, lb, mb, /*withMask=*/branch == 1,
                                          maskVals, ab, lb2, anyB);
          pb.append({mb[0], mb[1], ab[0], ab[1], lb2[0], lb2[1], anyB});
          scf::YieldOp::create(b, loc, pb);
        }
        p.assign(ifOp.getResults().begin(), ifOp.getResults().begin() + pRegs);
        for (int64_t h = 0; h < 2; ++h) {
          m[h] = ifOp.getResult(pRegs + h);
          alpha[h] = ifOp.getResult(pRegs + 2 + h);
          lsum[h] = ifOp.getResult(pRegs + 4 + h);
        }
        any = ifOp.getResult(pRegs + 6);
      } else {
        p = softmax(acc, lb, m, /*withMask=*/true, maskVals, alpha, lsum, any);
      }
      for (int64_t h = 0; h < 2; ++h)
        l[h] = kb.fma(alpha[h], l0[h], lsum[h]);
      // shiftV: the first stage holds K (and the mask) alone, both read.
      if (cfg.shiftV)
        release(t0);
      scf::YieldOp::create(b, loc, pack(m, l, oUndef, p, ahead0, t0));
      b.setInsertionPointToStart(&first.getElseRegion().front());
      // No key tile: O zero, made opaque, so that it joins the undefined O
      // of a nonempty range in the same registers (a constant would be
      // folded into both and copied into them per query tile).
      SmallVector<Value> p0(
          pRegs,
          undefO ? LLVM::PoisonOp::create(b, loc, i32).getResult() : em.i32(0));
      scf::YieldOp::create(
          b, loc,
          pack(m0, l0,
               undefO ? em.through("", SmallVector<Value>(oRegs, zero))
                      : SmallVector<Value>(oRegs, zero),
               p0, ahead0, t0));
    }
    auto body = [&](Value n0, ValueRange st, bool withMask) {
      Value prevTile = st.back();
      Value tile = tk.add(prevTile, 1);
      Value buf = tk.remu(tile, S);
      // shiftV: V of tile t - 1 is in tile t's stage.
      Value prevBuf = cfg.shiftV ? buf : tk.remu(prevTile, S);
      SmallVector<Value> o(st.begin() + 4, st.begin() + 4 + oRegs);
      SmallVector<Value> pPrev(st.begin() + 4 + oRegs,
                               st.begin() + 4 + oRegs + pRegs);
      SmallVector<Value> maskVals, ahead;
      if (maskAhead) {
        maskVals = tk.unpackMask(SmallVector<Value>(
            st.begin() + 4 + oRegs + pRegs, std::prev(st.end())));
        tk.prefetchMask(tk.add(n0, 2 * BN), blockRow, BM, BN);
      } else if (!stagedMask) {
        tk.prefetchMask(tk.add(n0, BN), blockRow, BM, BN);
        maskVals = loadMask(n0, withMask);
      }
      int64_t pending = 0;
      if (acquire) {
        acquire(tile);
        if (stagedMask && !maskRing) {
          syncWarpGroup();
          issueMaskCopy(n0);
        }
      } else {
        // Tile n0 has landed once at most S - 3 younger groups are pending;
        // the buffer of tile n0 - 2 tiles is free after the barrier.
        landed(S - 3);
        if (stagedMask) {
          issueMaskCopy(n0);
          pending = 1;
        }
        issue(tk.add(n0, (S - 2) * BN), tk.remu(tk.add(tile, S - 2), S));
      }
      SmallVector<Value> live(o);
      llvm::append_range(live, pPrev);
      live = em.through("wgmma.fence.sync.aligned;", live);
      o.assign(live.begin(), live.begin() + oRegs);
      pPrev.assign(live.begin() + oRegs, live.end());
      if (takeTurn)
        takeTurn();
      SmallVector<Value> acc = issueS(buf, n0);
      em.through("wgmma.commit_group.sync.aligned;", {});
      o = issuePV(pPrev, prevBuf, o, accumulateAfter(prevTile));
      em.through("wgmma.commit_group.sync.aligned;", {});
      if (passTurn)
        passTurn();
      acc = em.through("wgmma.wait_group.sync.aligned 1;", acc);
      Value m[2] = {st[0], st[1]}, alpha[2], lsum[2], any;
      if (stagedMask)
        maskVals = readMask(pending, buf);
      SmallVector<Value> p =
          softmax(acc, n0, m, withMask, maskVals, alpha, lsum, any);
      // After the softmax: this tile's mask registers are free again.
      if (maskAhead)
        ahead = loadAhead(n0);
      live = o;
      llvm::append_range(live, pPrev);
      live = em.through("wgmma.wait_group.sync.aligned 0;", live);
      o.assign(live.begin(), live.begin() + oRegs);
      if (release)
        release(cfg.shiftV ? tile : prevTile);
      // O = α O only where a row reference moved (warp-uniform).
      auto ifOp = scf::IfOp::create(b, loc, SmallVector<Type>(oRegs, f32), any,
                                    /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        SmallVector<Value> scaled;
        for (int64_t i = 0; i < oRegs; ++i)
          scaled.push_back(
              arith::MulFOp::create(b, loc, o[i], alpha[(i / 2) % 2]));
        scf::YieldOp::create(b, loc, scaled);
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, loc, o);
      }
      o.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      Value l[2];
      for (int64_t h = 0; h < 2; ++h)
        l[h] = kb.fma(alpha[h], st[2 + h], lsum[h]);
      scf::YieldOp::create(b, loc, pack(m, l, o, p, ahead, tile));
    };
    // Tiles from the second on (the first is done above).
    Value second = tk.add(lb, BN);
    Value mid = arith::MaxUIOp::create(b, loc, split, second);
    SmallVector<Value> st =
        tk.tileLoops(second, split, ub, BN, first.getResults(), body, mid);
    if (afterLastS)
      afterLastS();
    // The last tile's P V.
    auto last = scf::IfOp::create(b, loc, SmallVector<Type>(oRegs, f32), any0,
                                  /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&last.getThenRegion().front());
      // shiftV: the last V has a stage of its own after the last tile's.
      Value vTile = cfg.shiftV ? tk.add(st.back(), 1) : st.back();
      if (cfg.shiftV)
        acquire(vTile);
      SmallVector<Value> live(st.begin() + 4, st.begin() + 4 + oRegs + pRegs);
      live = em.through("wgmma.fence.sync.aligned;", live);
      SmallVector<Value> o(live.begin(), live.begin() + oRegs);
      SmallVector<Value> p(live.begin() + oRegs, live.end());
      o = issuePV(p, tk.remu(vTile, S), o, accumulateAfter(st.back()));
      em.through("wgmma.commit_group.sync.aligned;", {});
      o = em.through("wgmma.wait_group.sync.aligned 0;", o);
      // The producer refills this stage for the next query tile.
      if (persistent && release)
        release(vTile);
      scf::YieldOp::create(b, loc, o);
      b.setInsertionPointToStart(&last.getElseRegion().front());
      scf::YieldOp::create(
          b, loc, SmallVector<Value>(st.begin() + 4, st.begin() + 4 + oRegs));
    }
    if (nextTile)
      *nextTile = arith::SelectOp::create(
          b, loc, any0, tk.add(st.back(), cfg.shiftV ? 2 : 1), t0);
    SmallVector<Value> out(st.begin(), st.begin() + 4);
    llvm::append_range(out, last.getResults());
    return out;
  };

  // The block is staged in shared memory (over the buffers, after a
  // barrier) when e is the output's last dim.
  auto storeOutput = [&](ArrayRef<Value> finIn) {
    SmallVector<Value> fin(finIn);
    {
      Value l[2] = {fin[2], fin[3]};
      SmallVector<Value> o[2];
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t eb = 0; eb < E / 8; ++eb)
          for (int64_t j = 0; j < 2; ++j)
            o[h].push_back(fin[4 + 4 * eb + 2 * h + j]);
      Value m[2] = {fin[0], fin[1]};
      tk.foldHiddenKeys(lb, ub, BN, m, l, o, E);
      for (int64_t h = 0; h < 2; ++h) {
        fin[h] = m[h];
        fin[2 + h] = l[h];
        for (int64_t eb = 0; eb < E / 8; ++eb)
          for (int64_t j = 0; j < 2; ++j)
            fin[4 + 4 * eb + 2 * h + j] = o[h][eb * 2 + j];
      }
    }
    // Persistent: straight from the registers (pairs), since the next
    // tile's Q and K/V are already landing in the buffers.
    Value oTile;
    if (tk.outputStaged() && !persistent) {
      tk.blockBarrier();
      oTile = view(oType, 0);
    }
    tk.storeOutput(
        oTile, BM, E, blockRow, {fin[2], fin[3]}, {rows[0], rows[1]},
        [&](int64_t h) { return tk.add(warpRowLocal, tk.add(g, 8 * h)); },
        [&](int64_t h, int64_t eb, int64_t j) {
          return fin[4 + 4 * eb + 2 * h + j];
        },
        {fin[0], fin[1]}, /*mLog2=*/foldScale);
  };
  if (tmaTwoBlock) {
    // Q full (slot 0) and each stage's full barrier count thread 0's
    // expect-tx arrival; the TMA copies complete them with their bytes.
    // Tile t (keys lb + t * BN) is in stage t % S, phase t / S. At tile t,
    // after a block barrier (every warpgroup is done with tile t - 1, whose
    // stage is then free: each wgmma was waited for), thread 0 issues tile
    // t + S - 1 into that stage if it is within the loop (so none is in
    // flight at the end); then every thread waits for tile t. The tensor
    // cores read what TMA wrote through the same (async) proxy: no fence.
    StageBarriers bars{em, tk,
                       arith::IndexCastOp::create(
                           b, loc, i32, tk.add(base, cfg.barrierOffset(D, E))),
                       c0, S};
    bars.qCount = 1;
    bars.init(tid, T, 1);
    gpu::BarrierOp::create(b, loc);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c0);
    // Thread 0: tile t into stage t % S, where its keys start before ub.
    auto issueTile = [&](Value t) {
      Value n0 = tk.add(lb, tk.mul(t, BN));
      Value inLoop = arith::AndIOp::create(
          b, loc, first,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, n0, ub));
      auto one = scf::IfOp::create(b, loc, inLoop, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&one.getThenRegion().front());
      tmaLoadKV(bars, tk.remu(t, S), n0);
    };
    {
      auto one = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&one.getThenRegion().front());
      // K and V stay kernel parameters through their first rows too.
      prefetchQ();
      prefetchRow("k", r + 1, tk.clamp(lb, tk.Nv()), r + 2);
      prefetchRow("v", r + 1, tk.clamp(lb, tk.Nv()), r + 3);
      tmaLoadQ(bars);
    }
    for (int64_t st = 0; st + 1 < S; ++st)
      issueTile(tk.idx(st));
    bars.wait(bars.q(), c0);
    acquire = [&](Value t) {
      gpu::BarrierOp::create(b, loc);
      issueTile(tk.add(t, S - 1));
      bars.wait(bars.full(tk.remu(t, S)), tk.remu(tk.divu(t, S), 2));
    };
    Value split = tk.unmaskedEnd(lb, ub, blockRow, BN);
    storeOutput(tk.tileLoops(lb, split, ub, BN, init, tileBody));
    tk.terminate();
    return;
  }
  if (!ws) {
    Value split = tk.unmaskedEnd(lb, ub, blockRow, BN);
    SmallVector<Value> fin;
    if (!cfg.pipeline) {
      fin = tk.tileLoops(lb, split, ub, BN, init, tileBody);
    } else {
      fin = pipelinedLoop(lb, split, ub);
    }
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup, b.getI32IntegerAttr(0));
    storeOutput(fin);
    tk.terminate();
    return;
  }

  // Warp-specialized: warpgroup `warpGroups` (the last) only copies, the
  // others only compute. Stage s of the K/V ring has two mbarriers: full
  // (the producer's 128 threads arrive when their copies into it have
  // landed: cp.async.mbarrier.arrive.noinc) and empty (the consumers' threads
  // arrive once their wgmma reads of it are done); Q has one, full. Tile t
  // uses stage t % S in phase t / S; a producer's first wait on an empty
  // barrier (parity 1 of a fresh barrier) passes at once. Consumers fence
  // the async proxy after a full wait: the tensor cores read what cp.async
  // wrote through the generic proxy.
  const int64_t C = cfg.consumerThreads();
  StageBarriers bars{em, tk,
                     arith::IndexCastOp::create(
                         b, loc, i32, tk.add(base, cfg.barrierOffset(D, E))),
                     c0, S};
  bars.persistent = persistent;
  // Q full: the producer's 128 cp.async arrivals (and, persistent, thread
  // 0's after it wrote the tile number), or with TMA thread 0's
  // expect-tx arrival alone.
  bars.qCount = (cfg.tmaQ     ? 1
                 : persistent ? 129
                              : 128) +
                (cfg.trims() ? 1 : 0) + (cfg.segTrim && !persistent ? 1 : 0);
  // FP8: a stage is full after K's bytes (thread 0's expect-tx) and the
  // producer's 128 arrivals once V^T is written.
  if (vT)
    bars.extraSlot = cfg.stagingBarrierSlot();
  bars.extraSlots = cfg.stagingBufs + cfg.kLandedSlots();
  bars.init(tid, C,
            cfg.tma ? ((cfg.maskInRing() && !cfg.tmaMask) || vT ? 129 : 1)
                    : 128);
  gpu::BarrierOp::create(b, loc);
  // Persistent: the launch's query tiles in the order blocks take them
  // (grid x fastest, as one block per tile would run them; causal: in
  // groups of about `persistentBlocks` tiles over a few heads, longest
  // first within the group, so that the blocks working at once share K/V
  // in L2 and the tail runs short tiles), and the shared slots that pass
  // the next tile's number: one the consumers read after Q's full barrier,
  // two (by parity) the producer's thread 0 broadcasts to its warpgroup.
  Value tileSlot, bcastSlot;
  // Groups of max(1, blocks / gridX) heads (constants when static). With
  // dynamic sizes the mapping's divisors become multipliers made once;
  // static ones stay constant divisions, which LLVM turns into multiplies.
  const bool constMap = !persistent || (getConstantIntValue(gridXv) &&
                                        getConstantIntValue(batchV) &&
                                        getConstantIntValue(blocksV));
  TileKernel::FastDiv gridXDiv, spanDiv, headsDiv;
  Value heads, span;
  if (persistent && tk.causal) {
    heads = arith::MaxUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, blocksV, gridXv), tk.idx(1));
    span = arith::MulIOp::create(b, loc, heads, gridXv);
    spanDiv.d = span;
  }
  if (!constMap) {
    tk.prepareBatchDivs();
    gridXDiv = tk.fastDiv(gridXv);
    if (tk.causal) {
      spanDiv = tk.fastDiv(span);
      headsDiv = tk.fastDiv(heads);
    }
  }
  auto mapTile = [&](Value tile) -> std::pair<Value, Value> {
    if (!tk.causal) {
      if (constMap)
        return {arith::RemUIOp::create(b, loc, tile, gridXv),
                arith::DivUIOp::create(b, loc, tile, gridXv)};
      Value y = tk.divu(gridXDiv, tile);
      return {arith::SubIOp::create(b, loc, tile,
                                    arith::MulIOp::create(b, loc, y, gridXv)),
              y};
    }
    Value group = tk.divu(spanDiv, tile);
    Value head0 = arith::MulIOp::create(b, loc, group, heads);
    Value inGroup = arith::MinUIOp::create(
        b, loc, heads, arith::SubIOp::create(b, loc, batchV, head0));
    Value within = arith::SubIOp::create(
        b, loc, tile, arith::MulIOp::create(b, loc, group, span));
    if (constMap)
      return {arith::DivUIOp::create(b, loc, within, inGroup),
              tk.add(head0, arith::RemUIOp::create(b, loc, within, inGroup))};
    // The last group may hold fewer heads: a plain division there.
    Type idxT = b.getIndexType();
    auto split = scf::IfOp::create(
        b, loc, TypeRange{idxT, idxT},
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, inGroup, heads),
        /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&split.getThenRegion().front());
      Value q = tk.divu(headsDiv, within);
      scf::YieldOp::create(
          b, loc,
          ValueRange{
              q, arith::SubIOp::create(
                     b, loc, within, arith::MulIOp::create(b, loc, q, heads))});
      b.setInsertionPointToStart(&split.getElseRegion().front());
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::DivUIOp::create(b, loc, within, inGroup),
                     arith::RemUIOp::create(b, loc, within, inGroup)});
    }
    return {split.getResult(0), tk.add(head0, split.getResult(1))};
  };
  auto toI32 = [&](Value x) {
    return arith::IndexCastOp::create(b, loc, i32, x).getResult();
  };
  auto storeShared = [&](Value addr, Value x) {
    em.asmCall("st.shared.u32 [$0], $1;", {addr, toI32(x)}, "r,r", {}, "", 0);
  };
  auto loadShared = [&](Value addr) -> Value {
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(), em.asmI32("ld.shared.u32 $0, [$1];", {addr}, "r"));
  };
  // Persistent varlen: five i32 after those (cfg.varlenSlots).
  Value seqSlot;
  if (persistent) {
    tileSlot = bars.addr(tk.idx(2 + 2 * S));
    bcastSlot = bars.addr(tk.idx(3 + 2 * S));
    if (cfg.varlenSlots)
      seqSlot = bars.addr(tk.idx(4 + 2 * S));
  }
  // A runtime tile count or varlen by levels (cfg.publishMap): the
  // producer's mapping of each tile, (query block, batch entry), published
  // with it (the block as enterRows takes it, or varlen's tile slot); -1
  // past the last tile.
  const bool publishMap =
      persistent && cfg.publishMap && (!constMap || kb.varlenSeqs);
  auto mapAddr = [&](int64_t k) {
    return arith::AddIOp::create(b, loc, bars.addr(tk.idx(cfg.mapSlot())),
                                 em.i32(4 * k))
        .getResult();
  };
  auto seqAddr = [&](int64_t k) {
    return arith::AddIOp::create(b, loc, seqSlot, em.i32(4 * k)).getResult();
  };
  Value isProducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid, tk.idx(C));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    em.through("setmaxnreg.dec.sync.aligned.u32 " +
                   std::to_string(cfg.producerRegs()) + ";",
               {});
    tk.tid = arith::SubIOp::create(b, loc, tid, tk.idx(C));
    tk.threads = 128;
    // With TMA one thread issues K and V (the stage's bytes expected on its
    // full barrier); a mask tile in the ring stays with all 128 (cp.async).
    // A persistent block's thread 0 also takes and publishes its tiles.
    Value first = cfg.tma || persistent
                      ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              tk.tid, c0)
                            .getResult()
                      : Value();
    Value tmaThread = cfg.tma ? first : Value();
    auto ifFirst = [&](llvm::function_ref<void()> fn) {
      auto one = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&one.getThenRegion().front());
      fn();
    };
    // `fn` in the first lane of each producer warp.
    auto ifLane0 = [&](llvm::function_ref<void()> fn) {
      auto lane0 = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                tk.remu(tk.tid, 32), c0),
          /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&lane0.getThenRegion().front());
      fn();
    };
    // Segment ids (cfg.segTrim): producer thread p holds the [min, max] of
    // the key ids in granule p, keys [p G, (p + 1) G) of the 128 granules
    // over N (segTable, rebuilt when the ids' batch entry changes); a
    // tile's key range is from the first granule that its rows' [min, max]
    // of ids meets to the last (segRange): keys outside match no row.
    const bool segDynN = ShapedType::isDynamic(N);
    const int64_t segG = cfg.segTrim && !segDynN
                             ? llvm::alignTo(llvm::divideCeil(N, 128), 16)
                             : 0;
    // x granules in keys (a dynamic N's granule, ceil(N / 2048) * 16, at
    // run time).
    auto segKeys = [&](Value x) -> Value {
      if (!segDynN)
        return tk.mul(x, segG);
      Value g = tk.mul(tk.divu(tk.add(tk.Nv(), 2047), 2048), 16);
      return arith::MulIOp::create(b, loc, x, g);
    };
    // 64-bit ids saturated to i32 (TileKernel::segmentId); an interior
    // granule needs ids strictly inside i32 (below).
    auto segRead = [&](bool key, Value at) -> Value {
      return tk.segmentId(seg, key, at);
    };
    auto segMin = [&](Value x, Value y) {
      return tk.reduxCombine(seg.minKind(), x, y);
    };
    auto segMax = [&](Value x, Value y) {
      return tk.reduxCombine(seg.maxKind(), x, y);
    };
    auto segLe = [&](Value x, Value y) -> Value {
      return arith::CmpIOp::create(b, loc,
                                   seg.zeroExtend ? arith::CmpIPredicate::ule
                                                  : arith::CmpIPredicate::sle,
                                   x, y);
    };
    auto segTable = [&]() -> std::pair<Value, Value> {
      Value start = segKeys(tk.tid);
      Value lo0 = em.i32(seg.zeroExtend ? -1 : INT32_MAX);
      Value hi0 = em.i32(seg.zeroExtend ? 0 : INT32_MIN);
      auto scan = scf::ForOp::create(
          b, loc, c0, segDynN ? segKeys(tk.idx(1)) : tk.idx(segG), tk.idx(4),
          ValueRange{lo0, hi0},
          [&](OpBuilder &, Location, Value k, ValueRange st) {
            Value lo = st[0], hi = st[1];
            for (int64_t u = 0; u < 4; ++u) {
              // Past N: key N - 1 again (a granule past the keys then
              // meets a tile only where the last one does).
              Value id = segRead(
                  /*key=*/true, tk.clamp(tk.add(tk.add(start, k), u), tk.Nv()));
              lo = segMin(lo, id);
              hi = segMax(hi, id);
            }
            scf::YieldOp::create(b, loc, ValueRange{lo, hi});
          });
      return {scan.getResult(0), scan.getResult(1)};
    };
    // The batch entry the key ids are read at (the batch dims they vary with).
    auto segKey = [&]() {
      Value key = c0;
      for (unsigned d = 0; d < r; ++d)
        if (seg.keyBatchDims >> d & 1)
          key = tk.add(arith::MulIOp::create(b, loc, key, tk.size(d)),
                       tk.loops[d]);
      return key;
    };
    auto segWord = [&](int64_t word) {
      return arith::AddIOp::create(b, loc, bars.addr(tk.idx(cfg.segSlot())),
                                   em.i32(4 * word))
          .getResult();
    };
    // Up to four warp reductions of the producer's threads, combined
    // across its four warps through shared words [16 round, 16 round + 16)
    // (each round its own words: a warp may still read one round's while
    // another writes the next's, past the barrier between them).
    using RK = NVVM::ReduxKind;
    auto segReduce = [&](ArrayRef<std::pair<Value, RK>> vals,
                         int64_t round) -> SmallVector<Value> {
      SmallVector<Value> red;
      for (auto [v, k] : vals)
        red.push_back(NVVM::ReduxOp::create(
            b, loc, i32, v, NVVM::ReduxKindAttr::get(ctx, k), em.i32(-1)));
      while (red.size() < 4)
        red.push_back(em.i32(0));
      Value w = tk.divu(tk.tid, 32);
      Value slot = arith::AddIOp::create(
          b, loc, segWord(16 * round),
          arith::IndexCastOp::create(b, loc, i32, tk.mul(w, 16)));
      // 8-byte stores: the slots are 8-byte aligned.
      ifLane0([&] {
        for (int64_t k = 0; k < 4; k += 2)
          em.asmCall("st.shared.v2.u32 [$0], {$1, $2};",
                     {arith::AddIOp::create(b, loc, slot, em.i32(4 * k)),
                      red[k], red[k + 1]},
                     "r,r,r", {}, "", 0);
      });
      em.asmCall("bar.sync 9, 128;", {}, "", {}, "", 0);
      SmallVector<Value> out(vals.size());
      for (int64_t i = 0; i < 4; ++i)
        for (auto [j, vk] : llvm::enumerate(vals)) {
          Value x = em.asmI32("ld.shared.u32 $0, [$1];",
                              {segWord(16 * round + 4 * i + j)}, "r");
          out[j] = i ? tk.reduxCombine(vk.second, out[j], x) : x;
        }
      return out;
    };
    // [lb, ub) cut to the granules the tile's ids meet, and where every
    // row and key of a granule has the one id ("interior": the consumers
    // skip a pure region's select on tiles within them); every producer
    // thread takes part (three named barriers).
    struct SegRange {
      Value lb, ub, innerLo, innerHi;
    };
    auto segRange = [&](Value lb, Value ub, Value lo, Value hi) -> SegRange {
      Value qlo = em.i32(seg.zeroExtend ? -1 : INT32_MAX);
      Value qhi = em.i32(seg.zeroExtend ? 0 : INT32_MIN);
      for (int64_t i = 0; i < BM; i += 128) {
        Value id =
            segRead(/*key=*/false,
                    tk.clamp(tk.add(blockRow, tk.add(tk.tid, i)), tk.Mv()));
        qlo = segMin(qlo, id);
        qhi = segMax(qhi, id);
      }
      SmallVector<Value> q =
          segReduce({{qlo, seg.zeroExtend ? RK::UMIN : RK::MIN},
                     {qhi, seg.zeroExtend ? RK::UMAX : RK::MAX}},
                    0);
      qlo = q[0];
      qhi = q[1];
      auto eq = [&](Value x, Value y) {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
      };
      auto sel = [&](Value c, Value x, int64_t y) {
        return arith::SelectOp::create(b, loc, c, x, em.i32(y)).getResult();
      };
      Value meets =
          arith::AndIOp::create(b, loc, segLe(lo, qhi), segLe(qlo, hi));
      Value inner = arith::AndIOp::create(
          b, loc, arith::AndIOp::create(b, loc, eq(qlo, qhi), eq(lo, hi)),
          eq(lo, qlo));
      if (!seg.int32) // not a saturated value
        inner = arith::AndIOp::create(
            b, loc, inner,
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, qlo,
                                      em.i32(INT32_MAX)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, qlo,
                                      em.i32(INT32_MIN))));
      Value p = arith::IndexCastOp::create(b, loc, i32, tk.tid);
      SmallVector<Value> g = segReduce({{sel(meets, p, 128), RK::MIN},
                                        {sel(meets, p, -1), RK::MAX},
                                        {sel(inner, p, 128), RK::MIN},
                                        {sel(inner, p, -1), RK::MAX}},
                                       1);
      Value count = segReduce(
          {{arith::ExtUIOp::create(b, loc, i32, inner), RK::ADD}}, 2)[0];
      auto toIdx = [&](Value v) {
        return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
            .getResult();
      };
      // No granule met: the range's first key alone, so that a row's
      // state is that of a loop that saw keys (all scoring the fill); the
      // others are folded in after it (foldHiddenKeys) or, under -inf,
      // leave the row empty as before.
      Value none =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, g[0], g[1]);
      Value nlb = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, lb, segKeys(toIdx(g[0]))), ub);
      Value nub = arith::MaxSIOp::create(
          b, loc,
          arith::MinSIOp::create(b, loc, ub, segKeys(tk.add(toIdx(g[1]), 1))),
          nlb);
      nlb = arith::SelectOp::create(b, loc, none, lb, nlb);
      nub = arith::SelectOp::create(
          b, loc, none, arith::MinSIOp::create(b, loc, ub, tk.add(lb, 1)), nub);
      // Interior granules in one run (as sorted ids give): [innerLo,
      // innerHi); else none.
      Value run = arith::AndIOp::create(
          b, loc,
          eq(count,
             arith::AddIOp::create(
                 b, loc, arith::SubIOp::create(b, loc, g[3], g[2]), em.i32(1))),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                                em.i32(0)));
      Value innerLo =
          arith::SelectOp::create(b, loc, run, segKeys(toIdx(g[2])), c0);
      Value innerHi = arith::SelectOp::create(
          b, loc, run,
          arith::MinSIOp::create(b, loc, tk.Nv(),
                                 segKeys(tk.add(toIdx(g[3]), 1))),
          c0);
      if (!seg.pure)
        innerLo = innerHi = c0;
      return {nlb, nub, innerLo, innerHi};
    };
    auto segPublish = [&](const SegRange &sr) {
      em.asmCall("st.shared.v2.u32 [$0], {$1, $2};",
                 {segWord(48), toI32(sr.lb), toI32(sr.ub)}, "r,r,r", {}, "", 0);
      em.asmCall("st.shared.v2.u32 [$0], {$1, $2};",
                 {segWord(50), toI32(sr.innerLo), toI32(sr.innerHi)}, "r,r,r",
                 {}, "", 0);
    };
    // The tensor maps (`maps`), and (`rows`) the tile's first key row
    // (clamped to the keys) into L2 through K and V: they stay kernel
    // parameters (every caller argument is one).
    auto prefetch = [&](bool maps, bool rows) {
      for (StringRef name : {"k", "v", "mask"}) {
        if (name == "mask" && !cfg.tmaMask)
          continue;
        if (maps)
          em.asmCall("prefetch.tensormap [$0];",
                     {addressOf(memArg(("tmap_" + name).str()))}, "l", {}, "",
                     0);
        // The mask's first row of the block (the kernel's only generic
        // access to it: it stays a parameter the loader encodes).
        if (rows && name == "mask")
          prefetchRow(name, r, tk.clamp(blockRow, tk.Mv()), r + 1);
        else if (rows)
          prefetchRow(name, r + 1, tk.clamp(lb, tk.Nv()),
                      name == "k" ? r + 2 : r + 3);
      }
    };
    // FP8: tile t's V (row-major in the staging buffer, 128-byte swizzle)
    // into stage `stage` as V^T, E rows of keys in panels of 128 in the
    // 128-byte swizzle (a last one of 64 in the 64-byte swizzle), the keys
    // of each 16 in the order P's A fragments hold them
    // (positions 4t..4t+3: keys 2t, 2t+1, 8+2t, 9+2t). A unit is 16 keys x
    // 32 columns: one ldmatrix.x4.trans reads it as four 8 x 8 matrices of
    // byte pairs (keys 0-7 and 8-15 of columns c..c+15, then of c+16..c+31),
    // which leaves lane l with keys 2t, 2t+1 (and 8+2t, 9+2t) of the column
    // pair 2 (l / 4) (t = l % 4); two byte permutes per column pair make
    // the words of V^T rows e and e + 1 at positions 4t..4t+3, and one
    // stmatrix.x4 stores the four 8-row matrices (even and odd rows of each
    // 16 columns), 16 bytes per row. Then the stage's full arrival (after a
    // proxy fence: the tensor cores read what these threads wrote) and a
    // warpgroup barrier (the buffer is free).
    auto prmt = [&](Value x, Value y, int64_t sel) -> Value {
      return LLVM::InlineAsmOp::create(
                 b, loc, i32, ValueRange{x, y},
                 "prmt.b32 $0, $1, $2, " + std::to_string(sel) + ";", "=r,r,r",
                 /*has_side_effects=*/false,
                 /*is_align_stack=*/false, LLVM::TailCallKind::None,
                 LLVM::AsmDialectAttr::get(b.getContext(),
                                           LLVM::AsmDialect::AD_ATT),
                 ArrayAttr())
          .getResult(0);
    };
    // Both transposes: waits for tile t's V in its staging buffer; returns
    // the buffer and the producer thread's index, through an opaque copy
    // per tile (the lane's parts of the addresses are made per tile, not
    // hoisted out of the tile loop into registers the producer does not
    // have).
    auto stagedV = [&](Value t) -> std::pair<Value, Value> {
      const int64_t nb = cfg.stagingBufs;
      Value sb = nb == 1 ? c0 : tk.remu(t, nb);
      bars.wait(tk.add(sb, cfg.stagingBarrierSlot()),
                tk.remu(nb == 1 ? t : tk.divu(t, nb), 2));
      Value ptid = arith::IndexCastUIOp::create(
          b, loc, b.getIndexType(),
          em.asmI32("mov.u32 $0, $1;", {toI32(tk.tid)}, "r"));
      return {sb, ptid};
    };
    auto transposeV = [&](Value stage, Value t) {
      auto [sb, ptid] = stagedV(t);
      Value pl = tk.remu(ptid, 32), pw = tk.divu(ptid, 32);
      // ldmatrix: lane l gives row l % 8 of matrix j = l / 8: key
      // 8 (j % 2) + l % 8 of the unit, columns 16 (j / 2)...
      Value row = tk.remu(pl, 8), mat = tk.divu(pl, 8);
      Value srcRow = tk.add(tk.mul(tk.remu(mat, 2), 8), row);
      Value srcChunk = arith::XOrIOp::create(b, loc, tk.divu(mat, 2), row);
      // stmatrix: lane l gives row l % 8 of matrix j: V^T row
      // 16 (j / 2) + 2 (l % 8) + j % 2 of the unit's columns.
      Value dstRow = tk.add(tk.add(tk.mul(tk.divu(mat, 2), 16), tk.mul(row, 2)),
                            tk.remu(mat, 2));
      Value dstSwz = tk.remu(dstRow, 8);
      Value srcBase =
          tk.add(tk.add(tk.add(base, stageOff), tk.mul(sb, BN * Ep * 2)),
                 tk.mul(srcRow, 128));
      Value dstBase =
          tk.add(tk.add(tk.add(base, vOff), tk.mul(stage, BN * Ep * 2)),
                 tk.mul(dstRow, 128));
      // Units: BN / 16 key blocks of 16 x E / 32 column blocks. Key block k
      // is chunk k % 8 of V^T's panel k / 8 (panels E * 128 bytes apart).
      // Whole panels: warp w takes key blocks w BN / 64 .. (BN / 64 each);
      // with a last panel of 64 keys (64-byte rows, chunk c at
      // c ^ (row / 2) % 4), warp w takes blocks w, w + 4, .., so that each
      // step's panel is a constant.
      const int64_t colBlocks = E / 32, perWarp = BN / 64;
      const bool halfPanel = BN % 128 != 0;
      for (int64_t kb2 = 0; kb2 < perWarp; ++kb2) {
        Value kblk =
            halfPanel ? tk.add(pw, 4 * kb2) : tk.add(tk.mul(pw, perWarp), kb2);
        Value src0 = tk.add(srcBase, tk.mul(kblk, 16 * 128));
        const bool half = halfPanel && 4 * kb2 >= BN / 128 * 8;
        // Row pitch of this step's panel, and its start.
        const int64_t pitch = half ? 64 : 128;
        Value dst0;
        if (half) {
          // dstBase holds row * 128: the 64-byte rows take row * 64.
          Value swz = tk.remu(tk.divu(dstRow, 2), 4);
          Value chunk = arith::XOrIOp::create(b, loc, pw, swz);
          dst0 = tk.add(tk.add(dstBase, BN / 128 * E * 128),
                        tk.add(tk.mul(dstRow, -64), tk.mul(chunk, 16)));
        } else if (BN == 128) {
          Value dstChunk = arith::XOrIOp::create(b, loc, kblk, dstSwz);
          dst0 = tk.add(dstBase, tk.mul(dstChunk, 16));
        } else {
          Value dstChunk =
              arith::XOrIOp::create(b, loc, tk.remu(kblk, 8), dstSwz);
          Value panel = halfPanel ? tk.idx(4 * kb2 / 8) : tk.divu(kblk, 8);
          dst0 = tk.add(tk.add(dstBase, tk.mul(panel, E * 128)),
                        tk.mul(dstChunk, 16));
        }
        for (int64_t cbi = 0; cbi < colBlocks; ++cbi) {
          // Columns 32 cbi..: panel cbi / 4, chunks 2 (cbi % 4) + j / 2.
          Value chunk =
              arith::XOrIOp::create(b, loc, srcChunk, tk.idx(2 * (cbi % 4)));
          Value src =
              tk.add(tk.add(src0, (cbi / 4) * BN * 128), tk.mul(chunk, 16));
          auto ld = LLVM::InlineAsmOp::create(
              b, loc,
              LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               {i32, i32, i32, i32}),
              ValueRange{toI32(src)},
              "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, "
              "$3}, [$4];",
              "=r,=r,=r,=r,r", /*has_side_effects=*/true,
              /*is_align_stack=*/false, LLVM::TailCallKind::None,
              LLVM::AsmDialectAttr::get(b.getContext(),
                                        LLVM::AsmDialect::AD_ATT),
              ArrayAttr());
          Value x[4];
          for (int64_t i = 0; i < 4; ++i)
            x[i] = LLVM::ExtractValueOp::create(b, loc, ld.getResult(0),
                                                ArrayRef<int64_t>{i});
          // x[0], x[1]: keys 0-7 / 8-15 of columns c.. (pair 2 (l / 4));
          // x[2], x[3]: the same of columns c + 16...
          Value y[4] = {prmt(x[0], x[1], 0x6420), prmt(x[0], x[1], 0x7531),
                        prmt(x[2], x[3], 0x6420), prmt(x[2], x[3], 0x7531)};
          Value dst = tk.add(dst0, cbi * 32 * pitch);
          em.asmCall("stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, "
                     "$2, $3, $4};",
                     {toI32(dst), y[0], y[1], y[2], y[3]}, "r,r,r,r,r", {}, "",
                     0);
        }
      }
      em.through("fence.proxy.async.shared::cta;", {});
      bars.arrive(bars.full(stage));
      em.asmCall("bar.sync 10, 128;", {}, "", {}, "", 0);
    };
    // TF32: tile t's V (row-major in the staging buffer: 32-column panels
    // of BN rows, 128-byte swizzle) into stage `stage` as V^T: E rows of
    // 128-byte panels of 32 keys (panels E * 128 bytes apart), the keys of
    // each 8 in the order P's A fragments hold them (positions t and t + 4:
    // keys 2t and 2t + 1), each value rounded to TF32. A unit is 4 columns
    // (chunk ec) x the even or odd keys (h) of an 8-key group G: four
    // 16-byte reads (keys 8G + h + 2q, q = 0..3), four 16-byte writes (V^T
    // rows 4 ec + j at positions 8G + 4h..). Units are spread over the
    // lanes so that each group of 8 lanes (one shared-memory wavefront of
    // 16-byte accesses) reads and writes 4 distinct chunks: lane bits
    // h, ec bit 1, G bit 0, then ec bit 0, the rest of ec, the rest of G.
    // Then the stage's full arrival (after a proxy fence) and a warpgroup
    // barrier (the staging buffer is free).
    auto transposeVTf32 = [&](Value stage, Value t) {
      auto [sb, ptid] = stagedV(t);
      Value srcBuf = tk.add(tk.add(base, stageOff), tk.mul(sb, BN * Ep * 2));
      Value dstBuf = tk.add(tk.add(base, vOff), tk.mul(stage, BN * Ep * 2));
      const int64_t units = BN * E / 16, ecHiCount = E / 16;
      // K of this tile first: rounded in place once it has landed (its
      // stores are fenced with V^T's below).
      bars.wait(tk.add(stage, cfg.kLandedSlot()), tk.remu(tk.divu(t, S), 2));
      roundInPlace(
          toI32(tk.add(tk.add(base, kOff), tk.mul(stage, BN * Dp * 2))), ptid,
          BN * Dp * 2 / 16, 128);
      for (int64_t it = 0; it * 128 < units; ++it) {
        OpBuilder::InsertionGuard guard(b);
        Value u = tk.add(ptid, it * 128);
        if ((it + 1) * 128 > units) {
          auto within = scf::IfOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, u,
                                    tk.idx(units)),
              /*withElse=*/false);
          b.setInsertionPointToStart(&within.getThenRegion().front());
        }
        Value h = tk.remu(u, 2);
        Value ec1 = tk.remu(tk.divu(u, 2), 2);
        Value g0 = tk.remu(tk.divu(u, 4), 2);
        Value rest = tk.divu(u, 8);
        Value ec0 = tk.remu(rest, 2);
        Value rest2 = tk.divu(rest, 2);
        Value ec = tk.add(tk.add(ec0, tk.mul(ec1, 2)),
                          tk.mul(tk.remu(rest2, ecHiCount), 4));
        Value grp = tk.add(g0, tk.mul(tk.divu(rest2, ecHiCount), 2));
        // Reads: key 8G + 2q + h, chunk (ec % 8) ^ (key % 8) of panel
        // ec / 8 (BN rows of 128 bytes).
        Value key0 = tk.add(tk.mul(grp, 8), h);
        Value ecLo = tk.remu(ec, 8);
        Value src0 = tk.add(tk.add(srcBuf, tk.mul(tk.divu(ec, 8), BN * 128)),
                            tk.mul(key0, 128));
        Value x[4][4];
        for (int64_t q = 0; q < 4; ++q) {
          Value chunk = arith::XOrIOp::create(b, loc, ecLo, tk.add(h, 2 * q));
          Value src = tk.add(tk.add(src0, 2 * q * 128), tk.mul(chunk, 16));
          Value ld = loadV4(toI32(src));
          for (int64_t j = 0; j < 4; ++j)
            x[q][j] = roundTf32(wordOf(ld, j));
        }
        // Writes: V^T row e = 4 ec + j of panel G / 4, chunk
        // (2 (G % 4) + h) ^ (e % 8).
        Value cpos = tk.add(tk.mul(tk.remu(grp, 4), 2), h);
        Value dst0 = tk.add(tk.add(dstBuf, tk.mul(tk.divu(grp, 4), E * 128)),
                            tk.mul(ec, 4 * 128));
        Value eLo = tk.mul(tk.remu(ec, 2), 4);
        for (int64_t j = 0; j < 4; ++j) {
          Value chunk = arith::XOrIOp::create(b, loc, cpos, tk.add(eLo, j));
          Value dst = tk.add(tk.add(dst0, j * 128), tk.mul(chunk, 16));
          storeV4(toI32(dst), {x[0][j], x[1][j], x[2][j], x[3][j]});
        }
      }
      em.through("fence.proxy.async.shared::cta;", {});
      bars.arrive(bars.full(stage));
      em.asmCall("bar.sync 10, 128;", {}, "", {}, "", 0);
    };
    // The query tile's K/V tiles from key `from` to `to`, numbered on from
    // t; returns the next number.
    const bool vAhead = vT && cfg.stagingBufs == 2;
    auto streamKV = [&](Value t0, Value from, Value to) -> Value {
      // FP8 with two staging buffers: the first tile's V now, each next
      // one's before the transpose of the tile before it.
      if (vAhead) {
        auto one = scf::IfOp::create(
            b, loc,
            arith::AndIOp::create(
                b, loc, tmaThread,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, from,
                                      to)),
            false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&one.getThenRegion().front());
        tmaLoadStagedV(bars, tk.remu(t0, 2), from);
      }
      auto loop = scf::ForOp::create(
          b, loc, from, to, tk.idx(BN), ValueRange{t0},
          [&](OpBuilder &, Location, Value n0, ValueRange st) {
            Value t = st[0];
            Value stage = tk.remu(t, S);
            Value parity = arith::XOrIOp::create(
                b, loc, tk.remu(tk.divu(t, S), 2), tk.idx(1));
            bars.wait(bars.empty(stage), parity);
            if (!cfg.tma) {
              issue(n0, stage);
            } else {
              {
                auto one = scf::IfOp::create(b, loc, tmaThread, false);
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(&one.getThenRegion().front());
                if (cfg.shiftV)
                  tmaLoadShifted(bars, stage, n0,
                                 arith::CmpIOp::create(
                                     b, loc, arith::CmpIPredicate::ne, n0, lb));
                else
                  tmaLoadKV(bars, stage, n0);
                if (vAhead) {
                  Value next = tk.add(n0, BN);
                  auto ahead = scf::IfOp::create(
                      b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            next, to),
                      false);
                  OpBuilder::InsertionGuard g2(b);
                  b.setInsertionPointToStart(&ahead.getThenRegion().front());
                  tmaLoadStagedV(bars, tk.remu(tk.add(t, 1), 2), next);
                }
              }
              if (copyMaskTile) {
                SmallVector<Value> tokens;
                copyMaskTile(tokens, n0, stage);
                nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                        tokens);
              }
              if (fp8)
                transposeV(stage, t);
              else if (tf32)
                transposeVTf32(stage, t);
            }
            if (!cfg.tma || copyMaskTile)
              bars.arriveOnCopies(bars.full(stage));
            scf::YieldOp::create(b, loc, ValueRange{tk.add(t, 1)});
          });
      return loop.getResult(0);
    };
    // shiftV: after a query tile's K/V tiles (keys lb..end), numbered to
    // t, the stage with the last one's V (none for an empty loop); returns
    // the next number.
    auto streamLastV = [&](Value t, Value end) -> Value {
      if (!cfg.shiftV)
        return t;
      auto any = scf::IfOp::create(
          b, loc, TypeRange{b.getIndexType()},
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lb, end),
          /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&any.getThenRegion().front());
      Value stage = tk.remu(t, S);
      bars.wait(
          bars.empty(stage),
          arith::XOrIOp::create(b, loc, tk.remu(tk.divu(t, S), 2), tk.idx(1)));
      Value last = tk.add(
          lb, tk.mul(tk.divu(tk.add(arith::SubIOp::create(b, loc, end, lb), -1),
                             BN),
                     BN));
      {
        auto one = scf::IfOp::create(b, loc, tmaThread, false);
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(&one.getThenRegion().front());
        tmaLoadLastV(bars, stage, last);
      }
      // The full barrier counts the warpgroup's copy arrivals too.
      if (copyMaskTile)
        bars.arriveOnCopies(bars.full(stage));
      scf::YieldOp::create(b, loc, ValueRange{tk.add(t, 1)});
      b.setInsertionPointToStart(&any.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{t});
      return any.getResult(0);
    };
    // Q by TMA (thread 0: the bytes expected on Q's full barrier, a box
    // of 64 columns x BM rows per panel), else by the warpgroup's cp.async.
    auto tmaQ = [&]() {
      prefetchQ();
      tmaLoadQ(bars);
    };
    if (!persistent) {
      auto issueQ = [&] {
        if (cfg.tmaQ) {
          ifFirst(tmaQ);
        } else {
          // Q in registers: the consumers read it, its first row into L2
          // here (the kernel's parameters follow their first use, and
          // callers pass q, k, v in that order); the arrivals stay (the
          // key trim publishes with them).
          if (cfg.qInRegs)
            ifFirst(prefetchQ);
          else
            copyQ();
          bars.arriveOnCopies(bars.q());
        }
        if (cfg.tma)
          ifFirst([&] { prefetch(/*maps=*/true, /*rows=*/true); });
      };
      if (!cfg.trims()) {
        Value from = lb, to = ub;
        if (cfg.segTrim) {
          auto [lo, hi] = segTable();
          SegRange sr = segRange(lb, ub, lo, hi);
          from = sr.lb;
          to = sr.ub;
          // Published with one more arrival on Q's full barrier.
          ifFirst([&] {
            segPublish(sr);
            bars.arrive(bars.q());
          });
        }
        issueQ();
        streamLastV(streamKV(c0, from, to), to);
      } else {
        // Key padding: the warps find the last key the block's mask row
        // keeps (their loads issued first, so that they do not queue
        // behind Q and the first stages' tiles, which go out meanwhile),
        // and the loop ends there (but not before those tiles: they are
        // consumed either way). Thread 0's arrival on Q's full barrier
        // publishes the end.
        Value early = arith::MinSIOp::create(b, loc, ub, tk.add(lb, S * BN));
        Value next;
        Value last = tk.lastKeptKey([&] {
          issueQ();
          next = streamKV(c0, lb, early);
        });
        ifLane0([&] {
          storeShared(bars.addr(tk.add(tk.divu(tk.tid, 32), 2 * S + 1)),
                      arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                 last));
        });
        em.asmCall("bar.sync 9, 128;", {}, "", {}, "", 0);
        Value lastAll;
        for (int64_t w = 0; w < 4; ++w) {
          Value l = loadShared(bars.addr(tk.idx(2 * S + 1 + w)));
          lastAll = w ? arith::MaxSIOp::create(b, loc, lastAll, l) : l;
        }
        Value end = arith::MaxSIOp::create(
            b, loc, early,
            arith::MinSIOp::create(b, loc, ub, tk.add(lastAll, 1)));
        ifFirst([&] {
          storeShared(bars.addr(tk.idx(2 * S + 5)), end);
          bars.arrive(bars.q());
        });
        streamLastV(streamKV(next, tk.add(lb, S * BN), end), end);
      }
    } else {
      // Tile `tile` (j-th of the block) to the consumers: once they have
      // released Q, thread 0 writes its number and arrives on Q's full
      // barrier (release; with TMA expecting Q's bytes, whose copies it
      // then issues); without TMA the warpgroup's cp.async arrivals follow
      // (after Q's copies, or none past the last tile).
      SegRange segNow; // the tile's range (segment ids), published with it
      auto publish = [&](Value tile, Value j, bool withQ, Value x = {},
                         Value y = {}) {
        bars.wait(bars.qEmpty(),
                  arith::XOrIOp::create(b, loc, tk.remu(j, 2), tk.idx(1)));
        ifFirst([&] {
          storeShared(tileSlot, tile);
          if (publishMap) {
            storeShared(mapAddr(0), withQ ? x : tk.idx(-1));
            storeShared(mapAddr(1), withQ ? y : c0);
          }
          if (withQ && cfg.segTrim)
            segPublish(segNow);
          // Varlen: where the tile sits in its sequence (setVarlen's).
          if (withQ && seqSlot) {
            Value v[5] = {blockRow, tk.qBase, tk.kBase, tk.rowLimit,
                          tk.keyLimit};
            for (int64_t k = 0; k < 5; ++k)
              storeShared(seqAddr(k), v[k]);
          }
          if (withQ && cfg.tmaQ)
            tmaQ();
          else
            bars.arrive(bars.q());
        });
      };
      if (cfg.tma)
        ifFirst([&] { prefetch(/*maps=*/true, /*rows=*/false); });
      Value cTiles = tilesV;
      // Varlen by levels: under causal tile t of every sequence needs the
      // keys of t + 1 tiles whatever the sequence's length (bottom-right:
      // plus its offset), so the tiles are taken from the last level down,
      // tile tmax - 1 of each sequence, then tmax - 2, ... over groups of
      // heads of about a block each, as the dense kernel takes query blocks
      // longest first. The slot order (each sequence's tiles in turn, its
      // longest first) ends the launch on a sawtooth of long and short
      // tiles, and idles up to a long tile's time in the tail. By levels,
      // where there are no more tiles than slots (S x tmax <= floor(T /
      // BM) + S: equal lengths have none empty, where the slots leave up
      // to one per sequence, which is also what non-causal ones gain);
      // otherwise the slots.
      //
      // Under causal (up to 256 sequences) the levels are exact, with no
      // empty tile for any lengths: each producer lane holds the tile
      // counts n_s of sequences lane + 32 j, and a tile number's
      // level t is the largest with W(t) > its rank, W(t) = sum_s max(0,
      // n_s - t) the tiles at levels >= t (a binary search over t of warp
      // sums); within the level it is the j-th sequence with n_s > t
      // (ballots). Random lengths: 1.03-1.05x at S = 64 and 128. Past 128
      // sequences the tmax levels where they apply (equal lengths: the
      // per-tile search over eight chunks cost 1.6% at 256), else exact
      // (random lengths 1.01-1.05x). Not without
      // causal, where a tile's work is its sequence's length, not its
      // level, and random lengths measured 0.96-1.02x.
      const int64_t seqs = kb.varlenSeqs;
      const bool levels = kb.varlenLevels && publishMap && seqSlot;
      const bool exact = levels && tk.causal;
      Value lvlOn, lvlMax, lvlHeads, lvlSpan;
      SmallVector<Value> lvlCounts; // exact: the lane's n_s (i32)
      Value lvlTotal;               // exact: each head's tiles
      Value lvlCheap;               // past 128 sequences: the tmax levels apply
      auto redux = [&](StringRef op, Value x) {
        return em.asmI32(
            ("redux.sync." + op + ".u32 $0, $1, 0xffffffff;").str(), {x}, "r");
      };
      auto i32c = [&](int64_t v) {
        return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
      };
      auto toIdx = [&](Value x) {
        return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x)
            .getResult();
      };
      if (exact) {
        lvlCounts = tk.varlenTileCounts(BM);
        Value most = i32c(0), sum = i32c(0);
        for (Value n : lvlCounts) {
          most = arith::MaxUIOp::create(b, loc, most, n);
          sum = arith::AddIOp::create(b, loc, sum, n);
        }
        lvlMax = toIdx(redux("max", most));
        // At most the slots: valid tables have no more tiles (each sequence
        // floor(len / BM) + 1 at most); hostile ones (overlapping
        // sequences) leave the rest out instead of numbering past them.
        Value perHead =
            arith::MinUIOp::create(b, loc, toIdx(redux("add", sum)), gridXv);
        lvlTotal = perHead;
        if (seqs > 128) {
          // tmax levels where S x tmax <= the slots: the same order, and no
          // search over eight chunks per tile (1.6% at 256 sequences).
          Value lvlMax1 = arith::MaxUIOp::create(b, loc, lvlMax, tk.idx(1));
          Value cheapTiles = tk.mul(lvlMax1, seqs);
          lvlCheap = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                           cheapTiles, gridXv);
          lvlMax = lvlMax1;
          perHead =
              arith::SelectOp::create(b, loc, lvlCheap, cheapTiles, perHead);
        }
        lvlOn = arith::ConstantIntOp::create(b, loc, 1, 1);
        cTiles = arith::MulIOp::create(b, loc, perHead, batchV);
        Value perHead1 = arith::MaxUIOp::create(b, loc, perHead, tk.idx(1));
        lvlHeads = arith::MaxUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, blocksV, perHead1),
            tk.idx(1));
        lvlSpan = arith::MulIOp::create(b, loc, lvlHeads, perHead1);
      } else if (levels) {
        Value most = i32c(0);
        for (Value n : tk.varlenTileCounts(BM))
          most = arith::MaxUIOp::create(b, loc, most, n);
        lvlMax = arith::MaxUIOp::create(b, loc, toIdx(redux("max", most)),
                                        tk.idx(1));
        Value perHead = tk.mul(lvlMax, seqs);
        Value all = arith::MulIOp::create(b, loc, perHead, batchV);
        lvlOn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                      perHead, gridXv);
        cTiles = arith::SelectOp::create(b, loc, lvlOn, all, tilesV);
        lvlHeads = arith::MaxUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, blocksV, perHead),
            tk.idx(1));
        // 1 where the slots apply: their tile numbers need not divide (and
        // the span need not fit in 32 bits).
        lvlSpan = arith::SelectOp::create(
            b, loc, lvlOn, arith::MulIOp::create(b, loc, lvlHeads, perHead),
            tk.idx(1));
      }
      // A block past the last tile (where `over`, in thread 0): the last
      // block to get there (all others have taken their last number)
      // zeroes the counters for the next launch.
      Value counter = memArg("tile_counter");
      auto finish = [&](Value over) {
        auto ifOver = scf::IfOp::create(b, loc, over, /*withElse=*/false);
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&ifOver.getThenRegion().front());
        Value done = memref::AtomicRMWOp::create(
            b, loc, arith::AtomicRMWKind::addi, em.i32(1), counter,
            ValueRange{tk.idx(1)});
        Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           done, toI32(tk.add(blocksV, -1)));
        auto ifLast = scf::IfOp::create(b, loc, last, /*withElse=*/false);
        b.setInsertionPointToStart(&ifLast.getThenRegion().front());
        for (int64_t i = 0; i < 2; ++i)
          memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                      em.i32(0), counter,
                                      ValueRange{tk.idx(i)});
      };
      // By levels there may be fewer tiles than blocks: those take none.
      if (levels)
        ifFirst([&] {
          finish(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                       launch.getBlockIds().x, cTiles));
        });
      // (tile, t, j), and with segment ids (ids' batch entry, granule
      // min, max) as last built.
      SmallVector<Type> types(3, b.getIndexType());
      SmallVector<Value> inits = {launch.getBlockIds().x, c0, c0};
      if (cfg.segTrim) {
        types.append({b.getIndexType(), i32, i32});
        inits.append({tk.idx(-1), em.i32(0), em.i32(0)});
      }
      auto loop = scf::WhileOp::create(b, loc, types, inits);
      {
        OpBuilder::InsertionGuard guard(b);
        Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                      SmallVector<Location>(types.size(), loc));
        b.setInsertionPointToStart(before);
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           before->getArgument(0), cTiles);
        scf::ConditionOp::create(b, loc, more, before->getArguments());
        Block *after = b.createBlock(&loop.getAfter(), {}, types,
                                     SmallVector<Location>(types.size(), loc));
        b.setInsertionPointToStart(after);
        Value tile = after->getArgument(0), t = after->getArgument(1),
              j = after->getArgument(2);
        auto [x, yTile] = mapTile(tile);
        Value y = yTile;
        if (levels) {
          // Group, level (from the last), head and sequence of `tile`.
          // 32-bit divisions (tile numbers are below 2^31): a few
          // instructions of the producer's thread per tile.
          auto div32 = [&](Value n, Value d) -> Value {
            return arith::IndexCastUIOp::create(
                b, loc, b.getIndexType(),
                arith::DivUIOp::create(b, loc, toI32(n), toI32(d)));
          };
          Value group = div32(tile, lvlSpan);
          Value head0 = arith::MulIOp::create(b, loc, group, lvlHeads);
          Value inGroup = arith::MinUIOp::create(
              b, loc, lvlHeads, arith::SubIOp::create(b, loc, batchV, head0));
          Value within = arith::SubIOp::create(
              b, loc, tile, arith::MulIOp::create(b, loc, group, lvlSpan));
          // At least 1: past the last tile (by slots) the values are unused.
          Value width =
              arith::MaxUIOp::create(b, loc, tk.mul(inGroup, seqs), tk.idx(1));
          // (sequence, tile, batch entry) of `tile` by the tmax levels.
          auto tmaxMap = [&]() -> std::array<Value, 3> {
            Value level = div32(within, width);
            Value rest = arith::SubIOp::create(
                b, loc, within, arith::MulIOp::create(b, loc, level, width));
            return {tk.remu(rest, seqs),
                    arith::SubIOp::create(b, loc, tk.add(lvlMax, -1), level),
                    tk.add(head0, tk.divu(rest, seqs))};
          };
          // (sequence, tile, batch entry) of `tile`, exactly.
          auto exactMap = [&]() -> std::array<Value, 3> {
            // rank = within / inGroup; t: the largest level with W(t) >
            // rank (W(0) is the head's tiles, W(tmax) = 0).
            Value inG = toI32(inGroup);
            Value rank = arith::DivUIOp::create(b, loc, toI32(within), inG);
            auto wOf = [&](Value t) {
              Value sum = i32c(0);
              for (Value n : lvlCounts) {
                Value above = arith::SelectOp::create(
                    b, loc,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, n,
                                          t),
                    arith::SubIOp::create(b, loc, n, t), i32c(0));
                sum = arith::AddIOp::create(b, loc, sum, above);
              }
              return redux("add", sum);
            };
            Type i32t = b.getI32Type();
            SmallVector<Type> st(4, i32t);
            auto search = scf::WhileOp::create(
                b, loc, st,
                ValueRange{i32c(0), toI32(lvlMax), toI32(lvlTotal), i32c(0)});
            {
              OpBuilder::InsertionGuard g2(b);
              Block *bb = b.createBlock(&search.getBefore(), {}, st,
                                        SmallVector<Location>(4, loc));
              b.setInsertionPointToStart(bb);
              Value gap = arith::SubIOp::create(b, loc, bb->getArgument(1),
                                                bb->getArgument(0));
              scf::ConditionOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, gap,
                                        i32c(1)),
                  bb->getArguments());
              Block *ab = b.createBlock(&search.getAfter(), {}, st,
                                        SmallVector<Location>(4, loc));
              b.setInsertionPointToStart(ab);
              Value lo = ab->getArgument(0), hi = ab->getArgument(1);
              Value mid = arith::ShRUIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, lo, hi), i32c(1));
              Value w = wOf(mid);
              Value big = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ugt, w, rank);
              auto pick = [&](Value x, Value y) {
                return arith::SelectOp::create(b, loc, big, x, y).getResult();
              };
              scf::YieldOp::create(b, loc,
                                   ValueRange{pick(mid, lo), pick(hi, mid),
                                              pick(w, ab->getArgument(2)),
                                              pick(ab->getArgument(3), w)});
            }
            // (lo, hi, W(lo), W(hi)) from (0, tmax, the head's tiles, 0):
            // at the end hi = t + 1.
            Value t = search.getResult(0);
            Value wT = search.getResult(2), wUp = search.getResult(3);
            Value cnt = arith::SubIOp::create(b, loc, wT, wUp);
            Value k = arith::SubIOp::create(
                b, loc, toI32(within), arith::MulIOp::create(b, loc, inG, wUp));
            Value headIn = arith::DivUIOp::create(b, loc, k, cnt);
            Value j = arith::SubIOp::create(
                b, loc, k, arith::MulIOp::create(b, loc, headIn, cnt));
            // The j-th sequence with n_s > t: ballots per chunk of 32.
            auto ballot = [&](Value x) {
              return em.asmI32("{ .reg .pred p; setp.ne.u32 p, $1, 0; "
                               "vote.sync.ballot.b32 $0, p, 0xffffffff; }",
                               {x}, "r");
            };
            auto popc = [&](Value x) {
              return em.asmI32("popc.b32 $0, $1;", {x}, "r");
            };
            Value ltMask = em.asmI32("mov.u32 $0, %lanemask_lt;", {}, "");
            Value seq = i32c(0), left = j;
            Value found = arith::ConstantIntOp::create(b, loc, 0, 1);
            for (auto [c, n] : llvm::enumerate(lvlCounts)) {
              Value live = arith::ExtUIOp::create(
                  b, loc, i32t,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, n,
                                        t));
              Value mask = ballot(live);
              Value here = popc(mask);
              // This lane holds the left-th live sequence of the chunk.
              Value before = popc(arith::AndIOp::create(b, loc, mask, ltMask));
              Value mine = arith::AndIOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, live,
                                        i32c(0)),
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        before, left));
              Value who = ballot(arith::ExtUIOp::create(b, loc, i32t, mine));
              Value bit = em.asmI32("bfind.u32 $0, $1;", {who}, "r");
              Value inChunk = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, left, here);
              Value take = arith::AndIOp::create(
                  b, loc, inChunk,
                  arith::XOrIOp::create(
                      b, loc, found,
                      arith::ConstantIntOp::create(b, loc, 1, 1)));
              seq = arith::SelectOp::create(
                  b, loc, take,
                  arith::AddIOp::create(b, loc, bit,
                                        i32c(32 * static_cast<int64_t>(c))),
                  seq);
              left = arith::SelectOp::create(
                  b, loc, arith::OrIOp::create(b, loc, found, inChunk), left,
                  arith::SubIOp::create(b, loc, left, here));
              found = arith::OrIOp::create(b, loc, found, inChunk);
            }
            return {toIdx(seq), toIdx(t), tk.add(head0, toIdx(headIn))};
          };
          if (exact) {
            std::array<Value, 3> r;
            if (lvlCheap) {
              // The tmax levels where they have no more tiles than slots
              // (no search per tile), else the exact ones.
              Type it = b.getIndexType();
              auto pick = scf::IfOp::create(b, loc, TypeRange{it, it, it},
                                            lvlCheap, /*withElse=*/true);
              OpBuilder::InsertionGuard g2(b);
              b.setInsertionPointToStart(&pick.getThenRegion().front());
              std::array<Value, 3> c = tmaxMap();
              scf::YieldOp::create(b, loc, ValueRange{c[0], c[1], c[2]});
              b.setInsertionPointToStart(&pick.getElseRegion().front());
              std::array<Value, 3> e = exactMap();
              scf::YieldOp::create(b, loc, ValueRange{e[0], e[1], e[2]});
              r = {pick.getResult(0), pick.getResult(1), pick.getResult(2)};
            } else {
              r = exactMap();
            }
            tk.levelOn = lvlOn;
            tk.levelSeq = r[0];
            tk.levelTile = r[1];
            y = r[2];
          } else {
            std::array<Value, 3> c = tmaxMap();
            tk.levelOn = lvlOn;
            tk.levelSeq = c[0];
            tk.levelTile = c[1];
            y = arith::SelectOp::create(b, loc, lvlOn, c[2], y);
          }
        }
        // With publishMap the consumers get the query block itself (no
        // causal reversal on their side: it needs the tile count).
        Value bx = publishMap && !kb.varlenSeqs ? blockOf(x) : x;
        enterRows(bx, Value(), bx != x);
        tk.levelOn = Value();
        tk.setBatch(y);
        enterKeys();
        SmallVector<Value> segState;
        if (cfg.segTrim) {
          Value key = segKey();
          auto table = scf::IfOp::create(
              b, loc, TypeRange{i32, i32},
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, key,
                                    after->getArgument(3)),
              /*withElse=*/true);
          {
            OpBuilder::InsertionGuard g2(b);
            b.setInsertionPointToStart(&table.getThenRegion().front());
            auto [lo, hi] = segTable();
            scf::YieldOp::create(b, loc, ValueRange{lo, hi});
            b.setInsertionPointToStart(&table.getElseRegion().front());
            scf::YieldOp::create(
                b, loc,
                ValueRange{after->getArgument(4), after->getArgument(5)});
          }
          segState = {key, table.getResult(0), table.getResult(1)};
          segNow = segRange(lb, ub, table.getResult(0), table.getResult(1));
          lb = segNow.lb;
          ub = segNow.ub;
        }
        // The first K/V tile before Q: its stage frees while the consumers
        // still run the previous tile; Q's buffer only after its last S.
        Value second = arith::MinUIOp::create(b, loc, tk.add(lb, BN), ub);
        t = streamKV(t, lb, second);
        publish(tile, j, /*withQ=*/true, bx, y);
        if (!cfg.tmaQ) {
          copyQ();
          bars.arriveOnCopies(bars.q());
        }
        // After Q's copies: the kernel's parameters follow their first use,
        // and callers pass q, k, v in that order.
        if (cfg.tma)
          ifFirst([&] { prefetch(/*maps=*/false, /*rows=*/true); });
        Value tNext = streamLastV(streamKV(t, second, ub), ub);
        // The next tile, taken once this one's loads are all issued (about
        // when the block will be free: taken earlier, a long tile's block
        // would hold the next number while short ones finish).
        auto take = scf::IfOp::create(b, loc, TypeRange{i32}, first,
                                      /*withElse=*/true);
        {
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPointToStart(&take.getThenRegion().front());
          Value got = memref::AtomicRMWOp::create(
              b, loc, arith::AtomicRMWKind::addi, em.i32(1), counter,
              ValueRange{c0});
          scf::YieldOp::create(b, loc, got);
          b.setInsertionPointToStart(&take.getElseRegion().front());
          scf::YieldOp::create(b, loc, ValueRange{em.i32(0)});
        }
        Value bcast = arith::AddIOp::create(
            b, loc, bcastSlot, toI32(tk.mul(tk.remu(j, 2), 4)));
        ifFirst([&] {
          Value next = tk.add(arith::IndexCastOp::create(
                                  b, loc, b.getIndexType(), take.getResult(0)),
                              blocksV);
          // Past the last tile: the last block to get there (all others
          // have taken their last number) zeroes the counters for the next
          // launch.
          finish(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, next,
                                       cTiles));
          storeShared(bcast, next);
        });
        em.asmCall("bar.sync 8, 128;", {}, "", {}, "", 0);
        Value next = loadShared(bcast);
        SmallVector<Value> carried = {next, tNext, tk.add(j, 1)};
        llvm::append_range(carried, segState);
        scf::YieldOp::create(b, loc, carried);
      }
      // Past the last tile: the consumers stop at its number.
      publish(loop.getResult(0), loop.getResult(2), /*withQ=*/false);
      if (!cfg.tmaQ)
        bars.arriveOnCopies(bars.q());
    }
    em.through("cp.async.wait_all;", {});

    b.setInsertionPointToStart(&roles.getElseRegion().front());
    if (cfg.consumerRegs() > cfg.entryRegs())
      em.through("setmaxnreg.inc.sync.aligned.u32 " +
                     std::to_string(cfg.consumerRegs()) + ";",
                 {});
    tk.tid = tid;
    tk.threads = C;
    tk.barrierThreads = C;
    // TF32, once Q has landed: the thread's A fragments of Q (qInRegs), or
    // the warpgroup's 64 rows of Q rounded in place (roundInPlace) and
    // fenced for the tensor cores, before its first product.
    auto prepareQ = [&]() {
      if (cfg.qInRegs) {
        // The thread's A fragments of Q from global memory (rows past M
        // read the last row: their outputs are not stored), rounded:
        // (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) of each 8 columns.
        Value t4 = tk.remu(lane, 4);
        Value rowIn[2] = {tk.clamp(rows[0], tk.Mv()),
                          tk.clamp(rows[1], tk.Mv())};
        for (int64_t ks = 0; ks < D / 8; ++ks)
          for (int64_t i = 0; i < 4; ++i) {
            tk.loops[r] = rowIn[i % 2];
            tk.loops[r + 2] = tk.add(t4, 8 * ks + 4 * (i / 2));
            qA.push_back(roundTf32(
                memref::LoadOp::create(b, loc, memArg("q"), tk.indices("q"))));
          }
        return;
      }
      if (!tf32)
        return;
      const int64_t rowChunks = 64 * 128 / 16; // per 64-column panel
      Value wgTid = tk.remu(tid, 128);
      for (int64_t pnl = 0; pnl < Dp / 64; ++pnl)
        roundInPlace(toI32(tk.add(tk.add(base, qOff + pnl * BM * 128),
                                  tk.mul(wg, 64 * 128))),
                     wgTid, rowChunks, 128);
      em.through("fence.proxy.async.shared::cta;", {});
      syncWarpGroup();
    };
    // Segment ids: the key range the producer published with the tile.
    auto loadSegRange = [&]() {
      Value at = arith::AddIOp::create(b, loc, bars.addr(tk.idx(cfg.segSlot())),
                                       em.i32(4 * 48));
      auto word = [&](int64_t k) {
        return loadShared(arith::AddIOp::create(b, loc, at, em.i32(4 * k)));
      };
      lb = word(0);
      ub = word(1);
      segInnerLo = word(2);
      segInnerHi = word(3);
    };
    if (!persistent) {
      bars.wait(bars.q(), c0);
      em.through("fence.proxy.async.shared::cta;", {});
      prepareQ();
      // The loop's end the producer published with Q.
      if (cfg.trims())
        ub = loadShared(bars.addr(tk.idx(2 * S + 5)));
      if (cfg.segTrim)
        loadSegRange();
    }
    acquire = [&](Value t) {
      bars.wait(bars.full(tk.remu(t, S)), tk.remu(tk.divu(t, S), 2));
      // K/V written by cp.async (the generic proxy) for the tensor cores;
      // TMA writes through the async proxy already.
      if (!cfg.tma)
        em.through("fence.proxy.async.shared::cta;", {});
    };
    release = [&](Value t) { bars.arrive(bars.empty(tk.remu(t, S))); };
    // One query tile from Q's arrival to its output.
    auto runTile = [&](Value t0, Value *nextTile) {
      Value split = tk.unmaskedEnd(lb, ub, blockRow, BN);
      SmallVector<Value> fin;
      if (cfg.pipeline)
        fin = pipelinedLoop(lb, split, ub, t0, nextTile);
      else
        fin = tk.tileLoops(lb, split, ub, BN, init, tileBody);
      storeOutput(fin);
    };
    // Turns: named barriers 2 (warpgroup 0's) and 3 (warpgroup 1's), 256
    // threads each: the owner syncs, the other arrives. Warpgroup 1 hands
    // the first turn to warpgroup 0; warpgroup 0 takes the turn left over
    // at the end, so the barriers end balanced (a persistent block's
    // warpgroups run the same tiles: the turns go on across them).
    if (cfg.pipeline && cfg.pingpong) {
      Value one = tk.idx(1);
      Value wgIs1 =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wg, one);
      Value own = arith::IndexCastOp::create(b, loc, i32, tk.add(wg, 2));
      Value other = arith::IndexCastOp::create(
          b, loc, i32, tk.add(arith::SubIOp::create(b, loc, one, wg), 2));
      takeTurn = [&, own]() {
        em.asmCall("bar.sync $0, 256;", {own}, "r", {}, "", 0);
      };
      passTurn = [&, other]() {
        em.asmCall("bar.arrive $0, 256;", {other}, "r", {}, "", 0);
      };
      auto handFirst = scf::IfOp::create(b, loc, wgIs1, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&handFirst.getThenRegion().front());
      em.asmCall("bar.arrive 2, 256;", {}, "", {}, "", 0);
    }
    if (!persistent) {
      runTile(Value(), nullptr);
    } else {
      afterLastS = [&]() { bars.arrive(bars.qEmpty()); };
      // (t0, j) in; (tile, t0, j) from the condition.
      SmallVector<Type> types(2, b.getIndexType()),
          afterTypes(3, b.getIndexType());
      auto loop =
          scf::WhileOp::create(b, loc, afterTypes, ValueRange{c0, c0});
      OpBuilder::InsertionGuard guard(b);
      Block *before = b.createBlock(&loop.getBefore(), {}, types,
                                    SmallVector<Location>(2, loc));
      b.setInsertionPointToStart(before);
      Value j = before->getArgument(1);
      bars.wait(bars.q(), tk.remu(j, 2));
      em.through("fence.proxy.async.shared::cta;", {});
      prepareQ();
      // The tile's number (or with publishMap its query block, -1 past the
      // last).
      Value tile = loadShared(publishMap ? mapAddr(0) : tileSlot);
      Value more =
          publishMap ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             tile, tk.idx(-1))
                     : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             tile, tilesV);
      scf::ConditionOp::create(b, loc, more,
                               ValueRange{tile, before->getArgument(0), j});
      Block *after = b.createBlock(&loop.getAfter(), {}, afterTypes,
                                   SmallVector<Location>(3, loc));
      b.setInsertionPointToStart(after);
      auto [x, y] = publishMap ? std::make_pair(after->getArgument(0),
                                                loadShared(mapAddr(1)))
                               : mapTile(after->getArgument(0));
      if (seqSlot) {
        // Varlen: the producer's search, published with the tile.
        Value v[5];
        for (int64_t k = 0; k < 5; ++k)
          v[k] = loadShared(seqAddr(k));
        tk.setVarlen(v[1], v[2], v[3], v[4]);
        enterRows(x, v[0]);
      } else {
        enterRows(x, Value(), publishMap);
      }
      tk.setBatch(y);
      kb.hoistScoreMod(ArrayRef<Value>(tk.loops).take_front(r));
      enterKeyPos();
      enterKeys();
      if (cfg.segTrim)
        loadSegRange();
      enterState();
      Value next;
      runTile(after->getArgument(1), &next);
      scf::YieldOp::create(b, loc,
                           ValueRange{next, tk.add(after->getArgument(2), 1)});
    }
    if (cfg.pipeline && cfg.pingpong) {
      Value wgIs0 =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wg, c0);
      auto last = scf::IfOp::create(b, loc, wgIs0, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&last.getThenRegion().front());
      em.asmCall("bar.sync 2, 256;", {}, "", {}, "", 0);
    }
  }
  tk.terminate();
}
