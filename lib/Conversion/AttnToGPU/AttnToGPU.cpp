//===- AttnToGPU.cpp - attn.attention -> a gpu.launch kernel --------------===//
//
// Matches: a function holding one attn.attention with static shapes and a
//          constant scale.
// Produces: `func.func @attn_fwd(q, k, v, [mask], [sink], out)` on memrefs
//          whose gpu.launch runs one thread per query row (grid: query
//          blocks x flattened batch dims) over the online-softmax recurrence
//          with key tiles of one:
//            m' = max(m, s); α = exp(m - m'); p = exp(s - m')
//            ℓ' = α ℓ + p;   O' = α O + p v;   O = O / ℓ at the end
//          State is f32 in registers/local memory; no score tensor exists.
//          Operands are indexed through the op's maps (any layout, K/V
//          without the group dim). Causal and window loops only visit the
//          keys a row can see. The module gets an `attn.bundle` attribute
//          describing the kernel's arguments and launch for attn-bundle.
//
// This is the correctness baseline of the GPU path (SIMT, no tensor cores);
// see docs/performance.md for where it stands.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include <array>
#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
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
  /// memref[map(loopValues)]
  Value load(Value mem, AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    return memref::LoadOp::create(b, loc, mem, idx);
  }
};
} // namespace

static std::string dtypeName(Type t) {
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isF32())
    return "float32";
  if (t.isInteger(1))
    return "bool";
  return "unknown";
}

//===----------------------------------------------------------------------===//
// Tensor-core kernel (mma.sync m16n8k16)
//===----------------------------------------------------------------------===//
//
// Block: 4 warps x 16 query rows. Per key tile of 64:
//   S = Q K^T      8 n-blocks x (D/16) mma.sync, f32 accumulate
//   S *= scale * log2(e); masked keys -> -inf   (exp2 domain)
//   m' = max(m, rowmax(S))   (quad shuffles)    α = 2^(m - m')
//   P = 2^(S - m') kept in registers, re-packed as the A operand of P·V
//   ℓ = α ℓ + rowsum(P) (per thread; reduced once at the end)
//   O = α O + P V   (D/8... E/8 n-blocks of mma.sync)
// Operands are read straight from global memory (two halves per load for
// Q/K; V element-wise): the next steps are shared memory, cp.async and
// ldmatrix (docs/performance.md).

static constexpr int64_t kMmaRowsPerBlock = 64;
static constexpr int64_t kMmaThreads = 128;
static constexpr int64_t kMmaKeyTile = 64;

template <typename MemArgFn, typename MapOfFn>
static bool mmaEligible(AttentionOp op, MemArgFn memArg, MapOfFn mapOf,
                        int64_t D, int64_t E) {
  Type t = op.getQuery().getType().getElementType();
  if (!(t.isF16() || t.isBF16()) ||
      op.getKey().getType().getElementType() != t ||
      op.getValue().getType().getElementType() != t)
    return false;
  if (op.getMask() || op.getSink() ||
      (op.getMaskValue() && !op.getMaskValue()->isInfinity()))
    return false;
  if (D % 16 != 0 || E % 8 != 0 || D > 256 || E > 256)
    return false;
  unsigned r = op.getNumBatchDims();
  auto lastIs = [&](StringRef name, unsigned dim) {
    AffineMap m = mapOf(name);
    return m.getNumResults() > 0 &&
           cast<AffineDimExpr>(m.getResults().back()).getPosition() == dim;
  };
  // Q and K rows are read along d, V rows along e, 8 halves at a time.
  return lastIs("q", r + 2) && lastIs("k", r + 2) && lastIs("v", r + 3) &&
         D % 16 == 0 && E % 16 == 0;
}

