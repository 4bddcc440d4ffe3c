//===- attn-bundle.cpp - MLIR attention -> kernel bundle ------------------===//
//
//   attn-bundle in.mlir -o DIR [--chip=sm_90a] [--tile-q=N] [--tile-kv=N]
//               [--warps=N] [--stages=N] [--q-shared=-1|0|1]
//               [--rescale-threshold=8] [--pipeline=0|1] [--min-blocks=N]
//               [--wgmma=-1|0|1] [--warp-specialize=-1|0|1]
//               [--pingpong=-1|0|1] [--explain] [--block-threads=128]
//
// Fuses the module's attention, compiles it with --attn-gpu-pipeline and
// writes DIR/kernel.ptx, DIR/kernel.cubin (ptxas) and DIR/manifest.json:
// kernel name, argument order/dtypes/shapes, grid, block, shared memory and
// the attention it computes. Loading the bundle needs no MLIR (see
// python/attn_opt/bundle.py).
//
//===----------------------------------------------------------------------===//
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outDir("o", cl::desc("Bundle directory"),
                                   cl::Required);
static cl::opt<std::string> chip("chip", cl::desc("sm_80 or sm_90a"),
                                 cl::init("sm_90a"));
static cl::opt<int64_t> threads("block-threads",
                                cl::desc("SIMT kernel: threads per block"),
                                cl::init(128));
// The tensor-core kernel's launch shape (0: the default for the head dims).
static cl::opt<int64_t> tileQ("tile-q", cl::desc("Query rows per block"),
                              cl::init(0));
static cl::opt<int64_t> tileKV("tile-kv", cl::desc("Keys per K/V tile"),
                               cl::init(0));
static cl::opt<int64_t> warps("warps", cl::desc("Warps per block"),
                              cl::init(0));
static cl::opt<int64_t> stages("stages", cl::desc("K/V pipeline stages"),
                               cl::init(0));
static cl::opt<int64_t> qShared("q-shared",
                                cl::desc("Q from shared memory: 1, 0, -1 auto"),
                                cl::init(-1));
static cl::opt<int64_t> rescaleThreshold(
    "rescale-threshold",
    cl::desc("Rescale O only when a row max grew by more than 2^N (0: always)"),
    cl::init(8));
static cl::opt<int64_t> pipelineQK(
    "pipeline",
    cl::desc("Issue Q K^T of the next key tile before this tile's softmax"),
    cl::init(0));
static cl::opt<int64_t> wgmma(
    "wgmma",
    cl::desc("Hopper wgmma kernel on sm_90a: -1 where it applies, 0 never, "
             "1 required"),
    cl::init(-1));
static cl::opt<int64_t> warpSpecialize(
    "warp-specialize",
    cl::desc("Hopper kernel: 1 adds a producer warpgroup (cp.async on "
             "mbarriers) and gives the computing warpgroups more registers; "
             "-1: for long non-causal key loops at D = 128"),
    cl::init(-1));
static cl::opt<int64_t> pingpong(
    "pingpong",
    cl::desc("Warp-specialized pipelined kernel: the computing warpgroups "
             "take turns on the tensor cores (1), not (0), default (-1)"),
    cl::init(-1));
static cl::opt<bool> explainKernel(
    "explain",
    cl::desc("Remark which kernel the attention gets, its launch shape, and "
             "why not a faster one"),
    cl::init(false));
static cl::opt<int64_t> minBlocks(
    "min-blocks",
    cl::desc("Blocks per multiprocessor ptxas must leave registers for "
             "(0: no request; -1: the kernel's default)"),
    cl::init(-1));

/// Runs the GPU pipeline on `module` and returns the kernel object bytes;
/// `paramOrder` receives, for each kernel parameter, the host argument
/// (q, k, v, ...) it is: outlining orders parameters by first use.
static FailureOr<std::string> compile(ModuleOp module, StringRef format,
                                      SmallVectorImpl<int64_t> &paramOrder,
                                      bool explain) {
  attn::GpuPipelineOptions options;
  options.chip = chip;
  options.format = format.str();
  options.threads = threads;
  options.tileQ = tileQ;
  options.tileKV = tileKV;
  options.warps = warps;
  options.stages = stages;
  options.qShared = qShared;
  options.rescaleThreshold = rescaleThreshold;
  options.pipeline = pipelineQK;
  options.minBlocks = minBlocks;
  options.wgmma = wgmma;
  options.warpSpecialize = warpSpecialize;
  options.pingpong = pingpong;
  options.explain = explain;
  PassManager kernelPm(module.getContext());
  attn::buildAttnGpuKernelPipeline(kernelPm, options);
  if (failed(kernelPm.run(module)))
    return failure();
  paramOrder.clear();
  WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
    for (Value v : launch.getKernelOperands()) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg) {
        launch.emitError("kernel parameter is not a tensor argument");
        return WalkResult::interrupt();
      }
      paramOrder.push_back(arg.getArgNumber());
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  PassManager pm(module.getContext());
  attn::buildAttnGpuBinaryPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  std::string bytes;
  module.walk([&](gpu::BinaryOp bin) {
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        bytes = obj.getObject().getValue().str();
  });
  if (bytes.empty()) {
    module.emitError("the GPU pipeline produced no kernel object");
    return failure();
  }
  return bytes;
}

