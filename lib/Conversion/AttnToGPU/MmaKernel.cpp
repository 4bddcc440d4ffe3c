//===- MmaKernel.cpp - the tensor-core attention kernel -------------------===//
//
// Block: `warps` warps, each owning `rowTiles` 16-row mma tiles of queries
// (tile-q = 16 * warps * rowTiles rows). Per key tile of tile-kv keys:
//   S = Q K^T      (tile-kv/8) n-blocks x (D/16) mma.sync, f32 accumulate;
//                  each K fragment read from shared memory feeds every row
//                  tile of the warp
//   score modification (TileKernel::scoreMod): mask tensor elements read
//                  straight into the accumulator layout (every tile), the
//                  fill or -inf for hidden keys (boundary tiles only)
//   m' = max(m, rowmax(S) * scale log2 e)   (quad shuffles)
//   α = 2^(m - m');  P = 2^(S * scale log2 e - m')  (one fma + ex2);
//                  with masks, sinks or fills in natural units instead
//   P kept in registers, re-packed as the A operand of P·V
//   ℓ = α ℓ + rowsum(P) (per thread; reduced once at the end)
//   O = α O + P V   (E/8 n-blocks of mma.sync)
// K/V tiles stream through `stages` shared-memory buffers with cp.async:
// tile t + stages - 1 is in flight while tile t is used. Fragments are read
// with ldmatrix (.trans for V). Q stays in registers, or is staged in
// shared memory and re-read per tile when registers would not hold it. The
// output block leaves through shared memory with 16-byte stores.
//
// f32 inputs (MmaConfig::tf32): m16n8k8 TF32 products on the same
// structure, rows padded by 4 values, ldmatrix of 32-bit values for Q and
// K, V read element-wise in the permuted key order of the S fragments
// (no shuffles), each operand rounded with cvt.rna; 3xTF32 adds the
// remainders' cross products and accumulates each tile's P V apart.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <tuple>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

std::string gpu_kernel::mmaIneligibility(AttentionOp op, MapOfFn mapOf,
                                         int64_t D, int64_t E, int64_t tf32) {
  auto typeName = [](Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  };
  Type t = op.getQuery().getType().getElementType();
  if (t.isF32() && !tf32)
    return "q is f32 and f32-precision=ieee (exact f32 FMAs)";
  if (!(t.isF16() || t.isBF16() || t.isF32()))
    return "q is " + typeName(t) +
           " (tensor cores take f16, bf16, or f32 as TF32)";
  // The output block is staged in q's type; mixed types (f16 inputs
  // accumulating into f32) take the SIMT kernel, which handles them.
  for (auto [name, v] : {std::pair<StringRef, Value>{"k", op.getKey()},
                         {"v", op.getValue()},
                         {"the output", op.getInit()}}) {
    Type u = cast<ShapedType>(v.getType()).getElementType();
    if (u != t)
      return (name + " is " + typeName(u) + ", q " + typeName(t) +
              " (one element type throughout)")
          .str();
  }
  // One mma k-step: 16 halves or 8 TF32 values.
  int64_t step = t.isF32() ? 8 : 16;
  if (D % step != 0 || E % step != 0 || D > 256 || E > 256)
    return "D = " + std::to_string(D) + ", E = " + std::to_string(E) +
           " (multiples of " + std::to_string(step) + " up to 256)";
  // Q and K rows are read along d, V rows along e, 16 bytes at a time.
  if (!headDimsContiguous(op, mapOf))
    return "q, k or v is not contiguous along its head dim";
  return "";
}

bool gpu_kernel::headDimsContiguous(AttentionOp op, MapOfFn mapOf) {
  unsigned r = op.getNumBatchDims();
  auto lastIs = [&](StringRef name, unsigned dim) {
    AffineMap m = mapOf(name);
    return m.getNumResults() > 0 &&
           cast<AffineDimExpr>(m.getResults().back()).getPosition() == dim;
  };
  return lastIs("q", r + 2) && lastIs("k", r + 2) && lastIs("v", r + 3);
}

bool gpu_kernel::mmaEligible(AttentionOp op, MapOfFn mapOf, int64_t D,
                             int64_t E, int64_t tf32) {
  return mmaIneligibility(op, mapOf, D, E, tf32).empty();
}