template <typename MemArgFn, typename MapOfFn>
static void buildMmaKernel(KernelBuilder &kb, MemArgFn memArg, MapOfFn mapOf,
                           ArrayRef<int64_t> sizes, unsigned r, int64_t gridX,
                           int64_t batch) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AttentionOp op = kb.op;
  int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2], E = sizes[r + 3];
  Type elt = op.getQuery().getType().getElementType();
  Type f32 = b.getF32Type();
  auto outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();

  Value c1h = kb.cIdx(1);
  // K and V tiles staged in shared memory, rows padded by 8 halves so that
  // the fragment reads of one warp spread over the banks.
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  // Two buffers each: the next tile streams in (cp.async) while this one is
  // used.
  auto kTileType =
      MemRefType::get({2, kMmaKeyTile, D + 8}, elt, AffineMap(), workgroup);
  auto vTileType =
      MemRefType::get({2, kMmaKeyTile, E + 8}, elt, AffineMap(), workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.cIdx(gridX), kb.cIdx(batch), c1h, kb.cIdx(kMmaThreads), c1h,
      c1h, /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      ValueRange{}, TypeRange{kTileType, vTileType});
  func::ReturnOp::create(b, loc);
  Value kTile = launch.getWorkgroupAttributions()[0];
  Value vTile = launch.getWorkgroupAttributions()[1];
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  Value c0 = kb.cIdx(0), c1 = kb.cIdx(1);
  Value warp = arith::DivUIOp::create(b, loc, tid, kb.cIdx(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, kb.cIdx(32));
  Value g = arith::DivUIOp::create(b, loc, lane, kb.cIdx(4));
  Value c2 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, kb.cIdx(4)), kb.cIdx(2));
  // ldmatrix addressing: lane l points at row l % 8 of 8x8 tile l / 8.
  bool useLdMatrix = elt.isF16();
  Value laneRow = arith::RemUIOp::create(b, loc, lane, kb.cIdx(8));
  Value tileIdx = arith::DivUIOp::create(b, loc, lane, kb.cIdx(8));
  // K tiles step along d by 8: column (l / 8) * 8.
  Value laneTile8 = arith::MulIOp::create(b, loc, tileIdx, kb.cIdx(8));
  // V tiles: (l / 8) % 2 picks keys +0/+8, l / 16 picks the e-block.
  Value laneHalf8 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tileIdx, kb.cIdx(2)),
      kb.cIdx(8));
  Value laneTile16 = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, kb.cIdx(16)), kb.cIdx(8));
  auto add = [&](Value x, int64_t k) -> Value {
    return k ? arith::AddIOp::create(b, loc, x, kb.cIdx(k)).getResult() : x;
  };
  auto addv = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  auto clamp = [&](Value x, int64_t hi) -> Value {
    return arith::MinUIOp::create(b, loc, x, kb.cIdx(hi - 1));
  };
  Value rowBase = addv(
      arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                            kb.cIdx(kMmaRowsPerBlock)),
      arith::MulIOp::create(b, loc, warp, kb.cIdx(16)));
  Value rows[2] = {addv(rowBase, g), add(addv(rowBase, g), 8)};
  Value rowsC[2] = {clamp(rows[0], M), clamp(rows[1], M)};

  SmallVector<Value> loops(r + 4);
  Value rest = launch.getBlockIds().y;
  for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
    loops[i] = arith::RemUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
    rest = arith::DivUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
  }
  auto indices = [&](StringRef name) {
    SmallVector<Value> idx;
    for (AffineExpr e : mapOf(name).getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    return idx;
  };
  auto pairType = VectorType::get({2}, elt);
  auto fragA = VectorType::get({4, 2}, elt);
  auto fragB = VectorType::get({2, 2}, elt);
  auto fragC = VectorType::get({2, 2}, f32);
  // Two consecutive halves along the operand's last dim.
  auto load2 = [&](StringRef name) -> Value {
    return vector::LoadOp::create(b, loc, pairType, memArg(name),
                                  indices(name));
  };
  auto pack = [&](VectorType t, ArrayRef<Value> pairs) -> Value {
    Value v = arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
    for (auto [i, p] : llvm::enumerate(pairs))
      v = vector::InsertOp::create(b, loc, p, v, ArrayRef<int64_t>{(int64_t)i});
    return v;
  };
  // ldmatrix x4 from a shared tile: the four 8x8 tiles as two B fragments.
  auto loadX4 = [&](Value tile, ValueRange idx, bool transpose) {
    Value frags = nvgpu::LdMatrixOp::create(b, loc, fragA, tile, idx,
                                            transpose, /*numTiles=*/4);
    std::array<Value, 2> out;
    for (int64_t half = 0; half < 2; ++half)
      out[half] = pack(
          fragB,
          {vector::ExtractOp::create(b, loc, frags, ArrayRef<int64_t>{2 * half}),
           vector::ExtractOp::create(b, loc, frags,
                                     ArrayRef<int64_t>{2 * half + 1})});
    return out;
  };
  // bf16 operands do not lower through nvgpu.mma.sync in MLIR 22 (the
  // conversion leaves an unrealized cast), so bf16 issues the same
  // instruction through inline PTX on the packed registers.
  auto regs = [&](Value frag, int64_t n) {
    SmallVector<Value> out;
    auto i32x1 = VectorType::get({1}, b.getI32Type());
    for (int64_t i = 0; i < n; ++i) {
      Value pair = vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i});
      Value asInt = vector::BitCastOp::create(b, loc, i32x1, pair);
      out.push_back(
          vector::ExtractOp::create(b, loc, asInt, ArrayRef<int64_t>{0}));
    }
    return out;
  };
  auto mma = [&](Value a, Value bb, Value c) -> Value {
    if (elt.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bb, c,
                                      ArrayRef<int64_t>{16, 8, 16});
    SmallVector<Value> ins = regs(a, 4);
    llvm::append_range(ins, regs(bb, 2));
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t j = 0; j < 2; ++j)
        ins.push_back(
            vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{h, j}));
    auto ptx = NVVM::InlinePtxOp::create(
        b, loc, TypeRange{f32, f32, f32, f32}, ins, ValueRange{},
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        Value());
    return vector::FromElementsOp::create(b, loc, fragC, ptx->getResults());
  };

  // Q fragments for the whole row block, once.
  SmallVector<Value> qFrag;
  for (int64_t ks = 0; ks < D / 16; ++ks) {
    SmallVector<Value> pairs;
    for (int64_t part = 0; part < 4; ++part) {
      loops[r] = rowsC[part % 2];
      loops[r + 2] = add(c2, ks * 16 + (part / 2) * 8);
      pairs.push_back(load2("q"));
    }
    qFrag.push_back(pack(fragA, pairs));
  }

  // Keys the warp's 16 rows can see.
  Value lb = c0, ub = kb.cIdx(N);
  std::optional<int64_t> window = op.getWindow();
  // Bounds are per block (all warps meet at the barriers).
  Value blockRow = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                         kb.cIdx(kMmaRowsPerBlock));
  if (op.getCausal())
    ub = arith::MinUIOp::create(b, loc, ub, add(blockRow, kMmaRowsPerBlock));
  if (window) {
    Value reach = kb.cIdx(*window - 1);
    Value far = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      blockRow, reach);
    lb = arith::SelectOp::create(
        b, loc, far, arith::SubIOp::create(b, loc, blockRow, reach), c0);
  }
  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Value zeroC = arith::ConstantOp::create(b, loc, fragC, b.getZeroAttr(fragC));
  int64_t eBlocks = E / 8;
  SmallVector<Value> init = {ninf, ninf, zero, zero};
  init.append(eBlocks, zeroC);
  Value scaleLog2 = kb.cF32(kb.scale * 1.4426950408889634f);
  // Reduce over the 4 lanes (a quad) that hold one row of a C fragment.
  auto quadReduce = [&](Value x, bool isMax) -> Value {
    for (int32_t off : {1, 2}) {
      Value o = gpu::ShuffleOp::create(b, loc, x, off, 32,
                                       gpu::ShuffleMode::XOR)
                    .getShuffleResult();
      x = isMax ? arith::MaximumFOp::create(b, loc, x, o).getResult()
                : arith::AddFOp::create(b, loc, x, o).getResult();
    }
    return x;
  };
  auto ex2 = [&](Value x) -> Value {
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{f32}, ValueRange{x},
                                     ValueRange{}, "ex2.approx.ftz.f32 $0, $1;",
                                     Value())
        ->getResult(0);
  };

  // Issue the asynchronous copies of the K and V tiles starting at key n0
  // into buffer `buf`: 16-byte cp.async per thread, rows past N clamped.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto issue = [&](Value n0, Value buf) -> Value {
    SmallVector<Value> tokens;
    auto copy = [&](StringRef name, Value tile, int64_t width, unsigned dim) {
      int64_t chunks = kMmaKeyTile * width / 8; // a multiple of the threads
      for (int64_t it = 0; it < chunks / kMmaThreads; ++it) {
        Value i = add(tid, it * kMmaThreads);
        Value keyLocal = arith::DivUIOp::create(b, loc, i, kb.cIdx(width / 8));
        Value col = arith::MulIOp::create(
            b, loc, arith::RemUIOp::create(b, loc, i, kb.cIdx(width / 8)),
            kb.cIdx(8));
        loops[r + 1] = clamp(addv(n0, keyLocal), N);
        loops[dim] = col;
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, tokenType, tile, ValueRange{buf, keyLocal, col},
            memArg(name), indices(name), b.getIndexAttr(8),
            /*srcElements=*/Value(), /*bypassL1=*/UnitAttr()));
      }
    };
    copy("k", kTile, D, r + 2);
    copy("v", vTile, E, r + 3);
    return nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  };
  issue(lb, c0);
  init.push_back(c0); // the buffer holding the current tile

  // One key tile; `withMask` adds the per-element ragged/causal/window
  // mask (only tiles that cross a boundary need it).
  auto tileBody = [&](bool withMask) {
    return [&, withMask](OpBuilder &, Location, Value n0, ValueRange st) {
        Value buf = st.back();
        Value nextBuf = arith::SubIOp::create(b, loc, c1, buf);
        // Prefetch the next tile, then wait for this one (one group may
        // stay in flight).
        Value group = issue(add(n0, kMmaKeyTile), nextBuf);
        nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(1));
        gpu::BarrierOp::create(b, loc);

        // S = Q K^T for 8 blocks of 8 keys.
        SmallVector<Value> s(8 * 4); // [nb][h][j]
        for (int64_t nb = 0; nb < 8; ++nb) {
          Value keyLocal = add(g, nb * 8);
          Value acc = zeroC;
          if (useLdMatrix && D % 32 == 0) {
            // ldmatrix x4: lanes 8i..8i+7 address rows of 8x8 tile i =
            // (keys nb*8.., d = 2 k-steps x 2 halves); the four results are
            // the B fragments (K^T) of two k-steps.
            Value key = add(laneRow, nb * 8);
            for (int64_t ks = 0; ks < D / 16; ks += 2) {
              Value col = addv(laneTile8, kb.cIdx(ks * 16));
              auto bFrags = loadX4(kTile, ValueRange{buf, key, col},
                                   /*transpose=*/false);
              for (int64_t half = 0; half < 2; ++half)
                acc = mma(qFrag[ks + half], bFrags[half], acc);
            }
          } else {
            for (int64_t ks = 0; ks < D / 16; ++ks) {
              SmallVector<Value> pairs;
              for (int64_t part = 0; part < 2; ++part)
                pairs.push_back(vector::LoadOp::create(
                    b, loc, pairType, kTile,
                    ValueRange{buf, keyLocal, add(c2, ks * 16 + part * 8)}));
              acc = mma(qFrag[ks], pack(fragB, pairs), acc);
            }
          }
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t j = 0; j < 2; ++j) {
              Value x = vector::ExtractOp::create(b, loc, acc,
                                                  ArrayRef<int64_t>{h, j});
              x = arith::MulFOp::create(b, loc, x, scaleLog2);
              if (!withMask) {
                s[nb * 4 + h * 2 + j] = x;
                continue;
              }
              Value col = addv(add(n0, nb * 8 + j), c2);
              Value masked = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::uge, col, kb.cIdx(N));
              if (op.getCausal())
                masked = arith::OrIOp::create(
                    b, loc, masked,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          col, rows[h]));
              if (window)
                masked = arith::OrIOp::create(
                    b, loc, masked,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                          rows[h], add(col, *window)));
              s[nb * 4 + h * 2 + j] =
                  arith::SelectOp::create(b, loc, masked, ninf, x);
            }
        }
        // Online softmax per row half h (rows g and g + 8).
        Value alpha[2], ms[2];
        SmallVector<Value> next(4);
        for (int64_t h = 0; h < 2; ++h) {
          Value mt = s[h * 2];
          for (int64_t nb = 0; nb < 8; ++nb)
            for (int64_t j = 0; j < 2; ++j)
              mt = arith::MaximumFOp::create(b, loc, mt, s[nb * 4 + h * 2 + j]);
          mt = quadReduce(mt, /*isMax=*/true);
          Value mNew = arith::MaximumFOp::create(b, loc, st[h], mt);
          Value isNinf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                               mNew, ninf);
          ms[h] = arith::SelectOp::create(b, loc, isNinf, zero, mNew);
          alpha[h] = ex2(arith::SubFOp::create(b, loc, st[h], ms[h]));
          next[h] = mNew;
        }
        Value lsum[2] = {zero, zero};
        for (int64_t nb = 0; nb < 8; ++nb)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t j = 0; j < 2; ++j) {
              Value &x = s[nb * 4 + h * 2 + j];
              x = ex2(arith::SubFOp::create(b, loc, x, ms[h]));
              lsum[h] = arith::AddFOp::create(b, loc, lsum[h], x);
            }
        for (int64_t h = 0; h < 2; ++h)
          next[2 + h] = kb.fma(alpha[h], st[2 + h], lsum[h]);
        // O = α O + P V.
        Value alphaC = vector::FromElementsOp::create(
            b, loc, fragC, ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
        SmallVector<Value> o;
        for (int64_t eb = 0; eb < eBlocks; ++eb)
          o.push_back(arith::MulFOp::create(b, loc, st[4 + eb], alphaC));
        for (int64_t kk = 0; kk < kMmaKeyTile / 16; ++kk) {
          SmallVector<Value> pairs;
          for (int64_t part = 0; part < 4; ++part) {
            int64_t nb = 2 * kk + part / 2, h = part % 2;
            Value lo = arith::TruncFOp::create(b, loc, elt, s[nb * 4 + h * 2]);
            Value hi =
                arith::TruncFOp::create(b, loc, elt, s[nb * 4 + h * 2 + 1]);
            pairs.push_back(vector::FromElementsOp::create(
                b, loc, pairType, ValueRange{lo, hi}));
          }
          Value pA = pack(fragA, pairs);
          Value keyBase = add(c2, kk * 16);
          if (useLdMatrix && eBlocks % 2 == 0) {
            // ldmatrix.trans x4 on V rows: tiles (keys kk*16 + 0/8, e-block
            // eb / eb+1) give the B fragments of two e-blocks.
            Value key = addv(add(laneRow, kk * 16), laneHalf8);
            for (int64_t eb = 0; eb < eBlocks; eb += 2) {
              Value col = addv(laneTile16, kb.cIdx(eb * 8));
              auto bFrags = loadX4(vTile, ValueRange{buf, key, col},
                                   /*transpose=*/true);
              for (int64_t half = 0; half < 2; ++half)
                o[eb + half] = mma(pA, bFrags[half], o[eb + half]);
            }
            continue;
          }
          for (int64_t eb = 0; eb < eBlocks; ++eb) {
            Value e = add(g, eb * 8);
            SmallVector<Value> vals;
            for (int64_t k : {0, 1, 8, 9})
              vals.push_back(memref::LoadOp::create(
                  b, loc, vTile, ValueRange{buf, add(keyBase, k), e}));
            Value vB = vector::FromElementsOp::create(b, loc, fragB, vals);
            o[eb] = mma(pA, vB, o[eb]);
          }
        }
        next.append(o.begin(), o.end());
        next.push_back(nextBuf);
        // Everyone is done with this buffer before it is refilled.
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, next);
    };
  };
  // Whole tiles whose keys every row of the block sees need no mask: they
  // run first, the boundary tiles (ragged end, causal diagonal) after.
  Value split = lb;
  if (!window) {
    Value limit = kb.cIdx(N);
    if (op.getCausal())
      limit = arith::MinUIOp::create(b, loc, limit, add(blockRow, 1));
    Value ahead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        limit, lb);
    Value span = arith::SelectOp::create(
        b, loc, ahead, arith::SubIOp::create(b, loc, limit, lb), c0);
    Value whole = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, span, kb.cIdx(kMmaKeyTile)),
        kb.cIdx(kMmaKeyTile));
    split = arith::MinUIOp::create(b, loc, addv(lb, whole), ub);
  }
  auto unmasked = scf::ForOp::create(b, loc, lb, split, kb.cIdx(kMmaKeyTile),
                                     init, tileBody(false));
  auto loop = scf::ForOp::create(b, loc, split, ub, kb.cIdx(kMmaKeyTile),
                                 unmasked.getResults(), tileBody(true));

  // One divide per row; rows past M are not stored.
  for (int64_t h = 0; h < 2; ++h) {
    Value l = quadReduce(loop.getResult(2 + h), /*isMax=*/false);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value inv = arith::SelectOp::create(
        b, loc, empty, zero, arith::DivFOp::create(b, loc, kb.cF32(1.0f), l));
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          rows[h], kb.cIdx(M));
    auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    loops[r] = rows[h];
    for (int64_t eb = 0; eb < eBlocks; ++eb)
      for (int64_t j = 0; j < 2; ++j) {
        Value x = vector::ExtractOp::create(b, loc, loop.getResult(4 + eb),
                                            ArrayRef<int64_t>{h, j});
        x = arith::MulFOp::create(b, loc, x, inv);
        if (outElt != f32)
          x = arith::TruncFOp::create(b, loc, outElt, x);
        loops[r + 3] = add(c2, eb * 8 + j);
        memref::StoreOp::create(b, loc, x, outMem, indices("out"));
      }
  }
  gpu::TerminatorOp::create(b, loc);
  (void)c1;
}