static llvm::json::Value toJson(Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    llvm::json::Object o;
    for (NamedAttribute n : d)
      o[n.getName().getValue()] = toJson(n.getValue());
    return o;
  }
  if (auto arr = dyn_cast<ArrayAttr>(a)) {
    llvm::json::Array v;
    for (Attribute x : arr)
      v.push_back(toJson(x));
    return v;
  }
  if (auto arr = dyn_cast<DenseI64ArrayAttr>(a)) {
    llvm::json::Array v;
    for (int64_t x : arr.asArrayRef())
      v.push_back(x);
    return v;
  }
  if (auto s = dyn_cast<StringAttr>(a))
    return s.getValue().str();
  if (auto b = dyn_cast<BoolAttr>(a))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(a)) {
    double v = f.getValueAsDouble();
    if (std::isinf(v))
      return nullptr; // JSON has no infinity: null means -inf
    return v;
  }
  if (auto m = dyn_cast<AffineMapAttr>(a)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    m.print(os);
    return s;
  }
  return nullptr;
}

static LogicalResult writeFile(StringRef path, StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "attn-bundle: cannot write " << path << ": "
                 << ec.message() << "\n";
    return failure();
  }
  os << bytes;
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "attn-bundle: MLIR attention -> kernel bundle\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  attn::registerAllAttnDialects(registry);
  MLIRContext context(registry);
  // Diagnostics (errors, and the --explain remarks) as file:line:col with
  // the source line.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, ParserConfig(&context));
  if (!module)
    return 1;
  OwningOpRef<ModuleOp> forCubin = module->clone();

  SmallVector<int64_t> paramOrder, cubinOrder;
  FailureOr<std::string> ptx =
      compile(*module, "isa", paramOrder, explainKernel);
  if (failed(ptx))
    return 1;
  auto info = (*module)->getAttrOfType<DictionaryAttr>("attn.bundle");
  if (!info) {
    llvm::errs() << "attn-bundle: no kernel description in the module\n";
    return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir)) {
    llvm::errs() << "attn-bundle: cannot create " << outDir << ": "
                 << ec.message() << "\n";
    return 1;
  }
  SmallString<256> path(outDir);
  llvm::sys::path::append(path, "kernel.ptx");
  if (failed(writeFile(path, *ptx)))
    return 1;

  llvm::json::Object manifest;
  manifest["format"] = "attn-opt-bundle/1";
  manifest["chip"] = chip.getValue();
  manifest["ptx"] = "kernel.ptx";
  // ptxas from /usr/local/cuda; a bundle without a cubin still loads (the
  // driver JIT-compiles the PTX).
  FailureOr<std::string> cubin =
      compile(*forCubin, "bin", cubinOrder, /*explain=*/false);
  if (succeeded(cubin) && cubinOrder == paramOrder) {
    path = outDir;
    llvm::sys::path::append(path, "kernel.cubin");
    if (succeeded(writeFile(path, *cubin)))
      manifest["cubin"] = "kernel.cubin";
  }
  llvm::json::Object attention;
  for (NamedAttribute n : info) {
    StringRef k = n.getName().getValue();
    if (k == "args") {
      // In kernel parameter order.
      auto args = cast<ArrayAttr>(n.getValue());
      llvm::json::Array ordered;
      for (int64_t i : paramOrder)
        ordered.push_back(toJson(args[i]));
      manifest[k] = std::move(ordered);
    } else if (k == "kernel" || k == "grid" || k == "block" ||
               k == "shared_bytes") {
      manifest[k] = toJson(n.getValue());
    } else {
      attention[k] = toJson(n.getValue());
    }
  }
  if (!attention.get("window"))
    attention["window"] = nullptr;
  manifest["attention"] = std::move(attention);
  path = outDir;
  llvm::sys::path::append(path, "manifest.json");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return failed(writeFile(path, text)) ? 1 : 0;
}
