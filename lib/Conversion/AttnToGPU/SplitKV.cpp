//===- SplitKV.cpp - split-KV partials and their merge --------------------===//
//
// Flash-decoding: a query tile's keys are spread over `splits` blocks (grid
// z). Each writes its range's normalized partial output and its softmax
// statistics (the running max m_z, in the kernel's units, and the sum ℓ_z),
//   O_z = (Σ_{n in z} e^(s_n - m_z) V_n) / ℓ_z,
// and the last block of the tile to finish (a counter per tile, atomically
// incremented after a memory fence) combines them exactly:
//   M = max_z m_z,  w_z = ℓ_z e^(m_z - M),
//   O = Σ_z w_z O_z / Σ_z w_z,  lse = M + log Σ_z w_z,
// in one launch, without a second kernel. Where the merge spans several
// rounds of the block's threads, the last K blocks to finish share it
// instead, a slice of rows each (mergeSlices; the tail is then bound by K
// multiprocessors' bandwidth from L2, not one's). (m_z, ℓ_z) rather than
// lse_z = m_z + log ℓ_z: near |m| = FLT_MAX (a finfo.min bias over a whole
// row) log ℓ_z is below m_z's rounding, and ranges of unequal length would
// weigh alike. Ranges that saw no key have ℓ_z = 0 and weigh 0; a row no
// range saw gets O = 0, lse = -inf.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

namespace {
/// The merge's statistics in shared memory start after the "last" flag.
constexpr int64_t kStatsOffset = 16;
/// Split counts whose statistics the merge stages in shared memory at most.
constexpr int64_t kMaxStagedSplits = 64;
/// Sliced merges: at most this many blocks share it.
constexpr int64_t kMaxMergers = 8;
/// A sliced merge's counter (one i32 per query tile): blocks done (bits
/// 0-8: up to kMaxSplits ranges), blocks started (9-17), candidates decided
/// (18-20), slices claimed (21-27, one bit per slice but the last block's),
/// slices merged (28-31).
constexpr int32_t kStartedShift = 9, kDecidedShift = 18, kClaimShift = 21,
                  kMergedShift = 28, kCountMask = 0x1ff;
constexpr int32_t kDone = 1, kStarted = 1 << kStartedShift,
                  kDecided = 1 << kDecidedShift;
static_assert(kMaxSplits <= kCountMask, "the counter's fields");
/// A merge is shared where it reads this many bytes or more.
constexpr int64_t kMinSlicedBytes = 65536;

/// Emits what the epilogue needs beyond TileKernel's helpers.
struct Merge {
  TileKernel &tk;
  OpBuilder &b;
  Location loc;

  void asmVoid(StringRef text) {
    MLIRContext *ctx = b.getContext();
    LLVM::InlineAsmOp::create(
        b, loc, LLVM::LLVMVoidType::get(ctx), ValueRange{}, text, "",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr());
  }
  /// The workspace's address (i64) of element `offset` (elements of 4 bytes).
  Value address(Value mem, Value offset) {
    Value base = arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem));
    Value bytes = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                               tk.mul(offset, 4));
    return arith::AddIOp::create(b, loc, base, bytes);
  }
  /// `n` (2 or 4) f32 at `addr`, read through L2 (ld.global.cg): other
  /// blocks wrote them in this launch, and L1 is not coherent.
  SmallVector<Value> loadCg(Value addr, int64_t n) {
    SmallVector<Type> types(n, b.getF32Type());
    std::string text = n == 2 ? "ld.global.cg.v2.f32 {$0, $1}, [$2];"
                              : "ld.global.cg.v4.f32 {$0, $1, $2, $3}, [$4];";
    auto op = NVVM::InlinePtxOp::create(b, loc, types, ValueRange{addr},
                                        ValueRange{}, text, Value());
    return SmallVector<Value>(op->getResults());
  }
};
} // namespace