static LogicalResult buildKernel(ModuleOp module, AttentionOp op,
                                 int64_t threads) {
  Location loc = op.getLoc();
  std::optional<double> scale;
  {
    Attribute attr;
    if (matchPattern(op.getScale(), m_Constant(&attr)))
      if (auto f = dyn_cast<FloatAttr>(attr))
        scale = f.getValueAsDouble();
  }
  if (!scale)
    return op.emitError("the GPU kernel needs a constant scale");
  SmallVector<std::pair<StringRef, Value>> args = {
      {"q", op.getQuery()}, {"k", op.getKey()}, {"v", op.getValue()}};
  if (op.getMask())
    args.push_back({"mask", op.getMask()});
  if (op.getSink())
    args.push_back({"sink", op.getSink()});
  args.push_back({"out", op.getInit()});
  SmallVector<Type> memrefTypes;
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape())
      return op.emitError("the GPU kernel needs static shapes; '")
             << name << "' has type " << t;
    memrefTypes.push_back(MemRefType::get(t.getShape(), t.getElementType()));
  }

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, "attn_fwd",
                                   b.getFunctionType(memrefTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder kb{b, loc, op, static_cast<float>(*scale),
                   op.getMaskValue()
                       ? op.getMaskValue()->convertToFloat()
                       : -std::numeric_limits<float>::infinity(),
                   threads};
  auto memArg = [&](StringRef name) -> Value {
    for (auto [i, a] : llvm::enumerate(args))
      if (a.first == name)
        return entry->getArgument(i);
    return Value();
  };

  unsigned r = op.getNumBatchDims();
  // Static sizes of every attention loop.
  SmallVector<int64_t> sizes(r + 4, 1);
  // The map list is ordered q, k, v, out, mask, sink; args are q, k, v,
  // mask, sink, out.
  auto mapOf = [&](StringRef name) {
    if (name == "q")
      return op.getQueryMap();
    if (name == "k")
      return op.getKeyMap();
    if (name == "v")
      return op.getValueMap();
    if (name == "mask")
      return op.getMaskMap();
    if (name == "sink")
      return op.getSinkMap();
    return op.getOutputMap();
  };
  // Re-read sizes with the right maps (the loop above used list order).
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    for (auto [p, e] : llvm::enumerate(mapOf(name).getResults()))
      if (name != "mask" || t.getDimSize(p) != 1)
        sizes[cast<AffineDimExpr>(e).getPosition()] = t.getDimSize(p);
  }
  int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2], E = sizes[r + 3];
  int64_t batch = 1;
  for (unsigned i = 0; i < r; ++i)
    batch *= sizes[i];
  bool useMma = mmaEligible(op, memArg, mapOf, D, E);
  int64_t rowsPerBlock = useMma ? kMmaRowsPerBlock : threads;
  int64_t blockThreads = useMma ? kMmaThreads : threads;
  int64_t gridX = (M + rowsPerBlock - 1) / rowsPerBlock;
  if (useMma) {
    buildMmaKernel(kb, memArg, mapOf, sizes, r, gridX, batch);
  } else {

  Value c1 = kb.cIdx(1);
  auto launch = gpu::LaunchOp::create(b, loc, kb.cIdx(gridX), kb.cIdx(batch),
                                      c1, kb.cIdx(threads), c1, c1);
  func::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, kb.cIdx(threads)),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        row, kb.cIdx(M));
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  c1 = kb.cIdx(1); // defined in the kernel: nothing but the tensors is passed

  // Loop values (b..., m, n, d, e); n, d, e filled in by the loops.
  SmallVector<Value> loops(r + 4);
  Value rest = launch.getBlockIds().y;
  for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
    loops[i] = arith::RemUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
    rest = arith::DivUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
  }
  loops[r] = row;
  Value c0 = kb.cIdx(0);
  Type f32 = b.getF32Type();

  // The query row and the accumulator live in registers: the d and e loops
  // are unrolled (static head dims), so each thread keeps D + E f32 values.
  SmallVector<Value> qv;
  for (int64_t d = 0; d < D; ++d) {
    loops[r + 2] = kb.cIdx(d);
    qv.push_back(kb.ext(kb.load(memArg("q"), mapOf("q"), loops)));
  }
  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Value m0 = ninf, l0 = zero;
  if (Value sink = memArg("sink")) {
    m0 = kb.ext(kb.load(sink, mapOf("sink"), loops));
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m0, ninf);
    l0 = arith::SelectOp::create(b, loc, none, zero, kb.cF32(1.0f));
  }

  // Keys this row can see. With a finite mask value masked keys still count
  // (they average a fully masked row), so the bounds only shrink for -inf.
  bool skip = std::isinf(kb.maskValue);
  Value lb = c0, ub = kb.cIdx(N);
  std::optional<int64_t> window = op.getWindow();
  if (op.getCausal() && skip)
    ub = arith::MinUIOp::create(b, loc, ub,
                                arith::AddIOp::create(b, loc, row, c1));
  if (window && skip) {
    Value reach = kb.cIdx(*window - 1);
    Value far = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, row,
                                      reach);
    lb = arith::SelectOp::create(b, loc, far,
                                 arith::SubIOp::create(b, loc, row, reach), c0);
  }
  Value maskFill = kb.cF32(kb.maskValue);
  Value scaleV = kb.cF32(kb.scale);
  SmallVector<Value> init = {m0, l0};
  init.append(E, zero);
  auto keyLoop = scf::ForOp::create(
      b, loc, lb, ub, c1, init,
      [&](OpBuilder &nb, Location l, Value n, ValueRange state) {
        loops[r + 1] = n;
        Value s = zero;
        for (int64_t d = 0; d < D; ++d) {
          loops[r + 2] = kb.cIdx(d);
          Value k = kb.ext(kb.load(memArg("k"), mapOf("k"), loops));
          s = kb.fma(qv[d], k, s);
        }
        s = arith::MulFOp::create(nb, l, s, scaleV);
        if (Value mask = memArg("mask")) {
          Value mv = kb.load(mask, mapOf("mask"), loops);
          if (mv.getType().isInteger(1))
            s = arith::SelectOp::create(nb, l, mv, s, maskFill);
          else
            s = arith::AddFOp::create(nb, l, s, kb.ext(mv));
        }
        if (op.getCausal()) {
          Value after =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ugt, n, row);
          s = arith::SelectOp::create(nb, l, after, maskFill, s);
        }
        if (window) {
          Value reachN = arith::AddIOp::create(nb, l, n, kb.cIdx(*window));
          Value far = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge,
                                            row, reachN);
          s = arith::SelectOp::create(nb, l, far, maskFill, s);
        }
        // m' = max(m, s); ms keeps a fully -inf row finite.
        Value mNew = arith::MaximumFOp::create(nb, l, state[0], s);
        Value isNinf =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, mNew, ninf);
        Value ms = arith::SelectOp::create(nb, l, isNinf, zero, mNew);
        Value alpha = kb.exp(arith::SubFOp::create(nb, l, state[0], ms));
        Value p = kb.exp(arith::SubFOp::create(nb, l, s, ms));
        Value lNew = kb.fma(alpha, state[1], p);
        SmallVector<Value> next = {mNew, lNew};
        for (int64_t e = 0; e < E; ++e) {
          loops[r + 3] = kb.cIdx(e);
          Value vv = kb.ext(kb.load(memArg("v"), mapOf("v"), loops));
          // O' = α O + p v
          next.push_back(
              kb.fma(p, vv, arith::MulFOp::create(nb, l, alpha, state[2 + e])));
        }
        scf::YieldOp::create(nb, l, next);
      });
  Value lFinal = keyLoop.getResult(1);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lFinal, zero);
  Value inv = arith::DivFOp::create(b, loc, kb.cF32(1.0f), lFinal);
  Value outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();
  for (int64_t e = 0; e < E; ++e) {
    loops[r + 3] = kb.cIdx(e);
    Value o = arith::SelectOp::create(
        b, loc, empty, zero,
        arith::MulFOp::create(b, loc, keyLoop.getResult(2 + e), inv));
    if (outElt != f32)
      o = arith::TruncFOp::create(b, loc, outElt, o);
    SmallVector<Value> idx;
    for (AffineExpr ex : mapOf("out").getResults())
      idx.push_back(loops[cast<AffineDimExpr>(ex).getPosition()]);
    memref::StoreOp::create(b, loc, o, outMem, idx);
  }

  }
  // Describe the kernel for attn-bundle.
  SmallVector<Attribute> argAttrs;
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getStringAttr(dtypeName(t.getElementType()))),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(t.getShape())),
        b.getNamedAttr("map", AffineMapAttr::get(mapOf(name)))};
    argAttrs.push_back(b.getDictionaryAttr(fields));
  }
  SmallVector<NamedAttribute> info = {
      b.getNamedAttr("kernel", b.getStringAttr("attn_fwd_kernel")),
      b.getNamedAttr("args", b.getArrayAttr(argAttrs)),
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr({gridX, batch, 1})),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr({blockThreads, 1, 1})),
      b.getNamedAttr("tensor_cores", b.getBoolAttr(useMma)),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(0)),
      b.getNamedAttr("scale", b.getF32FloatAttr(kb.scale)),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal())),
      b.getNamedAttr("mask_value", b.getF32FloatAttr(kb.maskValue)),
      b.getNamedAttr("batch_dims", b.getI64IntegerAttr(r))};
  if (std::optional<int64_t> window = op.getWindow())
    info.push_back(b.getNamedAttr("window", b.getI64IntegerAttr(*window)));
  module->setAttr("attn.bundle", b.getDictionaryAttr(info));
  return success();
}

namespace {
struct ConvertAttnToGPUPass
    : public attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using ConvertAttnToGPUBase::ConvertAttnToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.size() != 1) {
      module.emitError("the GPU kernel path takes a module with exactly one "
                       "attention (after --attn-fuse), found ")
          << ops.size();
      return signalPassFailure();
    }
    if (failed(buildKernel(module, ops.front(), threads)))
      return signalPassFailure();
    // The kernel host function replaces everything else: the bundle holds
    // only the attention.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (auto f = dyn_cast<func::FuncOp>(op); f && f.getName() != "attn_fwd")
        f.erase();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
  }
};
} // namespace
