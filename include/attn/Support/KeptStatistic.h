//===- KeptStatistic.h - pass statistics that survive release LLVM -*- C++ -*-===//
//
// MLIR pass statistics are llvm::Statistic, which release builds of LLVM
// (Debian's among them: LLVM_ENABLE_STATS=0) compile into no-ops, so
// --mlir-pass-statistics shows nothing for any pass. A KeptStatistic is a
// regular Pass::Statistic (counted and printed natively where statistics
// are enabled) that also keeps its value in a process-wide table; attn-opt
// prints that table for --mlir-pass-statistics when LLVM does not.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_SUPPORT_KEPTSTATISTIC_H
#define ATTN_SUPPORT_KEPTSTATISTIC_H

#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::attn {

class KeptStatistic {
public:
  KeptStatistic(Pass *owner, const char *name, const char *description)
      : owner(owner), stat(owner, name, description), name(name),
        description(description) {}
  KeptStatistic &operator+=(uint64_t value);
  KeptStatistic &operator++() { return *this += 1; }

private:
  Pass *owner;
  Pass::Statistic stat;
  const char *name;
  const char *description;
};

/// Whether LLVM counts statistics itself (then the table stays empty).
bool llvmStatisticsEnabled();

/// Prints the kept values as mlir-opt's list report does; nothing when no
/// statistic was counted.
void printKeptStatistics(llvm::raw_ostream &os);

} // namespace mlir::attn

#endif // ATTN_SUPPORT_KEPTSTATISTIC_H