int64_t gpu_kernel::mergeSlices(int64_t splits, int64_t rowsPerBlock,
                                int64_t rowsTotal, int64_t E, int64_t threads) {
  // Rounds of the block's threads over (row, 4 columns) tasks; slices are
  // whole rounds of rows that exist, as many as divide them.
  const int64_t perRow = E / 4, tasks = rowsPerBlock * perRow;
  const bool runtime = ShapedType::isDynamic(splits);
  if ((!runtime && splits < 2) || tasks % threads != 0)
    return 1;
  const int64_t rows = std::min(rowsPerBlock, rowsTotal);
  const int64_t live = llvm::divideCeil(rows * perRow, threads);
  // At least 4 slices of a merge reading 64 KB or more: the handshake costs
  // the last block round trips on the counter, which 2 or 3 slices or a
  // short merge do not win back (log step 130: M = 1 rows 0.94-0.99x with 2
  // slices, 16 rows x 4 partials (33 KB) 0.99x with 4). A split count
  // chosen at launch: K from the rows alone, the size checked at run time
  // (minSlicedSplits).
  if (!runtime && splits < minSlicedSplits(rows, E, 1))
    return 1;
  for (int64_t k =
           std::min({kMaxMergers, runtime ? kMaxMergers : splits, live});
       k >= 4; --k)
    if (live % k == 0)
      return k;
  return 1;
}

int64_t gpu_kernel::minSlicedSplits(int64_t rows, int64_t E, int64_t K) {
  return std::max<int64_t>(
      K, llvm::divideCeil(kMinSlicedBytes, rows * (E + 2) * 4));
}

void gpu_kernel::countSplitStarted(TileKernel &tk, Value flat, Value blockX,
                                   Value when) {
  OpBuilder &b = tk.kb.b;
  Location loc = tk.kb.loc;
  // The workspace's view first: a dynamic one is made at its first use,
  // which must dominate the merge's.
  Value locks = tk.memArg("locks");
  Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tk.tid,
                                     tk.idx(0));
  if (when)
    cond = arith::AndIOp::create(b, loc, cond, when);
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  memref::AtomicRMWOp::create(
      b, loc, arith::AtomicRMWKind::addi,
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(kStarted)), locks,
      ValueRange{flat, blockX});
}

