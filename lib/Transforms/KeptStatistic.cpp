//===- KeptStatistic.cpp - pass statistics that survive release LLVM ------===//
#include "attn/Support/KeptStatistic.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <mutex>
#include <string>

using namespace mlir;
using namespace mlir::attn;

namespace {
struct Entry {
  std::string description;
  uint64_t value = 0;
};
struct Table {
  std::mutex mutex;
  /// (pass argument, statistic name) -> value; ordered for a stable report.
  std::map<std::pair<std::string, std::string>, Entry> entries;
};
} // namespace

static Table &table() {
  static Table t;
  return t;
}

bool mlir::attn::llvmStatisticsEnabled() { return LLVM_ENABLE_STATS; }

KeptStatistic &KeptStatistic::operator+=(uint64_t value) {
  stat += value;
  if (llvmStatisticsEnabled())
    return *this;
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  Entry &e = t.entries[{owner->getArgument().str(), name}];
  e.description = description;
  e.value += value;
  return *this;
}

void mlir::attn::printKeptStatistics(llvm::raw_ostream &os) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.entries.empty())
    return;
  os << "===" << std::string(73, '-') << "===\n"
     << "                    ... attn pass statistics (kept) ...\n"
     << "===" << std::string(73, '-') << "===\n";
  std::string pass;
  for (auto &[key, e] : t.entries) {
    if (key.first != pass) {
      pass = key.first;
      os << "'" << pass << "'\n";
    }
    os << llvm::formatv("  (S) {0,6} {1} - {2}\n", e.value, key.second,
                        e.description);
  }
}
