//===- SimtKernel.cpp - the SIMT attention kernel -------------------------===//
//
// One thread per query row over the online-softmax recurrence with key
// tiles of one (f32 state in registers); operands through the op's maps,
// so masks, sinks, f32, finite fills and any layout work. The correctness
// baseline of the GPU path and the fallback of the tensor-core kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

void gpu_kernel::buildSimtKernel(KernelBuilder &kb, MemArgFn memArg,
                                 MapOfFn mapOf, ArrayRef<int64_t> sizes,
                                 unsigned r, int64_t gridX, int64_t batch) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AttentionOp op = kb.op;
  int64_t threads = kb.threads;
  int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2], E = sizes[r + 3];

  Value c1 = kb.cIdx(1);
  auto launch = gpu::LaunchOp::create(b, loc, kb.cIdx(gridX), kb.cIdx(batch),
                                      c1, kb.cIdx(threads), c1, c1);
  func::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, kb.cIdx(threads)),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, kb.cIdx(M));
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
  kb.hoistScoreMod(ArrayRef<Value>(loops).take_front(r));
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
  // The query's key position (bottom-right causal: row + N - M).
  Value qPos = arith::AddIOp::create(b, loc, row,
                                     kb.cIdx(op.getQueryOffsetOrZero()));
  if (op.getCausal() && skip)
    ub = arith::MinUIOp::create(b, loc, ub,
                                arith::AddIOp::create(b, loc, qPos, c1));
  if (window && skip) {
    Value reach = kb.cIdx(*window - 1);
    Value far =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, qPos, reach);
    lb = arith::SelectOp::create(b, loc, far,
                                 arith::SubIOp::create(b, loc, qPos, reach), c0);
  }
  Value maskFill = kb.cF32(kb.maskValue);
  Value scaleV = kb.scaleValue();
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
        if (op.hasScoreMod()) {
          SmallVector<Value> at(loops.begin(), loops.begin() + r);
          at.append({row, n});
          s = kb.applyScoreMod(s, at);
        }
        if (Value mask = memArg("mask")) {
          Value mv = kb.load(mask, mapOf("mask"), loops);
          if (mv.getType().isInteger(1))
            s = arith::SelectOp::create(nb, l, mv, s, maskFill);
          else
            s = arith::AddFOp::create(nb, l, s, kb.ext(mv));
        }
        if (op.getCausal()) {
          Value after =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ugt, n, qPos);
          s = arith::SelectOp::create(nb, l, after, maskFill, s);
        }
        if (window) {
          Value reachN = arith::AddIOp::create(nb, l, n, kb.cIdx(*window));
          Value far = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge,
                                            qPos, reachN);
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
  if (Value lseMem = memArg("lse"))
    memref::StoreOp::create(
        b, loc, kb.lse(keyLoop.getResult(0), lFinal, /*mLog2=*/false), lseMem,
        llvm::map_to_vector(mapOf("lse").getResults(), [&](AffineExpr ex) {
          return loops[cast<AffineDimExpr>(ex).getPosition()];
        }));
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