void gpu_kernel::storePartialAndMerge(
    TileKernel &tk, Value smem, Value z, Value flat, Value blockX,
    Value blockRow, int64_t rowsPerBlock, int64_t E, ArrayRef<Value> l,
    ArrayRef<Value> m, ArrayRef<Value> rows,
    llvm::function_ref<Value(int64_t, int64_t, int64_t)> oAt, bool mLog2,
    Value writer, int64_t smemBytes) {
  KernelBuilder &kb = tk.kb;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Merge mg{tk, b, loc};
  // Rows are queries, or (group member, query) pairs with GQA packing.
  const int64_t M = tk.rowsTotal(), r = tk.r;
  Value oPart = tk.memArg("o_part"), mlPart = tk.memArg("ml_part"),
        locks = tk.memArg("locks");
  // Splits and batch entries: the workspace's dims 0 and 1, static or (a
  // split count chosen at launch, dynamic shapes) runtime values.
  auto oType = cast<MemRefType>(oPart.getType());
  const int64_t splits = oType.getDimSize(0); // kDynamic at runtime
  const bool runtime = ShapedType::isDynamic(splits);
  auto dimOf = [&](int64_t d) -> Value {
    return oType.isDynamicDim(d)
               ? memref::DimOp::create(b, loc, oPart, d).getResult()
               : tk.idx(oType.getDimSize(d));
  };
  Value splitsV = dimOf(0), batchV = dimOf(1);
  Value c0 = tk.idx(0);
  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Type f32 = b.getF32Type();
  auto pairType = VectorType::get({2}, f32);
  auto ult = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  };
  auto ifThen = [&](Value cond, llvm::function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  };
  // 1 / sum, or 0 for a row no key reached (sum 0).
  auto invOf = [&](Value sum) {
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
    return arith::SelectOp::create(
               b, loc, empty, zero,
               arith::DivFOp::create(b, loc, kb.cF32(1.0f), sum))
        .getResult();
  };

  // This range's partial: O / ℓ and (m, ℓ) per row (rows past M not
  // stored; (m, ℓ) by the first lane of the quad).
  for (size_t s = 0; s < l.size(); ++s) {
    Value sum = tk.quadReduce(l[s], /*isMax=*/false);
    Value inv = invOf(sum);
    Value stats = vector::FromElementsOp::create(b, loc, pairType,
                                                 ValueRange{m[s], sum});
    Value store = ult(rows[s], tk.idx(M));
    if (writer)
      store = arith::AndIOp::create(b, loc, store, writer);
    ifThen(store, [&] {
      for (int64_t eb = 0; eb < E / 8; ++eb) {
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{arith::MulFOp::create(b, loc, oAt(s, eb, 0), inv),
                       arith::MulFOp::create(b, loc, oAt(s, eb, 1), inv)});
        vector::StoreOp::create(b, loc, pair, oPart,
                                ValueRange{z, flat, rows[s], tk.add(tk.c2, eb * 8)},
                                /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tk.c2,
                                   tk.idx(0)),
             [&] {
               vector::StoreOp::create(b, loc, stats, mlPart,
                                       ValueRange{z, flat, rows[s], c0},
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(8));
             });
    });
  }
  // Publish, then count this block done; the block that makes the count
  // reach splits - 1 is the last and sees every partial (fence after the
  // count too). The flag in shared memory: which slices of the merge this
  // block runs (bit j: slice j; one slice, the whole merge, unsliced).
  const int64_t K = mergeSlices(splits, rowsPerBlock, M, E, tk.threads);
  mg.asmVoid("membar.gl;");
  gpu::BarrierOp::create(b, loc);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value flagMem = memref::ViewOp::create(
      b, loc, MemRefType::get({1}, b.getI32Type(), AffineMap(), workgroup),
      smem, tk.idx(0), ValueRange{});
  Value isT0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tk.tid, c0);
  Type i32 = b.getI32Type();
  auto ci = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
        .getResult();
  };
  auto field = [&](Value v, int64_t shift, int64_t mask) {
    return arith::AndIOp::create(
               b, loc, arith::ShRUIOp::create(b, loc, v, ci(shift)), ci(mask))
        .getResult();
  };
  auto eqI = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
        .getResult();
  };
  auto atomicAdd = [&](Value v) {
    return memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi, v,
                                       locks, ValueRange{flat, blockX})
        .getResult();
  };
  ifThen(isT0, [&] {
    Value old = atomicAdd(ci(kDone));
    if (K == 1) {
      Value last = eqI(old, runtime ? arith::IndexCastOp::create(
                                          b, loc, i32, tk.add(splitsV, -1))
                                          .getResult()
                                    : ci(splits - 1));
      memref::StoreOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, last),
                              flagMem, ValueRange{c0});
      return;
    }
    // Sliced: the last block runs slice K - 1; the K - 1 blocks before it
    // (candidates) each take their slice if every block of the tile has
    // started (a started block ends its key loop without waiting on
    // anything, so waiting for it cannot deadlock), and say so. The last
    // block waits for the candidates' word (they are past their count,
    // running) and runs the slices nobody took.
    Value ticket = field(old, 0, kCountMask);
    Value started = field(old, kStartedShift, kCountMask);
    // The split count, and whether the slices are shared (a count chosen
    // at launch may be too small: then the last block runs every slice).
    Value splitsI =
        runtime ? arith::IndexCastUIOp::create(b, loc, i32, splitsV).getResult()
                : ci(splits);
    Value shared =
        runtime ? arith::CmpIOp::create(
                      b, loc, arith::CmpIPredicate::uge, splitsI,
                      ci(minSlicedSplits(std::min(rowsPerBlock, M), E, K)))
                      .getResult()
                : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
    Value firstCand = arith::SubIOp::create(b, loc, splitsI, ci(K));
    // From the counter's value `v0` (an atomic's), reads it again (an
    // atomic add of 0, through L2) until `ready`.
    auto spin = [&](Value v0, llvm::function_ref<Value(Value)> ready) {
      auto loop = scf::WhileOp::create(b, loc, TypeRange{i32}, ValueRange{v0});
      {
        OpBuilder::InsertionGuard guard(b);
        Block *before = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
        Value v = before->getArgument(0);
        Value wait = arith::XOrIOp::create(
            b, loc, ready(v), arith::ConstantIntOp::create(b, loc, 1, 1));
        scf::ConditionOp::create(b, loc, wait, ValueRange{v});
        b.createBlock(&loop.getAfter(), {}, {i32}, {loc});
        mg.asmVoid("nanosleep.u32 64;");
        scf::YieldOp::create(b, loc, ValueRange{atomicAdd(ci(0))});
      }
      return loop.getResult(0);
    };
    auto isLastT = eqI(ticket, arith::SubIOp::create(b, loc, splitsI, ci(1)));
    auto roleIf = scf::IfOp::create(b, loc, TypeRange{i32}, isLastT,
                                    /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&roleIf.getThenRegion().front());
      Value want = arith::SelectOp::create(b, loc, shared, ci(K - 1), ci(0));
      Value v = spin(old, [&](Value v) {
        return eqI(field(v, kDecidedShift, 0x7), want);
      });
      Value claimed = field(v, kClaimShift, (1 << (K - 1)) - 1);
      Value mine = arith::OrIOp::create(
          b, loc,
          arith::XOrIOp::create(b, loc, claimed, ci((1 << (K - 1)) - 1)),
          ci(1 << (K - 1)));
      scf::YieldOp::create(b, loc, ValueRange{mine});
      b.setInsertionPointToStart(&roleIf.getElseRegion().front());
      Value cand = arith::AndIOp::create(
          b, loc, shared,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ticket,
                                firstCand));
      auto candIf = scf::IfOp::create(b, loc, TypeRange{i32}, cand,
                                      /*withElse=*/true);
      scf::YieldOp::create(b, loc, candIf.getResults());
      b.setInsertionPointToStart(&candIf.getThenRegion().front());
      Value j = arith::SubIOp::create(b, loc, ticket, firstCand);
      Value take = eqI(started, splitsI);
      Value bit = arith::ShLIOp::create(b, loc, ci(1), j);
      Value claim = arith::SelectOp::create(
          b, loc, take, arith::ShLIOp::create(b, loc, bit, ci(kClaimShift)),
          ci(0));
      Value now = atomicAdd(arith::AddIOp::create(b, loc, claim, ci(kDecided)));
      auto waitIf = scf::IfOp::create(b, loc, take, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard guard2(b);
        b.setInsertionPointToStart(&waitIf.getThenRegion().front());
        spin(now,
             [&](Value v) { return eqI(field(v, 0, kCountMask), splitsI); });
      }
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::SelectOp::create(b, loc, take, bit, ci(0))});
      b.setInsertionPointToStart(&candIf.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{ci(0)});
    }
    memref::StoreOp::create(b, loc, roleIf.getResult(0), flagMem,
                            ValueRange{c0});
  });
  gpu::BarrierOp::create(b, loc);
  Value flag = memref::LoadOp::create(b, loc, flagMem, ValueRange{c0});
  Value isLast =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, ci(0));
  ifThen(isLast, [&] {
    mg.asmVoid("membar.gl;");
    // Tasks of 4 columns of one row (one 16-byte load per partial),
    // consecutive threads on consecutive columns. The merge is the tile's
    // tail, on one multiprocessor (or K, a slice of rows each), so every
    // load of a chunk of partials is issued together and several tasks per
    // thread go side by side (a chunk is one round trip to L2; 64 rows x 16
    // partials, 512 KB, are bound by the multiprocessor's bandwidth from L2
    // instead: log step 129). Rows past M skip whole passes (a block-uniform
    // test) and clamp their reads.
    //  - Staged (a static split count whose statistics fit in shared
    //    memory, 16 rows or more): every (m, ℓ) of the block's rows first, the
    //    weights ℓ_z e^(m_z - max m) and 1 / Σ ℓ_z e^(m_z - max m) per row in
    //    shared memory; then each task reads O alone, up to 32 loads in flight.
    //  - Otherwise each task folds the partials in one online pass (a
    //    running max and sum rescaled per chunk, as the tile loop does per
    //    key tile), reading (m, ℓ) with O, up to 16 loads in flight.
    const int64_t cols = 4, R = rowsPerBlock, T = tk.threads;
    const int64_t perRow = E / cols, tasks = R * perRow;
    const int64_t rounds = (tasks + T - 1) / T;
    const int64_t S = std::max<int64_t>(splits, 1),
                  statFloats = 2 * R * S + 3 * R;
    // Staged where the block has 16 rows or more (M = 1 rows measured
    // 0.97-0.99x staged: two barriers for one row's statistics).
    const bool staged = K == 1 && !runtime && std::min(R, M) >= 16 &&
                        splits <= kMaxStagedSplits && R * splits <= 16 * T &&
                        kStatsOffset + 4 * statFloats <= smemBytes;
    const int64_t kLoads = staged ? 32 : 16;
    // The fewest chunks of at most kLoads partials, as even as they go.
    const int64_t kUnroll =
        runtime ? 8
                : llvm::divideCeil(splits, llvm::divideCeil(splits, kLoads));
    const int64_t kPasses =
        std::min<int64_t>(rounds, std::max<int64_t>(1, kLoads / kUnroll));
    Value outMem = tk.memArg("out");
    Type outElt = cast<MemRefType>(outMem.getType()).getElementType();
    Value lastSplit = runtime ? tk.add(splitsV, -1) : tk.idx(splits - 1);
    Value lastRow = tk.idx(M - 1);
    auto e = [&](Value d) { return mLog2 ? tk.ex2(d) : kb.exp(d); };
    // x with -inf read as 0: the reference of a row no range saw.
    auto refOf = [&](Value x) {
      Value none =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, ninf);
      return arith::SelectOp::create(b, loc, none, zero, x).getResult();
    };
    // Row offset of split z's partial: ((z * batch + flat) * M + row).
    auto rowOffset = [&](Value zz, Value row) {
      Value zb = runtime || oType.isDynamicDim(1)
                     ? arith::MulIOp::create(b, loc, zz, batchV).getResult()
                     : tk.mul(zz, oType.getDimSize(1));
      return tk.add(tk.mul(tk.add(zb, flat), M), row);
    };
    auto maxTree = [&](SmallVector<Value> tree) {
      while (tree.size() > 1) {
        SmallVector<Value> up;
        for (size_t i = 0; i + 1 < tree.size(); i += 2)
          up.push_back(arith::MaximumFOp::create(b, loc, tree[i], tree[i + 1]));
        if (tree.size() % 2)
          up.push_back(tree.back());
        tree = up;
      }
      return tree[0];
    };
    struct Task {
      Value row, rowC, rowLocal, col0, ok;
    };
    // Rounds from `roundBase` (a slice's first; null: 0).
    Value roundBase;
    auto taskAt = [&](int64_t it) -> Task {
      Value task = tk.add(tk.tid, it * T);
      if (roundBase)
        task = tk.add(task, tk.mul(roundBase, T));
      Value rowLocal = tk.divu(task, perRow);
      Value row = tk.add(blockRow, rowLocal);
      Value ok = ult(row, tk.idx(M));
      // A last, partial round has tasks past the block's rows: not stored,
      // and rowLocal (which indexes the staged statistics) kept within them.
      if ((it + 1) * T > tasks) {
        ok = arith::AndIOp::create(b, loc, ok, ult(task, tk.idx(tasks)));
        rowLocal = arith::MinUIOp::create(b, loc, rowLocal, tk.idx(R - 1));
      }
      return {row, arith::MinUIOp::create(b, loc, row, lastRow), rowLocal,
              tk.mul(tk.remu(task, perRow), cols), ok};
    };
    // O = acc * inv into out (and the lse), where the task has a row.
    auto storeTask = [&](const Task &t, ArrayRef<Value> acc, Value inv,
                         Value ref, Value wsum) {
      ifThen(t.ok, [&] {
        tk.setRow(t.row);
        SmallVector<Value> vals;
        for (int64_t j = 0; j < 4; ++j) {
          Value x = arith::MulFOp::create(b, loc, acc[j], inv);
          if (!outElt.isF32())
            x = arith::TruncFOp::create(b, loc, outElt, x);
          vals.push_back(x);
        }
        if (tk.outputStaged()) {
          tk.loops[r + 3] = t.col0;
          Value vec = vector::FromElementsOp::create(
              b, loc, VectorType::get({4}, outElt), vals);
          vector::StoreOp::create(
              b, loc, vec, outMem, tk.indices("out"),
              /*nontemporal=*/false,
              llvm::MaybeAlign(4 * outElt.getIntOrFloatBitWidth() / 8));
        } else {
          for (int64_t j = 0; j < 4; ++j) {
            tk.loops[r + 3] = tk.add(t.col0, j);
            memref::StoreOp::create(b, loc, vals[j], outMem, tk.indices("out"));
          }
        }
        if (Value lseMem = tk.memArg("lse"))
          ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t.col0,
                                       c0),
                 [&] {
                   memref::StoreOp::create(b, loc, kb.lse(ref, wsum, mLog2),
                                           lseMem, tk.indices("lse"));
                 });
      });
    };
    const bool tail = runtime || splits % kUnroll != 0;
    Value cEnd =
        runtime
            ? tk.mul(tk.divu(tk.add(splitsV, kUnroll - 1), kUnroll), kUnroll)
            : tk.idx((splits + kUnroll - 1) / kUnroll * kUnroll);

    // Staged: the statistics in shared memory (f32, after the flag): m and
    // then w per (row, split), and per row the reference, Σw and 1 / Σw.
    Value stats;
    auto statAt = [&](int64_t base, Value i) {
      return memref::LoadOp::create(b, loc, stats, ValueRange{tk.add(i, base)})
          .getResult();
    };
    auto statStore = [&](Value x, int64_t base, Value i) {
      memref::StoreOp::create(b, loc, x, stats, ValueRange{tk.add(i, base)});
    };
    // The statistic where `in` holds (or always, without `in`), else `other`
    // without reading: a clamped slot is another lane's to write.
    auto statIf = [&](Value in, int64_t base, Value i, Value other) {
      if (!in)
        return statAt(base, i);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{f32}, in,
                                    /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{statAt(base, i)});
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{other});
      return ifOp.getResult(0);
    };
    const int64_t wBase = R * S, refBase = 2 * R * S, sumBase = refBase + R,
                  invBase = sumBase + R;
    if (staged) {
      stats = memref::ViewOp::create(
          b, loc, MemRefType::get({statFloats}, f32, AffineMap(), workgroup),
          smem, tk.idx(kStatsOffset), ValueRange{});
      // Every (row, split)'s (m, ℓ), all loads in flight.
      const int64_t pairs = R * S;
      SmallVector<std::tuple<Value, Value, SmallVector<Value>>> got;
      for (int64_t k = 0; k * T < pairs; ++k) {
        Value i = tk.add(tk.tid, k * T);
        Value ok =
            (k + 1) * T > pairs ? ult(i, tk.idx(pairs)).getResult() : Value();
        Value ic = ok ? arith::MinUIOp::create(b, loc, i, tk.idx(pairs - 1))
                            .getResult()
                      : i;
        Value row = arith::MinUIOp::create(
            b, loc, tk.add(blockRow, tk.divu(ic, S)), lastRow);
        Value ro = rowOffset(tk.remu(ic, S), row);
        got.push_back(
            {ic, ok, mg.loadCg(mg.address(mlPart, tk.mul(ro, 2)), 2)});
      }
      for (auto &[ic, ok, ml] : got) {
        auto put = [&, ic = ic, ml = ml] {
          statStore(ml[0], 0, ic);
          statStore(ml[1], wBase, ic);
        };
        if (ok)
          ifThen(ok, put);
        else
          put();
      }
      gpu::BarrierOp::create(b, loc);
      // Per row, G threads (a power of two, lanes side by side): the max,
      // then the weights in place of ℓ and their sum, by xor shuffles.
      int64_t G = 1;
      while (2 * G * R <= T && 2 * G <= 32)
        G *= 2;
      Value rowLocal = tk.divu(tk.tid, G), sub = tk.remu(tk.tid, G);
      auto weigh = [&] {
        const int64_t per = llvm::divideCeil(S, G);
        SmallVector<Value> zs, ins, ms;
        for (int64_t j = 0; j < per; ++j) {
          Value z = tk.add(sub, j * G);
          Value in = (j + 1) * G > S ? ult(z, tk.idx(S)).getResult() : Value();
          Value zc =
              in ? arith::MinUIOp::create(b, loc, z, tk.idx(S - 1)).getResult()
                 : z;
          Value m = statIf(in, 0, tk.add(tk.mul(rowLocal, S), zc), ninf);
          zs.push_back(zc);
          ins.push_back(in);
          ms.push_back(m);
        }
        Value ref = refOf(tk.laneReduce(maxTree(ms), /*isMax=*/true, G));
        Value sum = zero;
        for (int64_t j = 0; j < per; ++j) {
          Value at = tk.add(tk.mul(rowLocal, S), zs[j]);
          // An empty range: m = -inf, ℓ = 0, weight 0.
          Value w = arith::MulFOp::create(
              b, loc, statIf(ins[j], wBase, at, zero),
              e(arith::SubFOp::create(b, loc, ms[j], ref)));
          if (ins[j])
            ifThen(ins[j], [&] { statStore(w, wBase, at); });
          else
            statStore(w, wBase, at);
          sum = arith::AddFOp::create(b, loc, sum, w);
        }
        sum = tk.laneReduce(sum, /*isMax=*/false, G);
        ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sub, c0),
               [&] {
                 statStore(ref, refBase, rowLocal);
                 statStore(sum, sumBase, rowLocal);
                 statStore(invOf(sum), invBase, rowLocal);
               });
      };
      // Whole warps in or out (G * R is a multiple of 32).
      if (G * R < T)
        ifThen(ult(tk.tid, tk.idx(G * R)), weigh);
      else
        weigh();
      gpu::BarrierOp::create(b, loc);
    }

    // Slices of q rounds (sliced merges cover the rounds with rows only:
    // mergeSlices divides them).
    const int64_t q =
        K == 1 ? rounds : llvm::divideCeil(std::min(R, M) * perRow, T) / K;
    auto runRounds = [&] {
      for (int64_t it0 = 0; it0 < q; it0 += kPasses) {
        const int64_t P = std::min<int64_t>(kPasses, q - it0);
        // The pass's first row (thread 0's): past M, so is every later one.
        Value firstRow =
            roundBase ? tk.divu(tk.mul(tk.add(roundBase, it0), T), perRow)
                      : tk.idx(it0 * T / perRow);
        Value live = ult(tk.add(blockRow, firstRow), tk.idx(M));
        ifThen(live, [&] {
          SmallVector<Task> ts;
          for (int64_t p = 0; p < P; ++p)
            ts.push_back(taskAt(it0 + p));
          // Per task: (staged) O[4]; (online) m (the running max, -inf before
          // any), s, O[4].
          const int64_t nState = staged ? 4 : 6;
          SmallVector<Value> init;
          for (int64_t p = 0; p < P; ++p) {
            if (!staged)
              init.append({ninf, zero});
            init.append({zero, zero, zero, zero});
          }
          auto loop = scf::ForOp::create(
              b, loc, c0, cEnd, tk.idx(kUnroll), init,
              [&](OpBuilder &, Location, Value z0, ValueRange st) {
                // The chunk's loads first: O (and online, (m, ℓ)) of every
                // partial.
                SmallVector<SmallVector<Value>> ml(P), ov(P);
                SmallVector<Value> in, zcs;
                for (int64_t u = 0; u < kUnroll; ++u) {
                  Value z = tk.add(z0, u);
                  in.push_back(tail ? ult(z, splitsV).getResult() : Value());
                  Value zc = tail ? arith::MinUIOp::create(b, loc, z, lastSplit)
                                        .getResult()
                                  : z;
                  zcs.push_back(zc);
                  for (int64_t p = 0; p < P; ++p) {
                    Value ro = rowOffset(zc, ts[p].rowC);
                    if (!staged) {
                      SmallVector<Value> mlv =
                          mg.loadCg(mg.address(mlPart, tk.mul(ro, 2)), 2);
                      llvm::append_range(ml[p], mlv);
                    }
                    SmallVector<Value> o = mg.loadCg(
                        mg.address(oPart, tk.add(tk.mul(ro, E), ts[p].col0)),
                        4);
                    llvm::append_range(ov[p], o);
                  }
                }
                SmallVector<Value> next;
                for (int64_t p = 0; p < P; ++p) {
                  if (staged) {
                    // The weights from shared memory (0 past the last split).
                    SmallVector<Value> acc(st.begin() + 4 * p,
                                           st.begin() + 4 * p + 4);
                    for (int64_t u = 0; u < kUnroll; ++u) {
                      Value w = statAt(
                          wBase, tk.add(tk.mul(ts[p].rowLocal, S), zcs[u]));
                      if (tail)
                        w = arith::SelectOp::create(b, loc, in[u], w, zero);
                      for (int64_t j = 0; j < 4; ++j)
                        acc[j] = kb.fma(w, ov[p][4 * u + j], acc[j]);
                    }
                    llvm::append_range(next, acc);
                    continue;
                  }
                  // Past the last split: m = -inf, ℓ = 0 (weight 0).
                  SmallVector<Value> mz, lz;
                  for (int64_t u = 0; u < kUnroll; ++u) {
                    Value m = ml[p][2 * u], l = ml[p][2 * u + 1];
                    if (tail) {
                      m = arith::SelectOp::create(b, loc, in[u], m, ninf);
                      l = arith::SelectOp::create(b, loc, in[u], l, zero);
                    }
                    mz.push_back(m);
                    lz.push_back(l);
                  }
                  // The chunk's max by a tree, then one rescale of the state.
                  Value mOld = st[6 * p];
                  Value mNew =
                      arith::MaximumFOp::create(b, loc, mOld, maxTree(mz));
                  Value ref = refOf(mNew);
                  Value alpha = e(arith::SubFOp::create(b, loc, mOld, ref));
                  Value s = arith::MulFOp::create(b, loc, st[6 * p + 1], alpha);
                  SmallVector<Value> acc;
                  for (int64_t j = 0; j < 4; ++j)
                    acc.push_back(arith::MulFOp::create(
                        b, loc, st[6 * p + 2 + j], alpha));
                  // w = ℓ e^(m - ref): an empty range has m = -inf, ℓ = 0.
                  for (int64_t u = 0; u < kUnroll; ++u) {
                    Value w = arith::MulFOp::create(
                        b, loc, lz[u],
                        e(arith::SubFOp::create(b, loc, mz[u], ref)));
                    s = arith::AddFOp::create(b, loc, s, w);
                    for (int64_t j = 0; j < 4; ++j)
                      acc[j] = kb.fma(w, ov[p][4 * u + j], acc[j]);
                  }
                  next.append({mNew, s});
                  llvm::append_range(next, acc);
                }
                scf::YieldOp::create(b, loc, next);
              });
          for (int64_t p = 0; p < P; ++p) {
            SmallVector<Value> acc;
            for (int64_t j = 0; j < 4; ++j)
              acc.push_back(loop.getResult(nState * p + nState - 4 + j));
            if (staged) {
              storeTask(ts[p], acc, statAt(invBase, ts[p].rowLocal),
                        statAt(refBase, ts[p].rowLocal),
                        statAt(sumBase, ts[p].rowLocal));
              continue;
            }
            Value wsum = loop.getResult(nState * p + 1);
            storeTask(ts[p], acc, invOf(wsum),
                      refOf(loop.getResult(nState * p)), wsum);
          }
        });
      }
    };
    if (K == 1) {
      runRounds();
      // Ready for the next launch.
      ifThen(isT0, [&] {
        memref::StoreOp::create(b, loc, ci(0), locks, ValueRange{flat, blockX});
      });
      return;
    }
    // The block's slices, one after the other (block-uniform tests).
    scf::ForOp::create(
        b, loc, c0, tk.idx(K), tk.idx(1), ValueRange{},
        [&](OpBuilder &, Location, Value j, ValueRange) {
          Value bit = field(flag, 0, 0xff);
          bit = arith::ShRUIOp::create(
              b, loc, bit, arith::IndexCastUIOp::create(b, loc, i32, j));
          ifThen(eqI(arith::AndIOp::create(b, loc, bit, ci(1)), ci(1)), [&] {
            roundBase = tk.mul(j, q);
            runRounds();
          });
          scf::YieldOp::create(b, loc);
        });
    // Count the slices merged; the block that completes K resets the counter
    // for the next launch (every other use of it is over by then). A block
    // that ran all K (the others declined, or too few ranges to share)
    // resets it without counting.
    ifThen(isT0, [&] {
      Value n = LLVM::CtPopOp::create(b, loc, i32, flag);
      auto allIf = scf::IfOp::create(b, loc, eqI(n, ci(K)), /*withElse=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&allIf.getThenRegion().front());
      memref::StoreOp::create(b, loc, ci(0), locks, ValueRange{flat, blockX});
      b.setInsertionPointToStart(&allIf.getElseRegion().front());
      Value old = atomicAdd(arith::ShLIOp::create(b, loc, n, ci(kMergedShift)));
      Value all =
          eqI(arith::AddIOp::create(b, loc, field(old, kMergedShift, 0xf), n),
              ci(K));
      ifThen(all, [&] {
        memref::StoreOp::create(b, loc, ci(0), locks, ValueRange{flat, blockX});
      });
    });
  });
}