void gpu_kernel::buildMmaKernel(KernelBuilder &kb, MemArgFn memArg,
                                MapOfFn mapOf, ArrayRef<int64_t> sizes,
                                unsigned r, int64_t batch,
                                const MmaConfig &cfg) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AttentionOp op = kb.op;
  const int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2],
                E = sizes[r + 3];
  const int64_t R = cfg.rowTiles, BN = cfg.keyTile, S = cfg.stages;
  const int64_t BM = cfg.rowsPerBlock(), T = cfg.threads();
  // Key warps: each warp's share of a key tile (all of it with one).
  const int64_t KW = cfg.keyWarps, BK = cfg.keysPerWarp();
  const int64_t NB = BK / 8, eBlocks = E / 8;
  const int64_t rowsTotal =
      cfg.packDim < 0 ? M : M * sizes[cfg.packDim];
  const int64_t gridX = kb.queryBlocks(rowsTotal, BM);
  Type elt = op.getQuery().getType().getElementType();
  Type f32 = b.getF32Type();
  auto outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();

  // f32 inputs: mma.sync m16n8k8 on TF32 values (k-steps of 8), fragments
  // of one 32-bit value per register.
  const bool tf = cfg.tf32 > 0;
  const int64_t kStep = tf ? 8 : 16;
  // Shared memory (dynamic), laid out as MmaConfig::sharedBytes says (rows
  // padded by 16 bytes); the output element type is the inputs' (see
  // mmaEligible).
  const int64_t pad = cfg.pad();
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto kTileType =
      MemRefType::get({S, BN, D + pad}, elt, AffineMap(), workgroup);
  auto vTileType =
      MemRefType::get({S, BN, E + pad}, elt, AffineMap(), workgroup);
  auto qTileType = MemRefType::get({BM, D + pad}, elt, AffineMap(), workgroup);
  auto oTileType =
      MemRefType::get({BM, E + pad}, outElt, AffineMap(), workgroup);
  Value c1h = kb.cIdx(1);
  Value dynBytes = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(cfg.sharedBytes(D, E)));
  const int64_t SP = cfg.splits;
  auto launch =
      gpu::LaunchOp::create(b, loc, kb.gridX(gridX), kb.gridY(batch),
                            kb.dynSplits ? kb.dynSplits : kb.cIdx(SP),
                            kb.cIdx(T), c1h, c1h, dynBytes);
  func::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  auto view = [&](MemRefType t, int64_t offset) -> Value {
    return memref::ViewOp::create(b, loc, t, smem, kb.cIdx(offset),
                                  ValueRange{});
  };
  Value kTile = view(kTileType, 0);
  Value vTile = view(vTileType, cfg.kBytes(D));
  Value qTile = view(qTileType, cfg.kBytes(D) + cfg.vBytes(E));

  Value tid = launch.getThreadIds().x;
  Value c0 = kb.cIdx(0);
  TileKernel tk(kb, memArg, mapOf, sizes, r, T);
  tk.packDim = cfg.packDim;
  tk.pageSize = cfg.pageSize;
  tk.pages = cfg.pages;
  tk.tid = tid;
  Value warpId = tk.divu(tid, 32);
  Value lane = tk.remu(tid, 32);
  // Row warp and key warp; kOff: the key warp's first key within a tile.
  Value warp = KW > 1 ? tk.remu(warpId, cfg.warps) : warpId;
  Value keyWarp = KW > 1 ? tk.divu(warpId, cfg.warps) : c0;
  Value kOff = KW > 1 ? tk.mul(keyWarp, BK) : c0;
  Value g = tk.divu(lane, 4);
  Value c2 = tk.mul(tk.remu(lane, 4), 2);
  tk.c2 = c2;
  // ldmatrix addressing: lane l points at row l % 8 of 8x8 tile l / 8.
  Value laneRow = tk.remu(lane, 8);
  Value tileIdx = tk.divu(lane, 8);
  // V tiles: (l / 8) % 2 picks keys +0/+8, l / 16 picks the e-block; K
  // tiles: (l / 8) % 2 picks d +0/+8, l / 16 the 8-key block; Q (A
  // fragments): rows l % 16, columns (l / 16) * 8.
  Value laneHalf8 = tk.mul(tk.remu(tileIdx, 2), 8);
  Value laneTile16 = tk.mul(tk.divu(lane, 16), 8);
  Value laneRow16 = tk.remu(lane, 16);
  // The head-dim offsets of those tiles: 16 bytes, 8 halves or 4 f32.
  Value laneHalfD = tf ? tk.mul(tk.remu(tileIdx, 2), 4) : laneHalf8;
  Value laneTileD = tf ? tk.mul(tk.divu(lane, 16), 4) : laneTile16;

  Value blockX =
      tk.queryBlock(launch.getBlockIds().x, launch.getGridSize().x, gridX);
  // Varlen: the block's query tile within its sequence (tables read here).
  Value blockRow = tk.firstRow(blockX, BM);
  Value warpRow = tk.mul(warp, 16 * R); // within the block
  // rows[i][h]: the rows g and g + 8 of the warp's row tile i.
  SmallVector<std::array<Value, 2>> rows(R);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      rows[i][h] = tk.add(tk.add(blockRow, warpRow), tk.add(g, 16 * i + 8 * h));
    }

  tk.setBatch(launch.getBlockIds().y);
  // A sliced split-KV merge waits on the tile's blocks once all started
  // (a split count chosen at launch: where there are several ranges).
  if ((SP > 1 || cfg.runtimeSplits) &&
      mergeSlices(cfg.runtimeSplits ? ShapedType::kDynamic : SP, BM,
                  tk.rowsTotal(), E, tk.threads) > 1)
    countSplitStarted(
        tk, launch.getBlockIds().y, blockX,
        cfg.runtimeSplits
            ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                    launch.getGridSize().z, kb.cIdx(1))
                  .getResult()
            : Value());
  if (cfg.lenDim >= 0) {
    // This sequence's keys: kv_lens[b] clamped to [0, N].
    Value len = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, memArg("kv_lens"),
                               ValueRange{tk.loops[cfg.lenDim]}));
    tk.keyLimit = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, len, kb.cIdx(N)), kb.cIdx(0));
  }
  // 16-bit outputs: tanh.approx (as FlashAttention-3) is accurate enough.
  kb.approxTanh = !tf;
  kb.hoistScoreMod(ArrayRef<Value>(tk.loops).take_front(r), cfg.packDim);
  auto pairType = VectorType::get({2}, elt);
  auto fragA = VectorType::get({4, 2}, elt);
  auto fragB = VectorType::get({2, 2}, elt);
  auto fragC = VectorType::get({2, 2}, f32);
  auto pack = [&](VectorType t, ArrayRef<Value> pairs) -> Value {
    Value v = arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
    for (auto [i, p] : llvm::enumerate(pairs))
      v = vector::InsertOp::create(b, loc, p, v, ArrayRef<int64_t>{(int64_t)i});
    return v;
  };
  auto ldmatrix = [&](Value tile, ValueRange idx, bool transpose) -> Value {
    return nvgpu::LdMatrixOp::create(b, loc, fragA, tile, idx, transpose,
                                     /*numTiles=*/4);
  };
  // ldmatrix x4 from a shared tile: the four 8x8 tiles as two B fragments.
  auto loadX4 = [&](Value tile, ValueRange idx, bool transpose) {
    Value frags = ldmatrix(tile, idx, transpose);
    std::array<Value, 2> out;
    for (int64_t half = 0; half < 2; ++half)
      out[half] =
          pack(fragB, {vector::ExtractOp::create(b, loc, frags,
                                                 ArrayRef<int64_t>{2 * half}),
                       vector::ExtractOp::create(
                           b, loc, frags, ArrayRef<int64_t>{2 * half + 1})});
    return out;
  };
  // mma.sync m16n8k16 through inline PTX on the packed registers, for f16
  // and bf16 alike: nvgpu.mma.sync does not lower bf16 in MLIR 22 (an
  // unrealized cast is left), and for f16 it measured no faster
  // (docs/performance.md).
  auto regs = [&](Value frag, int64_t n) {
    SmallVector<Value> out;
    auto i32x1 = VectorType::get({1}, b.getI32Type());
    for (int64_t i = 0; i < n; ++i) {
      Value pair =
          vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i});
      Value asInt = vector::BitCastOp::create(b, loc, i32x1, pair);
      out.push_back(
          vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0}));
    }
    return out;
  };
  // One mma.sync of `shape` (shape.layout.types) on 4 A and 2 B registers
  // `ins`, accumulating into the fragment `c`.
  auto mmaPtx = [&](StringRef shape, SmallVector<Value> ins,
                    Value c) -> Value {
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t j = 0; j < 2; ++j)
        ins.push_back(
            vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{h, j}));
    auto ptx = NVVM::InlinePtxOp::create(
        b, loc, TypeRange{f32, f32, f32, f32}, ins, ValueRange{},
        ("mma.sync.aligned." + shape +
         " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, "
         "$13};")
            .str(),
        Value());
    return vector::FromElementsOp::create(b, loc, fragC, ptx->getResults());
  };
  auto mma = [&](Value a, Value bb, Value c) -> Value {
    SmallVector<Value> ins = regs(a, 4);
    llvm::append_range(ins, regs(bb, 2));
    return mmaPtx(elt.isF16() ? "m16n8k16.row.col.f32.f16.f16.f32"
                              : "m16n8k16.row.col.f32.bf16.bf16.f32",
                  ins, c);
  };
  // TF32 operands: each f32 value rounded to TF32 (cvt.rna); for 3xTF32
  // split instead as hi = x with its 13 low mantissa bits cleared (a TF32
  // value, one AND) and lo = x - hi (exact; the mma reads its top 19 bits):
  // x = hi + lo to about 20 bits, in two instructions where two cvt.rna and
  // a subtraction took more. A fragment of n values is a vector<n x i32> of
  // the hi parts, then the lo parts.
  Type i32 = b.getI32Type();
  auto cvtTf32 = [&](Value x) -> Value {
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{i32}, ValueRange{x},
                                     ValueRange{}, "cvt.rna.tf32.f32 $0, $1;",
                                     Value())
        ->getResult(0);
  };
  const int64_t tfParts = cfg.tf32 == 3 ? 2 : 1;
  auto tfFrag = [&](ArrayRef<Value> xs) -> Value {
    SmallVector<Value> hi, lo;
    for (Value x : xs) {
      if (tfParts == 1) {
        hi.push_back(cvtTf32(x));
        continue;
      }
      Value h = arith::AndIOp::create(
          b, loc, arith::BitcastOp::create(b, loc, i32, x),
          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(-8192)));
      hi.push_back(h);
      lo.push_back(arith::BitcastOp::create(
          b, loc, i32,
          arith::SubFOp::create(b, loc, x,
                                arith::BitcastOp::create(b, loc, f32, h))));
    }
    llvm::append_range(hi, lo);
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({(int64_t)hi.size()}, i32), hi);
  };
  auto tfPart = [&](Value frag, int64_t n, int64_t part) {
    SmallVector<Value> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(vector::ExtractOp::create(b, loc, frag,
                                              ArrayRef<int64_t>{part * n + i}));
    return out;
  };
  // mma.sync m16n8k8 TF32: A 4 registers, B 2; with 3xTF32 the two
  // cross products (small first) before hi*hi.
  auto mmaTf = [&](Value a, Value bb, Value c) -> Value {
    auto one = [&](ArrayRef<Value> ar, ArrayRef<Value> br, Value acc) {
      SmallVector<Value> ins(ar);
      llvm::append_range(ins, br);
      return mmaPtx("m16n8k8.row.col.f32.tf32.tf32.f32", ins, acc);
    };
    if (tfParts == 2) {
      c = one(tfPart(a, 4, 1), tfPart(bb, 2, 0), c);
      c = one(tfPart(a, 4, 0), tfPart(bb, 2, 1), c);
    }
    return one(tfPart(a, 4, 0), tfPart(bb, 2, 0), c);
  };
  // ldmatrix x4 of f32 rows: four 8x4 tiles, one value each per lane.
  auto ldmatrixF32 = [&](Value tile, ValueRange idx) {
    Value frags = nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, 1}, f32), tile, idx, /*transpose=*/false,
        /*numTiles=*/4);
    SmallVector<Value> out;
    for (int64_t t = 0; t < 4; ++t)
      out.push_back(
          vector::ExtractOp::create(b, loc, frags, ArrayRef<int64_t>{t, 0}));
    return out;
  };

  // K/V/Q rows into padded tiles tile[prefix..., row, col].
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto copyRows = [&](SmallVectorImpl<Value> &tokens, StringRef name,
                      Value tile, ValueRange prefix, int64_t count,
                      int64_t width, unsigned rowDim, Value row0, Value limit,
                      unsigned colDim) {
    tk.copyRows(name, tile, count, width, rowDim, row0, limit, colDim,
                [&](Value rowLocal, Value) {
                  SmallVector<Value> dst(prefix.begin(), prefix.end());
                  dst.append({rowLocal, tk.loops[colDim]});
                  return dst;
                });
  };

  // The block's Q rows go to shared memory by cp.async (16-byte chunks,
  // rows past M clamped) as the first group; the fragments are read with
  // ldmatrix x4 (rows l % 16, columns (l / 16) * 8): once into registers
  // below, or every key tile when registers are short (q-shared).
  {
    SmallVector<Value> tokens;
    copyRows(tokens, "q", qTile, {}, BM, D, r, blockRow, tk.rowsTotalV(),
             r + 2);
    nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  }
  auto loadQ = [&](int64_t i, int64_t ks) -> Value {
    Value row = tk.add(tk.add(warpRow, 16 * i), laneRow16);
    SmallVector<Value> idx{row, tk.add(laneTileD, ks * kStep)};
    if (tf) // tiles (rows +0/+8, d +0/+4): a0..a3 of m16n8k8
      return tfFrag(ldmatrixF32(qTile, idx));
    return ldmatrix(qTile, idx, /*transpose=*/false);
  };
  SmallVector<SmallVector<Value>> qFrag(R);
  auto qFragment = [&](int64_t i, int64_t ks) -> Value {
    return cfg.qShared ? loadQ(i, ks) : qFrag[i][ks];
  };

  // Keys the block's rows can see; with split-KV, this block's range of
  // them: whole chunks from the first visible key (so that no key tile
  // straddles two ranges; the last is cut where the block's keys end, by
  // the usual masks), empty past the end.
  // With GQA packing a block holds every query of its rows' group members:
  // the keys of queries [0, M).
  Value firstQuery = tk.packDim < 0 ? blockRow : c0;
  auto [lb, ub] = tk.keyRange(firstQuery, tk.packDim < 0 ? BM : M);
  // Packed documents (cfg.segRanges): the block's keys cut to those whose
  // segment id lies within its rows' [min, max] of ids. No producer keeps
  // granule tables here, so the block's threads scan the key ids (N / T
  // loads each) before the first K/V copies; keys left out score the
  // region's fill (folded in after the loop where it is finite).
  if (cfg.segRanges) {
    const SegmentMatch seg = segmentMatch(op);
    tk.hiddenFill = static_cast<float>(seg.fill);
    Type i32 = b.getI32Type();
    MLIRContext *ctx = b.getContext();
    auto i32c = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
    };
    // An id as i32 (64-bit ids saturated: TileKernel::segmentId).
    auto idAt = [&](bool key, Value at) -> Value {
      return tk.segmentId(seg, key, at);
    };
    const bool u = seg.zeroExtend;
    // Block-wide reductions: each warp's by redux.sync, combined through
    // words at the start of the (not yet used) K buffer.
    const int64_t W = T / 32;
    Value scratch =
        view(MemRefType::get(
                 {2 * W}, i32, AffineMap(),
                 gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)),
             0);
    using RK = NVVM::ReduxKind;
    auto reduce2 = [&](Value a, RK ka, Value c,
                       RK kc) -> std::pair<Value, Value> {
      Value ra = NVVM::ReduxOp::create(
          b, loc, i32, a, NVVM::ReduxKindAttr::get(ctx, ka), i32c(-1));
      Value rc = NVVM::ReduxOp::create(
          b, loc, i32, c, NVVM::ReduxKindAttr::get(ctx, kc), i32c(-1));
      auto first = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c0),
          /*withElse=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&first.getThenRegion().front());
        memref::StoreOp::create(b, loc, ra, scratch, ValueRange{warpId});
        memref::StoreOp::create(b, loc, rc, scratch,
                                ValueRange{tk.add(warpId, W)});
      }
      gpu::BarrierOp::create(b, loc);
      Value oa, oc;
      for (int64_t w = 0; w < W; ++w) {
        Value xa = memref::LoadOp::create(b, loc, scratch, kb.cIdx(w));
        Value xc = memref::LoadOp::create(b, loc, scratch, kb.cIdx(W + w));
        oa = w ? tk.reduxCombine(ka, oa, xa) : xa;
        oc = w ? tk.reduxCombine(kc, oc, xc) : xc;
      }
      // The words are read by every thread before they are written again
      // (or the K buffer filled).
      gpu::BarrierOp::create(b, loc);
      return {oa, oc};
    };
    // The rows' [min, max] of ids.
    Value qlo = i32c(u ? -1 : INT32_MAX), qhi = i32c(u ? 0 : INT32_MIN);
    // (Rows of this block only: more threads than rows read its last. With
    // GQA packing, the queries of every group member.)
    const int64_t queries = tk.packDim < 0 ? BM : M;
    for (int64_t i = 0; i < queries; i += T) {
      Value local =
          arith::MinUIOp::create(b, loc, tk.add(tid, i), kb.cIdx(queries - 1));
      Value id =
          idAt(/*key=*/false, tk.clamp(tk.add(firstQuery, local), tk.Mv()));
      qlo = tk.reduxCombine(seg.minKind(), qlo, id);
      qhi = tk.reduxCombine(seg.maxKind(), qhi, id);
    }
    std::tie(qlo, qhi) = reduce2(qlo, seg.minKind(), qhi, seg.maxKind());
    // The first and last key in [lb, ub) whose id lies in [qlo, qhi].
    auto le = [&](Value x, Value y) {
      return arith::CmpIOp::create(
          b, loc, u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle, x,
          y);
    };
    Value kf, kl;
    // Exact keys (exactSegmentKeys): the loop runs [first, end) alone,
    // from the first key, not from its tile, keys past the end masked as
    // past the keys (end is within a sequence's length, where one bounds
    // the keys), and no region per score.
    const bool exactKeys = exactSegmentKeys(seg, M, tk.pageSize != 0);
    Value exactFirst, exactEnd;
    if (seg.keyMonotone) {
      // Ids that never decrease along the keys: the first key whose id is
      // at least qlo, and the first past qhi, by binary search (each
      // thread alike; about log2 N ids evaluated, no loads).
      Type idx = b.getIndexType();
      Value keysEnd = ub;
      auto lowerBound = [&](Value from, function_ref<Value(Value)> past) {
        auto loop = scf::WhileOp::create(
            b, loc, TypeRange{idx, idx}, ValueRange{from, keysEnd},
            [&](OpBuilder &, Location, ValueRange st) {
              scf::ConditionOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        st[0], st[1]),
                  st);
            },
            [&](OpBuilder &, Location, ValueRange st) {
              Value mid = tk.add(
                  st[0],
                  tk.divu(arith::SubIOp::create(b, loc, st[1], st[0]), 2));
              Value p = past(idAt(/*key=*/true, mid));
              scf::YieldOp::create(
                  b, loc,
                  ValueRange{
                      arith::SelectOp::create(b, loc, p, st[0], tk.add(mid, 1)),
                      arith::SelectOp::create(b, loc, p, mid, st[1])});
            });
        return loop.getResult(0);
      };
      auto toI32 = [&](Value v) {
        return arith::IndexCastOp::create(b, loc, i32, v).getResult();
      };
      Value first = lowerBound(lb, [&](Value id) { return le(qlo, id); });
      Value end = lowerBound(first, [&](Value id) {
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, qhi, id)
            .getResult();
      });
      kf = toI32(first);
      kl = arith::SubIOp::create(b, loc, toI32(end), i32c(1));
      if (exactKeys) {
        exactFirst = first;
        exactEnd = end;
      }
    } else {
      auto scan = scf::ForOp::create(
          b, loc, tk.add(lb, tid), ub, kb.cIdx(T),
          ValueRange{i32c(INT32_MAX), i32c(-1)},
          [&](OpBuilder &, Location, Value n, ValueRange st) {
            Value id = idAt(/*key=*/true, n);
            Value in = arith::AndIOp::create(b, loc, le(qlo, id), le(id, qhi));
            Value n32 = arith::IndexCastOp::create(b, loc, i32, n);
            scf::YieldOp::create(
                b, loc,
                ValueRange{
                    arith::SelectOp::create(
                        b, loc, in, arith::MinSIOp::create(b, loc, st[0], n32),
                        st[0]),
                    arith::SelectOp::create(
                        b, loc, in, arith::MaxSIOp::create(b, loc, st[1], n32),
                        st[1])});
          });
      std::tie(kf, kl) =
          reduce2(scan.getResult(0), RK::MIN, scan.getResult(1), RK::MAX);
    }
    auto toIdx = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
          .getResult();
    };
    // Whole tiles from lb up to the first match; the last match ends the
    // loop (the region still applies per score on the tiles it runs). No
    // match: the first key alone, so that a row's state is that of a loop
    // that saw keys (all scoring the fill), the others folded in after it.
    if (exactKeys) {
      lb = exactFirst;
      ub = exactEnd;
      tk.keyLimit = exactEnd;
      tk.skipRegion = true;
    } else {
      Value none =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kl, kf);
      Value from = tk.add(
          lb, tk.mul(tk.divu(arith::SubIOp::create(b, loc, toIdx(kf), lb), BN),
                     BN));
      Value to = tk.add(toIdx(kl), 1);
      lb = arith::SelectOp::create(b, loc, none, lb, from);
      ub = arith::SelectOp::create(
          b, loc, none, arith::MinUIOp::create(b, loc, ub, tk.add(lb, 1)), to);
    }
  }
  Value split0;
  if (cfg.splitKV()) {
    Value z = launch.getBlockIds().z;
    split0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, z, c0);
    // A split count chosen at launch (grid z): chunks of
    // ceil(ceil(span / splits) / tile) tiles over the span the pass would
    // have used (the keys, or a window's width plus the block's rows).
    // With segment ranges, the same over the keys they leave (every block
    // of the tile finds the same ones).
    Value chunk = kb.cIdx(cfg.chunk);
    if (cfg.runtimeSplits || cfg.segRanges) {
      Value span = tk.Nv();
      if (cfg.segRanges)
        span = arith::SubIOp::create(b, loc, ub, lb);
      else if (std::optional<int64_t> w = op.getWindow())
        span = arith::MinUIOp::create(b, loc, span, kb.cIdx(*w + BM));
      Value per = arith::CeilDivUIOp::create(
          b, loc, span,
          cfg.runtimeSplits ? launch.getGridSize().z : kb.cIdx(cfg.splits));
      chunk = tk.mul(arith::CeilDivUIOp::create(b, loc, per, kb.cIdx(BN)), BN);
    }
    Value from = arith::MinUIOp::create(
        b, loc, tk.add(lb, arith::MulIOp::create(b, loc, z, chunk).getResult()),
        ub);
    ub = arith::MinUIOp::create(b, loc, tk.add(from, chunk), ub);
    lb = from;
  }
  Value sinkOwner = split0;
  if (KW > 1) {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, keyWarp, c0);
    sinkOwner =
        sinkOwner ? arith::AndIOp::create(b, loc, sinkOwner, first).getResult()
                  : first;
  }
  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Value zeroC = arith::ConstantOp::create(b, loc, fragC, b.getZeroAttr(fragC));
  // Loop state: m[R][2], ℓ[R][2], O[R][eBlocks], the buffer of this tile.
  auto mIdx = [&](int64_t i, int64_t h) { return i * 2 + h; };
  auto lIdx = [&](int64_t i, int64_t h) { return 2 * R + i * 2 + h; };
  auto oIdx = [&](int64_t i, int64_t eb) { return 4 * R + i * eBlocks + eb; };
  // m and ℓ start at (-inf, 0), or at the sink's (sink, 1).
  SmallVector<Value> init(4 * R);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      std::tie(init[mIdx(i, h)], init[lIdx(i, h)]) =
          tk.initialState(rows[i][h]);
      // The sink's share is counted once, by the first key range's first
      // key warp.
      if (sinkOwner && memArg("sink")) {
        init[mIdx(i, h)] = arith::SelectOp::create(
            b, loc, sinkOwner, init[mIdx(i, h)],
            kb.cF32(-std::numeric_limits<float>::infinity()));
        init[lIdx(i, h)] = arith::SelectOp::create(
            b, loc, sinkOwner, init[lIdx(i, h)], kb.cF32(0.0f));
      }
    }
  init.append(R * eBlocks, zeroC);
  // Scores are scaled inside the exponent (one fma): exact for a positive
  // scale, where the row max commutes with the scaling. Natural scores
  // (TileKernel::natural) are scaled first and exponentiated as
  // 2^((s - m) log2 e).
  const bool natural = tk.natural;
  const bool foldScale = kb.scale > 0 && !natural;
  Value scaleLog2 = kb.scaleLog2Value();
  Value scoreScale = natural ? kb.scaleValue() : scaleLog2;
  Value log2e = kb.cF32(1.4426950408889634f);
  const bool fmaExponent = tk.fmaExponent();
  // A bias linear in the key index (ALiBi): one fma per score, the row's
  // term in the maxima and the exponent's reference (as the wgmma kernel;
  // KernelBuilder::scoreModKeyLinear).
  const bool keyLinear = tk.keyLinearBias();
  // Issue the copies of the K and V tiles starting at key n0 into buffer
  // `buf` as one cp.async group; rows past N are clamped (never used).
  auto issue = [&](Value n0, Value buf) -> Value {
    SmallVector<Value> tokens;
    copyRows(tokens, "k", kTile, buf, BN, D, r + 1, n0, tk.Nv(), r + 2);
    copyRows(tokens, "v", vTile, buf, BN, E, r + 1, n0, tk.Nv(), r + 3);
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  Value lastGroup;
  for (int64_t st = 0; st + 1 < S; ++st)
    lastGroup = issue(tk.add(lb, st * BN), kb.cIdx(st));
  if (!cfg.qShared) {
    // Q landed once only the S - 1 K/V groups may be pending.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                     b.getI32IntegerAttr(S - 1));
    gpu::BarrierOp::create(b, loc);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t ks = 0; ks < D / kStep; ++ks)
        qFrag[i].push_back(loadQ(i, ks));
  }
  // Paged K/V: the table entries of each iteration's copies are read an
  // iteration ahead and carried by the loop, so that the copies issued
  // after the barrier do not wait on the table's load (log step 202).
  SmallVector<Value> pagesAhead;
  if (tk.pageSize > 0 && !cfg.pipeline) {
    pagesAhead = tk.loadPageEntries(tk.add(lb, (S - 1) * BN), BN);
    tk.hoistLastPage(tk.Nv());
  }
  const int64_t P = pagesAhead.size();
  init.append(pagesAhead.begin(), pagesAhead.end());
  init.push_back(c0); // the buffer holding the current tile

  // S = Q K^T for the key tile in buffer `buf`: one accumulator per (row
  // tile, 8-key block); k-steps outermost so that each K fragment (and Q
  // fragment read from shared memory) is loaded once.
  auto sIdx = [&](int64_t i, int64_t nb, int64_t h, int64_t j) {
    return ((i * NB + nb) * 2 + h) * 2 + j;
  };
  auto computeS = [&](Value buf) -> SmallVector<Value> {
    SmallVector<Value> acc(R * NB, zeroC);
    // Lanes 8t..8t+7 address the rows of 8x8 tile t = (keys nb*8 + (t/2)*8,
    // d = ks*16 + (t%2)*8): one ldmatrix x4 gives the B fragments (K^T) of
    // two 8-key blocks at one k-step, so only one k-step of Q fragments is
    // live at a time.
    Value keyLane = tk.add(tk.add(laneRow, laneTile16), kOff);
    for (int64_t ks = 0; ks < D / kStep; ++ks) {
      SmallVector<Value> qf(R);
      for (int64_t i = 0; i < R; ++i)
        qf[i] = qFragment(i, ks);
      for (int64_t nb = 0; nb < NB; nb += 2) {
        if (tf) {
          // Tiles (keys +0/+8, d +0/+4): b0, b1 of two 8-key blocks.
          SmallVector<Value> k4 = ldmatrixF32(
              kTile, ValueRange{buf, tk.add(keyLane, nb * 8),
                                tk.add(laneHalfD, ks * kStep)});
          for (int64_t half = 0; half < 2; ++half) {
            Value bf = tfFrag({k4[2 * half], k4[2 * half + 1]});
            for (int64_t i = 0; i < R; ++i)
              acc[i * NB + nb + half] =
                  mmaTf(qf[i], bf, acc[i * NB + nb + half]);
          }
          continue;
        }
        auto bFrags = loadX4(kTile,
                             ValueRange{buf, tk.add(keyLane, nb * 8),
                                        tk.add(laneHalf8, ks * 16)},
                             /*transpose=*/false);
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t i = 0; i < R; ++i)
            acc[i * NB + nb + half] =
                mma(qf[i], bFrags[half], acc[i * NB + nb + half]);
      }
    }
    return acc;
  };
  // The online-softmax update of state `st` = (m, ℓ, O) by the scores `acc`
  // of the key tile at n0 (buffer `buf`), and O += P V. `withMask` adds the
  // per-element ragged/causal/window mask (boundary tiles only).
  auto softmaxPV = [&](ArrayRef<Value> acc, Value n0, Value buf, ValueRange st,
                       bool withMask) -> SmallVector<Value> {
    SmallVector<Value> s(R * NB * 4);
    // keyLinear: each row's term (scaled units), taken from its first score.
    SmallVector<Value> keyRow(2 * R);
    // This warp's first key (its share of the tile).
    Value n0w = KW > 1 ? tk.add(n0, kOff) : n0;
    for (int64_t i = 0; i < R; ++i)
      for (int64_t nb = 0; nb < NB; ++nb)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t j = 0; j < 2; ++j) {
            Value x = vector::ExtractOp::create(b, loc, acc[i * NB + nb],
                                                ArrayRef<int64_t>{h, j});
            if (!foldScale && !keyLinear)
              x = arith::MulFOp::create(b, loc, x, scoreScale,
                                        tk.scaleFlags());
            Value rowTerm;
            kb.keyLinearRowTerm = keyLinear ? &rowTerm : nullptr;
            if (withMask || memArg("mask") || kb.op.hasScoreMod())
              x = tk.scoreMod(x, tk.add(tk.add(n0w, nb * 8 + j), c2),
                              rows[i][h], withMask, Value(), tk.add(n0w, c2),
                              nb * 8 + j);
            kb.keyLinearRowTerm = nullptr;
            if (keyLinear && !keyRow[mIdx(i, h)])
              keyRow[mIdx(i, h)] = rowTerm;
            s[sIdx(i, nb, h, j)] = x;
          }
    // Online softmax per row (i, h), in the exp2 domain. Row maxima of
    // this tile (scaled), reduced over the quad.
    SmallVector<Value> next(st);
    SmallVector<Value> tileMax(2 * R);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t h = 0; h < 2; ++h) {
        Value mt = s[sIdx(i, 0, h, 0)];
        for (int64_t nb = 0; nb < NB; ++nb)
          for (int64_t j = 0; j < 2; ++j)
            if (nb || j)
              mt = arith::MaximumFOp::create(b, loc, mt, s[sIdx(i, nb, h, j)]);
        if (keyLinear)
          mt = kb.fma(mt, scoreScale, keyRow[mIdx(i, h)]);
        mt = tk.quadReduce(mt, /*isMax=*/true);
        if (foldScale)
          mt = arith::MulFOp::create(b, loc, mt, scaleLog2);
        tileMax[mIdx(i, h)] = mt;
      }
    // m' = max(m, tile max); α = 2^(m - m'); ℓ and O scaled by α. Yields
    // (m', αℓ, αO) in state order.
    auto rescale = [&](OpBuilder &, Location) {
      SmallVector<Value> out(st);
      for (int64_t i = 0; i < R; ++i) {
        Value alpha[2];
        for (int64_t h = 0; h < 2; ++h) {
          Value mOld = st[mIdx(i, h)];
          Value mNew =
              arith::MaximumFOp::create(b, loc, mOld, tileMax[mIdx(i, h)]);
          // A row that has seen only -inf keeps a finite reference (0).
          Value isNinf = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OEQ, mNew, ninf);
          Value ms = arith::SelectOp::create(b, loc, isNinf, zero, mNew);
          alpha[h] = tk.expDiff(mOld, ms);
          out[mIdx(i, h)] = mNew;
          out[lIdx(i, h)] =
              arith::MulFOp::create(b, loc, alpha[h], st[lIdx(i, h)]);
        }
        Value alphaC = vector::FromElementsOp::create(
            b, loc, fragC, ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
        for (int64_t eb = 0; eb < eBlocks; ++eb)
          out[oIdx(i, eb)] =
              arith::MulFOp::create(b, loc, st[oIdx(i, eb)], alphaC);
      }
      return out;
    };
    if (cfg.rescaleThreshold <= 0) {
      next = rescale(b, loc);
    } else {
      // Lazy rescaling: the reference max only moves (and O, ℓ are only
      // rescaled) when some row of the warp grew by more than the
      // threshold; otherwise P = 2^(s - m) <= 2^threshold against the
      // older max, which O / ℓ cancels exactly. One warp-uniform branch.
      SmallVector<Value> refs(st.take_front(2 * R));
      Value any = tk.anyRowGrew(tileMax, refs, cfg.rescaleThreshold);
      SmallVector<Type> types;
      for (Value v : st)
        types.push_back(v.getType());
      auto ifOp = scf::IfOp::create(b, loc, types, any, /*withElse=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, loc, rescale(b, loc));
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, loc, st);
      }
      next.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    }
    SmallVector<Value> negM(2 * R), ref(2 * R), negMLog2(2 * R);
    for (int64_t row = 0; row < 2 * R; ++row) {
      Value m = next[row];
      Value isNinf =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf);
      ref[row] = arith::SelectOp::create(b, loc, isNinf, zero, m);
      negM[row] = arith::NegFOp::create(b, loc, ref[row]);
      if (fmaExponent)
        negMLog2[row] = arith::MulFOp::create(b, loc, negM[row], log2e);
      if (keyLinear)
        negMLog2[row] = kb.fma(keyRow[row], log2e, negMLog2[row]);
    }
    Value expFactor = keyLinear ? scaleLog2 : log2e;
    SmallVector<Value> lsum(2 * R, zero);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t nb = 0; nb < NB; ++nb)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t j = 0; j < 2; ++j) {
            Value &x = s[sIdx(i, nb, h, j)];
            x = foldScale ? tk.ex2(kb.fma(x, scaleLog2, negM[mIdx(i, h)]))
                : fmaExponent
                    ? tk.ex2(kb.fma(x, expFactor, negMLog2[mIdx(i, h)]))
                    : tk.expDiff(x, ref[mIdx(i, h)]);
            lsum[mIdx(i, h)] =
                arith::AddFOp::create(b, loc, lsum[mIdx(i, h)], x);
          }
    for (int64_t row = 0; row < 2 * R; ++row)
      next[2 * R + row] =
          arith::AddFOp::create(b, loc, next[2 * R + row], lsum[row]);
    // O = α O + P V (O already scaled).
    if (tf) {
      // TF32 k-steps of 8 keys. The accumulator holds keys 2t, 2t+1 of
      // each 8-key block where the A operand wants t, t+4: the k order is
      // permuted instead (k = t is key 2t, k = t + 4 key 2t + 1), and V's
      // rows read in the same order (b0 = V[2t][g], b1 = V[2t+1][g]),
      // which a sum over keys does not see. Those reads are conflict-free
      // with rows padded by 4 values.
      SmallVector<Value> pA(R * NB);
      for (int64_t i = 0; i < R; ++i)
        for (int64_t nb = 0; nb < NB; ++nb)
          pA[i * NB + nb] =
              tfFrag({s[sIdx(i, nb, 0, 0)], s[sIdx(i, nb, 1, 0)],
                      s[sIdx(i, nb, 0, 1)], s[sIdx(i, nb, 1, 1)]});
      for (int64_t eb = 0; eb < eBlocks; ++eb) {
        // 3xTF32: the tile's P V in a fresh accumulator, added to O with
        // an f32 add. The tensor cores' accumulation does not round to
        // nearest; chained over every key tile its error grew with N
        // (rel 2.9e-5 at N = 4096, 1.2e-4 at 16384, docs/performance.md).
        SmallVector<Value> acc(R);
        for (int64_t i = 0; i < R; ++i)
          acc[i] = tfParts == 2 ? zeroC : next[oIdx(i, eb)];
        Value col = tk.add(g, eb * 8);
        for (int64_t nb = 0; nb < NB; ++nb) {
          Value key = tk.add(tk.add(c2, nb * 8), kOff);
          Value v0 = memref::LoadOp::create(b, loc, vTile,
                                            ValueRange{buf, key, col});
          Value v1 = memref::LoadOp::create(
              b, loc, vTile, ValueRange{buf, tk.add(key, 1), col});
          Value bf = tfFrag({v0, v1});
          for (int64_t i = 0; i < R; ++i)
            acc[i] = mmaTf(pA[i * NB + nb], bf, acc[i]);
        }
        for (int64_t i = 0; i < R; ++i)
          next[oIdx(i, eb)] =
              tfParts == 2
                  ? arith::AddFOp::create(b, loc, next[oIdx(i, eb)], acc[i])
                        .getResult()
                  : acc[i];
      }
      return next;
    }
    for (int64_t kk = 0; kk < BK / 16; ++kk) {
      SmallVector<Value> pA(R);
      for (int64_t i = 0; i < R; ++i) {
        SmallVector<Value> pairs;
        for (int64_t part = 0; part < 4; ++part) {
          int64_t nb = 2 * kk + part / 2, h = part % 2;
          Value lo = arith::TruncFOp::create(b, loc, elt, s[sIdx(i, nb, h, 0)]);
          Value hi = arith::TruncFOp::create(b, loc, elt, s[sIdx(i, nb, h, 1)]);
          pairs.push_back(vector::FromElementsOp::create(b, loc, pairType,
                                                         ValueRange{lo, hi}));
        }
        pA[i] = pack(fragA, pairs);
      }
      // ldmatrix.trans x4 on V rows: tiles (keys kk*16 + 0/8, e-block
      // eb / eb+1) give the B fragments of two e-blocks (E % 16 == 0).
      Value key = tk.add(tk.add(tk.add(laneRow, kk * 16), laneHalf8), kOff);
      for (int64_t eb = 0; eb < eBlocks; eb += 2) {
        auto bFrags =
            loadX4(vTile, ValueRange{buf, key, tk.add(laneTile16, eb * 8)},
                   /*transpose=*/true);
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t i = 0; i < R; ++i)
            next[oIdx(i, eb + half)] =
                mma(pA[i], bFrags[half], next[oIdx(i, eb + half)]);
      }
    }
    return next;
  };
  // One key tile per iteration: wait for it, free the previous buffer
  // (barrier) and refill it with tile n0 + (S - 1) tiles, then S, softmax
  // and P V.
  auto tileBody = [&](Value n0, ValueRange st, bool withMask) {
    Value buf = st.back();
    // Tile n0 has landed once at most S - 2 younger groups are pending.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                     b.getI32IntegerAttr(S - 2));
    gpu::BarrierOp::create(b, loc);
    Value row0 = tk.add(n0, (S - 1) * BN);
    if (P)
      tk.setPageEntries(row0, st.drop_back().take_back(P));
    issue(row0, tk.remu(tk.add(buf, S - 1), S));
    SmallVector<Value> ahead =
        P ? tk.loadPageEntries(tk.add(n0, S * BN), BN) : SmallVector<Value>();
    SmallVector<Value> acc = computeS(buf);
    SmallVector<Value> next =
        softmaxPV(acc, n0, buf, st.drop_back(1 + P), withMask);
    next.append(ahead.begin(), ahead.end());
    next.push_back(tk.remu(tk.add(buf, 1), S));
    scf::YieldOp::create(b, loc, next);
  };
  // Whole tiles whose keys every row of the block sees need no mask: they
  // run first, the boundary tiles (ragged end, causal diagonal) after.
  Value split = tk.unmaskedEnd(lb, ub, firstQuery, BN);
  SmallVector<Value> finalState;
  if (!cfg.pipeline) {
    finalState = tk.tileLoops(lb, split, ub, BN, init, tileBody);
    // The copies' page entries were defined inside the loops (V is read
    // through the table after them: foldHiddenKeys).
    tk.pageRow0 = Value();
  } else {
    // Software-pipelined: iteration t issues S = Q K^T of tile t + 1 before
    // the softmax and P V of tile t, so that the tensor cores work while the
    // softmax arithmetic runs. Tiles t and t + 1 are both resident (stages
    // >= 3); the last tile's softmax and P V follow the loops (masked: it
    // may be a boundary tile).
    const int64_t coreSize = 4 * R + R * eBlocks;
    Value ahead =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, ub, lb);
    Value span = arith::SelectOp::create(
        b, loc, ahead, arith::SubIOp::create(b, loc, ub, lb), c0);
    Value ntiles = tk.divu(tk.add(span, BN - 1), BN);
    Value lastStart = arith::SelectOp::create(
        b, loc, ahead,
        tk.add(lb,
               tk.mul(arith::SubIOp::create(b, loc, ntiles, kb.cIdx(1)), BN)),
        lb);
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                     b.getI32IntegerAttr(S - 2));
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> pinit(init.begin(), init.end() - 1);
    llvm::append_range(pinit, computeS(c0));
    pinit.push_back(c0);
    auto body = [&](bool withMask) {
      return [&, withMask](OpBuilder &, Location, Value n0, ValueRange st) {
        Value buf = st.back();
        Value nextBuf = tk.remu(tk.add(buf, 1), S);
        // Tile n0 + 1 tile has landed once at most S - 3 younger groups
        // are pending; after the barrier the buffer of tile n0 - 1 tile is
        // free for tile n0 + (S - 1) tiles.
        nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                         b.getI32IntegerAttr(S - 3));
        gpu::BarrierOp::create(b, loc);
        issue(tk.add(n0, (S - 1) * BN), tk.remu(tk.add(buf, S - 1), S));
        SmallVector<Value> accNext = computeS(nextBuf);
        SmallVector<Value> acc(st.drop_front(coreSize).drop_back());
        SmallVector<Value> next =
            softmaxPV(acc, n0, buf, st.take_front(coreSize), withMask);
        llvm::append_range(next, accNext);
        next.push_back(nextBuf);
        scf::YieldOp::create(b, loc, next);
      };
    };
    Value mid = arith::MinUIOp::create(b, loc, split, lastStart);
    auto unmasked =
        scf::ForOp::create(b, loc, lb, mid, kb.cIdx(BN), pinit, body(false));
    auto loop = scf::ForOp::create(b, loc, mid, lastStart, kb.cIdx(BN),
                                   unmasked.getResults(), body(true));
    ValueRange st = loop.getResults();
    SmallVector<Type> types;
    for (Value v : st.take_front(coreSize))
      types.push_back(v.getType());
    Value any =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, ntiles, c0);
    auto ifOp = scf::IfOp::create(b, loc, types, any, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> acc(st.drop_front(coreSize).drop_back());
      scf::YieldOp::create(b, loc,
                           softmaxPV(acc, lastStart, st.back(),
                                     st.take_front(coreSize),
                                     /*withMask=*/true));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, st.take_front(coreSize));
    }
    finalState.assign(ifOp.getResults().begin(), ifOp.getResults().end());
    tk.pageRow0 = Value();
  }
  // No copy may still be writing shared memory when the block exits.
  nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup, b.getI32IntegerAttr(0));
  if (KW > 1) {
    // The key warps' states meet in shared memory (over the K/V buffers,
    // free once every warp has left the loop), lane-major so that a warp's
    // accesses are conflict-free; every warp then merges the KW states of
    // its rows (the same values in each, so the epilogue runs as with one
    // warp per row tile; the first key warp stores them):
    //   m = max_k m_k,  ℓ = Σ_k 2^(m_k - m) ℓ_k,  O = Σ_k 2^(m_k - m) O_k.
    // Value v of a lane: m and ℓ (4 R), then O's fragments element-wise.
    const int64_t vals = 4 * R + R * eBlocks * 4;
    auto oValue = [&](int64_t i, int64_t eb, int64_t h, int64_t j) {
      return 4 * R + (i * eBlocks + eb) * 4 + h * 2 + j;
    };
    Value xch = view(MemRefType::get({cfg.warps * KW, vals, 32}, f32,
                                     AffineMap(), workgroup),
                     0);
    auto store = [&](Value x, int64_t v) {
      memref::StoreOp::create(b, loc, x, xch,
                              ValueRange{warpId, kb.cIdx(v), lane});
    };
    gpu::BarrierOp::create(b, loc);
    for (int64_t v = 0; v < 4 * R; ++v)
      store(finalState[v], v);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t eb = 0; eb < eBlocks; ++eb)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t j = 0; j < 2; ++j)
            store(vector::ExtractOp::create(b, loc, finalState[oIdx(i, eb)],
                                            ArrayRef<int64_t>{h, j}),
                  oValue(i, eb, h, j));
    gpu::BarrierOp::create(b, loc);
    auto load = [&](int64_t k, int64_t v) -> Value {
      return memref::LoadOp::create(
          b, loc, xch,
          ValueRange{tk.add(warp, k * cfg.warps), kb.cIdx(v), lane});
    };
    SmallVector<Value> merged(4 * R + R * eBlocks);
    SmallVector<SmallVector<Value>> oVals(R * eBlocks,
                                          SmallVector<Value>(4, zero));
    for (int64_t i = 0; i < R; ++i)
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<Value> mk;
        for (int64_t k = 0; k < KW; ++k)
          mk.push_back(load(k, mIdx(i, h)));
        Value mStar = mk[0];
        for (int64_t k = 1; k < KW; ++k)
          mStar = arith::MaximumFOp::create(b, loc, mStar, mk[k]);
        Value isNinf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             mStar, ninf);
        Value ref = arith::SelectOp::create(b, loc, isNinf, zero, mStar);
        Value l = zero;
        for (int64_t k = 0; k < KW; ++k) {
          Value a = tk.expDiff(mk[k], ref);
          l = kb.fma(a, load(k, lIdx(i, h)), l);
          for (int64_t eb = 0; eb < eBlocks; ++eb)
            for (int64_t j = 0; j < 2; ++j) {
              Value &o = oVals[i * eBlocks + eb][h * 2 + j];
              o = kb.fma(a, load(k, oValue(i, eb, h, j)), o);
            }
        }
        merged[mIdx(i, h)] = mStar;
        merged[lIdx(i, h)] = l;
      }
    for (int64_t i = 0; i < R; ++i)
      for (int64_t eb = 0; eb < eBlocks; ++eb)
        merged[oIdx(i, eb)] = vector::FromElementsOp::create(
            b, loc, fragC, oVals[i * eBlocks + eb]);
    finalState.assign(merged.begin(), merged.end());
  }
  {
    // Keys hidden from the whole block under a finite fill (see
    // TileKernel::foldHiddenKeys); row slot (i, h) is 2 i + h.
    SmallVector<Value> m, l;
    SmallVector<SmallVector<Value>> o(2 * R);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t h = 0; h < 2; ++h) {
        m.push_back(finalState[mIdx(i, h)]);
        l.push_back(finalState[lIdx(i, h)]);
        for (int64_t eb = 0; eb < eBlocks; ++eb)
          for (int64_t j = 0; j < 2; ++j)
            o[2 * i + h].push_back(vector::ExtractOp::create(
                b, loc, finalState[oIdx(i, eb)], ArrayRef<int64_t>{h, j}));
      }
    tk.foldHiddenKeys(lb, ub, BN, m, l, o, E);
    for (int64_t i = 0; i < R; ++i) {
      for (int64_t h = 0; h < 2; ++h) {
        finalState[lIdx(i, h)] = l[2 * i + h];
        finalState[mIdx(i, h)] = m[2 * i + h];
      }
      for (int64_t eb = 0; eb < eBlocks; ++eb)
        finalState[oIdx(i, eb)] = vector::FromElementsOp::create(
            b, loc, fragC,
            ValueRange{o[2 * i][2 * eb], o[2 * i][2 * eb + 1],
                       o[2 * i + 1][2 * eb], o[2 * i + 1][2 * eb + 1]});
    }
  }

  // Per row slot 2 i + h: its partial sum, max, row, and O values.
  SmallVector<Value> lsums, outRows, maxes;
  for (int64_t i = 0; i < R; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      lsums.push_back(finalState[lIdx(i, h)]);
      maxes.push_back(finalState[mIdx(i, h)]);
      outRows.push_back(rows[i][h]);
    }
  auto oAt = [&](int64_t slot, int64_t eb, int64_t j) -> Value {
    return vector::ExtractOp::create(b, loc, finalState[oIdx(slot / 2, eb)],
                                     ArrayRef<int64_t>{slot % 2, j});
  };
  // Key warps hold the same merged rows: the first stores them.
  Value writer;
  if (KW > 1)
    writer =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, keyWarp, c0);
  auto merge = [&] {
    storePartialAndMerge(tk, smem, launch.getBlockIds().z,
                         launch.getBlockIds().y, blockX, blockRow, BM, E, lsums,
                         maxes, outRows, oAt, /*mLog2=*/foldScale, writer,
                         cfg.sharedBytes(D, E));
  };
  if (SP > 1) {
    merge();
    tk.terminate();
    return;
  }
  // A split count chosen at launch: merge when there are several, else
  // the plain epilogue below (grid z is block-uniform).
  scf::IfOp ifOp;
  if (cfg.runtimeSplits) {
    Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          launch.getGridSize().z, kb.cIdx(1));
    ifOp = scf::IfOp::create(b, loc, several, /*withElse=*/true);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    merge();
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  }
  // One divide per row. With e the output's last dim, the normalized
  // block is staged in shared memory (over the K/V/Q buffers, after a
  // barrier) and written with 16-byte coalesced stores; otherwise element
  // by element. Rows past M are not stored.
  Value oTile;
  if (tk.outputStaged()) {
    gpu::BarrierOp::create(b, loc);
    oTile = view(oTileType, 0);
  }
  tk.storeOutput(
      oTile, BM, E, blockRow, lsums, outRows,
      [&](int64_t slot) {
        return tk.add(warpRow, tk.add(g, 16 * (slot / 2) + 8 * (slot % 2)));
      },
      oAt, maxes, /*mLog2=*/foldScale, writer);
  if (ifOp)
    b.setInsertionPointAfter(ifOp);
  tk.terminate();
}
