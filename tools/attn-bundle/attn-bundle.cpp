//===- attn-bundle.cpp - MLIR attention -> kernel bundle ------------------===//
//
//   attn-bundle in.mlir -o DIR [--chip=sm_90a] [--tile-q=N] [--tile-kv=N]
//               [--warps=N] [--stages=N] [--q-shared=-1|0|1]
//               [--rescale-threshold=8] [--pipeline=0|1] [--min-blocks=N]
//               [--wgmma=-1|0|1] [--warp-specialize=-1|0|1]
//               [--pingpong=-1|0|1] [--tma=-1|0|1] [--persistent=-1|0|1]
//               [--shift-v=-1|0|1] [--key-bias-mma=-1|0|1]
//               [--q-regs=-1|0|1]
//               [--f32-precision=3xtf32|tf32|ieee]
//               [--explain] [--block-threads=128]
//
// Fuses the module's attention, compiles it with --attn-gpu-pipeline and
// writes DIR/kernel.ptx, DIR/kernel.cubin (ptxas) and DIR/manifest.json:
// kernel name, argument order/dtypes/shapes, grid, block, shared memory and
// the attention it computes. Loading the bundle needs no MLIR (see
// python/attn_opt/bundle.py).
//
// The manifest is checked against the schema the loader reads before
// anything is written, and records the sha256 of each file and of the
// binding (kernel, files, launch, arguments; `binding_text` in bundle.py is
// the same text). The bundle is written into a fresh directory beside DIR
// and renamed over it, so a killed run leaves the old bundle or none, and
// nothing already in DIR (a symlink included) is ever written through.
//
//===----------------------------------------------------------------------===//
#include "attn/InitAll.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
static cl::opt<int64_t> tma(
    "tma",
    cl::desc("Hopper kernel: Q/K/V tiles by the tensor memory accelerator "
             "from tensor maps the loader encodes (1), by cp.async (0), "
             "default (-1)"),
    cl::init(-1));
static cl::opt<int64_t> persistent(
    "persistent",
    cl::desc("Warp-specialized pipelined kernel: one block per "
             "multiprocessor looping over the query tiles it takes from a "
             "counter (1), one block per tile (0), default (-1)"),
    cl::init(-1));
static cl::opt<int64_t> shiftV(
    "shift-v",
    cl::desc("Warp-specialized pipelined kernel with TMA: V of key tile "
             "t - 1 in the stage of K of tile t (1), K and V of one tile per "
             "stage (0), default (-1)"),
    cl::init(-1));
static cl::opt<int64_t> pingpong(
    "pingpong",
    cl::desc("Warp-specialized pipelined kernel: the computing warpgroups "
             "take turns on the tensor cores (1), not (0), default (-1)"),
    cl::init(-1));
static cl::opt<int64_t> keyBiasMma(
    "key-bias-mma",
    cl::desc("Hopper kernel: a bias linear in the key index (ALiBi) added on "
             "the tensor cores (1), by one fma per score (0), default (-1)"),
    cl::init(-1));
static cl::opt<int64_t> qRegs(
    "q-regs",
    cl::desc("Hopper TF32 kernel: Q's A fragments in registers (1), in shared "
             "memory (0), default (-1)"),
    cl::init(-1));
static cl::opt<bool> explainKernel(
    "explain",
    cl::desc("Remark which kernel the attention gets, its launch shape, and "
             "why not a faster one"),
    cl::init(false));
static cl::opt<int64_t> splits(
    "splits",
    cl::desc("Split-KV blocks per query tile (-1: from the shapes; 1: none; "
             "2-256)"),
    cl::init(-1));
static cl::opt<int64_t> keyWarps(
    "key-warps",
    cl::desc("Warps sharing each key tile of the mma.sync kernel (1-4; 0: "
             "from the shapes)"),
    cl::init(0));
static cl::opt<std::string> f32Precision(
    "f32-precision",
    cl::desc("f32 attention: 3xtf32 (tensor cores, f32-accurate; default), "
             "tf32 (tensor cores), ieee (SIMT f32 FMAs)"),
    cl::init("3xtf32"));
static cl::opt<int64_t> minBlocks(
    "min-blocks",
    cl::desc("Blocks per multiprocessor ptxas must leave registers for "
             "(0: no request; -1: the kernel's default)"),
    cl::init(-1));

/// Runs the GPU pipeline on `module` and returns the kernel object bytes;
/// `paramOrder` receives, for each kernel parameter, the host argument
/// (q, k, v, ...) it is: outlining orders parameters by first use.
/// `variant`: launch-shape options of a variant the pass asked for
/// (key_warps, tile_kv, stages, splits), over the command line's.
static FailureOr<std::string> compile(ModuleOp module, StringRef format,
                                      SmallVectorImpl<int64_t> &paramOrder,
                                      bool explain, int64_t attention,
                                      DictionaryAttr variant = {}) {
  attn::GpuPipelineOptions options;
  options.attention = attention;
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
  options.splits = splits;
  options.keyWarps = keyWarps;
  options.f32Precision = f32Precision;
  options.wgmma = wgmma;
  options.warpSpecialize = warpSpecialize;
  options.pingpong = pingpong;
  options.keyBiasMma = keyBiasMma;
  options.qRegs = qRegs;
  options.tma = tma;
  options.persistent = persistent;
  options.shiftV = shiftV;
  options.explain = explain;
  if (variant) {
    auto get = [&](StringRef key, auto &option) {
      if (auto a = variant.getAs<IntegerAttr>(key))
        option = a.getInt();
    };
    get("key_warps", options.keyWarps);
    get("tile_kv", options.tileKV);
    get("stages", options.stages);
    get("splits", options.splits);
  }
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
    if (std::isinf(v)) // JSON has no infinity: written as a string
      return v < 0 ? "-inf" : "inf";
    if (std::isnan(v))
      return "nan"; // never valid: validateManifest rejects it
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

static std::string sha256Hex(StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)),
                     /*LowerCase=*/true);
}

/// The canonical text `binding_sha256` hashes (python/attn_opt/bundle.py,
/// binding_text, is the other side of this contract).
static std::string bindingText(const llvm::json::Object &m, StringRef ptxSha,
                               StringRef cubinSha) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto ints = [&](const llvm::json::Value *v, StringRef sep) {
    const llvm::json::Array *arr = v ? v->getAsArray() : nullptr;
    if (!arr)
      return;
    for (auto [i, x] : llvm::enumerate(*arr))
      os << (i ? sep : "") << x.getAsInteger().value_or(0);
  };
  os << "format " << *m.getString("format") << "\n";
  os << "kernel " << m.getString("kernel").value_or("") << "\n";
  os << "ptx " << ptxSha << "\n";
  os << "cubin " << (cubinSha.empty() ? StringRef("-") : cubinSha) << "\n";
  os << "grid ";
  ints(m.get("grid"), " ");
  os << "\nblock ";
  ints(m.get("block"), " ");
  os << "\nshared_bytes " << m.getInteger("shared_bytes").value_or(0) << "\n";
  if (const llvm::json::Array *args = m.getArray("args"))
    for (const llvm::json::Value &a : *args) {
      const llvm::json::Object *o = a.getAsObject();
      os << "arg " << o->getString("name").value_or("") << " "
         << o->getString("dtype").value_or("") << " [";
      ints(o->get("shape"), ",");
      os << "] " << o->getString("map").value_or("-");
      // A constant's file and its sha256.
      if (std::optional<StringRef> file = o->getString("constant")) {
        const llvm::json::Object *shas = m.getObject("sha256");
        os << " constant " << *file << " "
           << (shas ? shas->getString(*file).value_or("-") : StringRef("-"));
      }
      os << "\n";
    }
  // Launch variants: each one's directory, rule and own binding.
  if (const llvm::json::Array *vars = m.getArray("variants"))
    for (const llvm::json::Value &x : *vars) {
      const llvm::json::Object *o = x.getAsObject();
      os << "variant " << o->getString("dir").value_or("") << " "
         << o->getString("when").value_or("") << " "
         << o->getString("binding_sha256").value_or("") << "\n";
    }
  return text;
}

/// Arguments that may be constants of the program, their data in the
/// bundle as "<name>.bin" (the loader's CONSTANT_ARGS), and score_mod
/// tables "mod<1-2 digits>".
static const char *const kConstantArgs[] = {
    "mask", "sink", "block_table", "kv_lens", "cu_seqlens_q", "cu_seqlens_k"};
/// A score_mod tensor: mod0 .. mod99.
static bool isModArg(StringRef name) {
  return name.consume_front("mod") && !name.empty() && name.size() <= 2 &&
         llvm::all_of(name, llvm::isDigit);
}
static bool isConstantArg(StringRef name) {
  return llvm::is_contained(kConstantArgs, name) || isModArg(name);
}
/// A constant argument's file.
static bool isConstantFile(StringRef name) {
  return name.consume_back(".bin") && isConstantArg(name);
}

/// "v<digits>": a launch variant of a bundle (or of a set's member).
static bool isVariantName(StringRef name) {
  return name.consume_front("v") && !name.empty() &&
         llvm::all_of(name, llvm::isDigit) && name.size() <= 3;
}

/// Launch variants' rules the loader evaluates (python/attn_opt/bundle.py,
/// VARIANT_RULES).
static const char *const kVariantRules[] = {"full_grid_one_range", "one_range",
                                            "decode_stages"};

/// The schema the Python loader enforces, checked on what is about to be
/// written: a manifest the loader would reject is never produced.
static LogicalResult validateManifest(const llvm::json::Object &m,
                                      std::string &why) {
  auto fail = [&](const Twine &msg) {
    why = msg.str();
    return failure();
  };
  // Dynamic sizes: grid x, y and z may be -1 (computed at each launch).
  bool dynamic = false;
  if (const llvm::json::Array *args = m.getArray("args"))
    for (const llvm::json::Value &a : *args)
      if (const llvm::json::Object *o = a.getAsObject())
        dynamic |= o->getString("map") == "size";
  auto triple = [&](StringRef key, ArrayRef<int64_t> limits) {
    const llvm::json::Array *arr = m.getArray(key);
    if (!arr || arr->size() != 3)
      return fail(key + " is not three integers");
    for (auto [i, x] : llvm::enumerate(*arr)) {
      std::optional<int64_t> v = x.getAsInteger();
      // z: a split count chosen at launch.
      if (dynamic && key == "grid" && v == -1)
        continue;
      if (!v || *v < 1 || *v > limits[i])
        return fail(llvm::formatv("{0}[{1}] = {2} is outside [1, {3}]", key, i,
                                  v ? std::to_string(*v) : "?", limits[i])
                        .str());
    }
    return success();
  };
  if (failed(triple("grid", {2147483647, 65535, 65535})) ||
      failed(triple("block", {1024, 1024, 64})))
    return failure();
  int64_t threads = 1;
  for (const llvm::json::Value &x : *m.getArray("block"))
    threads *= *x.getAsInteger();
  if (threads > 1024)
    return fail(llvm::formatv("the block has {0} threads; the limit is 1024",
                              threads)
                    .str());
  int64_t sharedLimit = m.getString("chip") == "sm_80" ? 166912 : 232448;
  std::optional<int64_t> shared = m.getInteger("shared_bytes");
  if (!shared || *shared < 0 || *shared > sharedLimit)
    return fail(
        llvm::formatv("shared_bytes is outside [0, {0}]", sharedLimit).str());
  const llvm::json::Object *att = m.getObject("attention");
  if (!att)
    return fail("no attention description");
  std::optional<double> scale = att->getNumber("scale");
  if (!scale || !std::isfinite(*scale))
    return fail("attention.scale is not a finite number");
  const llvm::json::Value *mv = att->get("mask_value");
  std::optional<StringRef> mvs = mv ? mv->getAsString() : std::nullopt;
  std::optional<double> mvn = mv ? mv->getAsNumber() : std::nullopt;
  if (!(mvs && *mvs == "-inf") && !(mvn && std::isfinite(*mvn)))
    return fail("attention.mask_value is neither finite nor -inf");
  const llvm::json::Array *args = m.getArray("args");
  if (!args)
    return fail("no argument list");
  llvm::StringSet<> names;
  for (const llvm::json::Value &a : *args) {
    const llvm::json::Object *o = a.getAsObject();
    std::optional<StringRef> name = o ? o->getString("name") : std::nullopt;
    std::optional<StringRef> dtype = o ? o->getString("dtype") : std::nullopt;
    const llvm::json::Array *shape = o ? o->getArray("shape") : nullptr;
    if (!name || !dtype || !shape || !o->getString("map"))
      return fail("an argument lacks its name, dtype, shape or map");
    // Split-KV's workspace: f32 partials and the int32 per-tile counters.
    // The block table of paged K/V, the lengths and varlen tables: int32.
    bool workspace = llvm::is_contained(
        {"o_part", "ml_part", "locks", "tile_counter", "block_table", "kv_lens",
         "cu_seqlens_q", "cu_seqlens_k"},
        *name);
    // A runtime size: an int64 scalar parameter.
    bool size = o->getString("map") == "size";
    // A TMA tensor map: 128 bytes (int64[16]) the loader encodes for the
    // operand it names, with a box per operand dim.
    if (o->getString("map") == "tensormap") {
      const llvm::json::Array *box = o->getArray("box");
      if (!name->starts_with("tmap_") || *dtype != "int64" ||
          shape->size() != 1 || (*shape)[0].getAsInteger() != 16 ||
          !o->getString("tensor") || !box || box->empty())
        return fail("tensor map argument '" + *name +
                    "' is not int64[16] with a tensor and a box");
    } else if (size ? !name->starts_with("size_") || *dtype != "int64" ||
                          !shape->empty()
               : workspace
                   ? *dtype != (*name == "o_part" || *name == "ml_part"
                                    ? "float32"
                                    : "int32")
                   : !llvm::is_contained({"float16", "bfloat16", "float32",
                                          "bool", "float8_e4m3fn",
                                          "float8_e5m2"},
                                         *dtype) &&
                         // score_mod tensors also hold integers
                         // (segment ids).
                         !(isModArg(*name) &&
                           llvm::is_contained({"int32", "int64"}, *dtype)))
      return fail("argument '" + *name + "' has dtype '" + *dtype + "'");
    for (const llvm::json::Value &d : *shape) {
      int64_t v = d.getAsInteger().value_or(0);
      if (v < 1 && !(dynamic && v == -1))
        return fail("argument '" + *name + "' has an empty or invalid shape");
    }
    if (!names.insert(*name).second)
      return fail("argument '" + *name + "' appears twice");
    // A constant of the program, in the bundle: static, its file named
    // after it.
    if (std::optional<StringRef> file = o->getString("constant")) {
      if (!isConstantArg(*name) || *file != (*name + ".bin").str())
        return fail("constant argument '" + *name + "' names file '" + *file +
                    "'");
      for (const llvm::json::Value &d : *shape)
        if (d.getAsInteger().value_or(0) < 1)
          return fail("constant argument '" + *name + "' has a dynamic shape");
    }
  }
  for (StringRef need : {"q", "k", "v", "out"})
    if (!names.contains(need))
      return fail("argument '" + need + "' is not a kernel parameter");
  if (const llvm::json::Value *vs = m.get("variants")) {
    const llvm::json::Array *arr = vs->getAsArray();
    if (!arr || arr->empty() || arr->size() > 8)
      return fail("variants is not a list of 1 to 8 entries");
    llvm::StringSet<> dirs;
    for (const llvm::json::Value &x : *arr) {
      const llvm::json::Object *o = x.getAsObject();
      std::optional<StringRef> dir = o ? o->getString("dir") : std::nullopt;
      std::optional<StringRef> when = o ? o->getString("when") : std::nullopt;
      std::optional<StringRef> sha =
          o ? o->getString("binding_sha256") : std::nullopt;
      std::optional<StringRef> choice =
          o ? o->getString("kernel_choice") : std::nullopt;
      if (!dir || !isVariantName(*dir) || !when ||
          !llvm::is_contained(kVariantRules, *when) || !sha ||
          sha->size() != 64 ||
          !llvm::all_of(*sha,
                        [](char c) {
                          return llvm::isDigit(c) || (c >= 'a' && c <= 'f');
                        }) ||
          !choice || choice->size() > 4096)
        return fail("a variant lacks its v<digits> dir, a known rule, its "
                    "binding_sha256 or its kernel_choice");
      if (!dirs.insert(*dir).second)
        return fail("variant directory '" + *dir + "' appears twice");
    }
    const llvm::json::Object *a = m.getObject("attention");
    if (!a || a->getInteger("splits") != -1)
      return fail("variants need a split count chosen at launch");
  }
  return success();
}

/// Creates `path` (which must not exist) exclusively, never through a
/// symlink, and writes `bytes`.
static LogicalResult writeNewFile(StringRef path, StringRef bytes) {
  int fd = ::open(path.str().c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    llvm::errs() << "attn-bundle: cannot create " << path << ": "
                 << std::strerror(errno) << "\n";
    return failure();
  }
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.flush();
  if (os.has_error()) {
    llvm::errs() << "attn-bundle: cannot write " << path << ": "
                 << os.error().message() << "\n";
    os.clear_error();
    return failure();
  }
  return success();
}

static const char *const kBundleFiles[] = {"manifest.json", "kernel.ptx",
                                           "kernel.cubin", "index.json"};

/// "attn<digits>": a member of a bundle set (one per attention).
static bool isMemberName(StringRef name) {
  return name.consume_front("attn") && !name.empty() &&
         llvm::all_of(name, llvm::isDigit) && name.size() <= 6;
}

/// Removes a bundle directory: only the bundle's own files (a symlink is
/// removed, not followed), its variants' directories and, for a set, its
/// member directories, then the directory.
static void removeBundleDir(StringRef dir, bool members = true,
                            bool variants = true) {
  for (const char *name : kBundleFiles) {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    ::unlink(p.c_str());
  }
  // Constants' files, and (for a set) its member directories.
  std::error_code ec;
  SmallVector<std::string> files, subs;
  SmallVector<std::string> memberDirs;
  for (llvm::sys::fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false),
       end;
       !ec && it != end; it.increment(ec)) {
    StringRef entry = llvm::sys::path::filename(it->path());
    bool isDir = it->type() == llvm::sys::fs::file_type::directory_file;
    if (isConstantFile(entry) && !isDir)
      files.push_back(it->path());
    else if (members && isMemberName(entry) && isDir)
      memberDirs.push_back(it->path());
    else if (variants && isVariantName(entry) && isDir)
      subs.push_back(it->path());
  }
  for (const std::string &f : files)
    ::unlink(f.c_str());
  // A member has variants; a variant has neither members nor variants.
  for (const std::string &sub : memberDirs)
    removeBundleDir(sub, /*members=*/false, /*variants=*/true);
  for (const std::string &sub : subs)
    removeBundleDir(sub, /*members=*/false, /*variants=*/false);
  ::rmdir(dir.str().c_str());
}

/// True if `dir` holds nothing but bundle files (and, one level down, set
/// members and variants holding nothing but bundle files); else says what
/// it holds.
static bool onlyBundleFiles(StringRef dir, bool members, std::string &what,
                            bool variants = true) {
  namespace fs = llvm::sys::fs;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       !ec && it != end; it.increment(ec)) {
    StringRef entry = llvm::sys::path::filename(it->path());
    if (llvm::is_contained(kBundleFiles, entry) || isConstantFile(entry))
      continue;
    bool isDir = it->type() == fs::file_type::directory_file;
    if (members && isMemberName(entry) && isDir &&
        onlyBundleFiles(it->path(), /*members=*/false, what))
      continue;
    if (variants && isVariantName(entry) && isDir &&
        onlyBundleFiles(it->path(), /*members=*/false, what,
                        /*variants=*/false))
      continue;
    if (what.empty())
      what = entry.str();
    return false;
  }
  return true;
}

/// Writes the files into a fresh directory beside `target` and renames it
/// over `target`. An existing `target` is replaced only when it is a
/// directory holding nothing but bundle files.
static LogicalResult writeBundleAtomically(
    StringRef target, ArrayRef<std::pair<std::string, std::string>> files) {
  namespace fs = llvm::sys::fs;
  SmallString<256> abs(target);
  if (std::error_code ec = fs::make_absolute(abs)) {
    llvm::errs() << "attn-bundle: bad output path " << target << "\n";
    return failure();
  }
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  while (abs.size() > 1 && llvm::sys::path::is_separator(abs.back()))
    abs.pop_back();
  StringRef parent = llvm::sys::path::parent_path(abs);
  StringRef name = llvm::sys::path::filename(abs);
  if (name.empty() || name == "." || name == "..") {
    llvm::errs() << "attn-bundle: bad output path " << target << "\n";
    return failure();
  }
  if (std::error_code ec = fs::create_directories(parent)) {
    llvm::errs() << "attn-bundle: cannot create " << parent << ": "
                 << ec.message() << "\n";
    return failure();
  }
  // What is there now (lstat: a symlink is not followed).
  fs::file_status st;
  bool exists = !fs::status(abs, st, /*follow=*/false) && fs::exists(st);
  if (exists) {
    if (st.type() != fs::file_type::directory_file) {
      llvm::errs() << "attn-bundle: " << abs
                   << " exists and is not a directory; not replacing it\n";
      return failure();
    }
    std::string what;
    if (!onlyBundleFiles(abs, /*members=*/true, what)) {
      llvm::errs() << "attn-bundle: " << abs << " holds '" << what
                   << "', which is not part of a bundle; not replacing it\n";
      return failure();
    }
  }
  SmallString<256> tmp(parent);
  llvm::sys::path::append(tmp, "." + name + ".tmp-%%%%%%");
  SmallString<256> tmpDir;
  if (std::error_code ec = fs::createUniqueDirectory(tmp, tmpDir)) {
    llvm::errs() << "attn-bundle: cannot create a directory beside " << abs
                 << ": " << ec.message() << "\n";
    return failure();
  }
  // createUniqueDirectory appends its own suffix to the model; the model
  // above is only a prefix.
  for (auto &[file, bytes] : files) {
    SmallString<256> p(tmpDir);
    llvm::sys::path::append(p, file);
    // A set member's or variant's directory ("attn3/kernel.ptx",
    // "attn3/v1/kernel.ptx"), created fresh.
    StringRef sub = llvm::sys::path::parent_path(file);
    if (!sub.empty()) {
      SmallString<256> d(tmpDir);
      llvm::sys::path::append(d, sub);
      if (std::error_code ec = fs::create_directories(d)) {
        llvm::errs() << "attn-bundle: cannot create " << d << ": "
                     << ec.message() << "\n";
        removeBundleDir(tmpDir);
        return failure();
      }
    }
    if (failed(writeNewFile(p, bytes))) {
      removeBundleDir(tmpDir);
      return failure();
    }
  }
  if (exists) {
    // Swap in one step; the old bundle then sits at tmpDir and is removed.
    if (::renameat2(AT_FDCWD, tmpDir.c_str(), AT_FDCWD, abs.c_str(),
                    RENAME_EXCHANGE) == 0) {
      removeBundleDir(tmpDir);
      return success();
    }
    // No RENAME_EXCHANGE on this file system: move the old one aside first
    // (a kill in between leaves no bundle, never a mix).
    SmallString<256> old(tmpDir);
    old += ".old";
    if (::rename(abs.c_str(), old.c_str()) != 0) {
      llvm::errs() << "attn-bundle: cannot replace " << abs << ": "
                   << std::strerror(errno) << "\n";
      removeBundleDir(tmpDir);
      return failure();
    }
    removeBundleDir(old);
  }
  if (::rename(tmpDir.c_str(), abs.c_str()) != 0) {
    llvm::errs() << "attn-bundle: cannot rename the bundle to " << abs << ": "
                 << std::strerror(errno) << "\n";
    removeBundleDir(tmpDir);
    return failure();
  }
  return success();
}

/// The arguments a caller binds (all but the workspace), as text: a launch
/// variant must take exactly its bundle's (the loader checks it too).
static std::string callerArgs(const llvm::json::Array *args) {
  llvm::json::Array kept;
  if (args)
    for (const llvm::json::Value &a : *args)
      if (const llvm::json::Object *o = a.getAsObject();
          o && o->getString("map") != "workspace")
        kept.push_back(a);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(kept));
  return text;
}

/// Whether two attention descriptions compute the same thing: equal in
/// every key the loader reads but the launch shape's (python/attn_opt/
/// bundle.py, _open_variant, compares the same).
static bool sameComputation(const llvm::json::Object &a,
                            const llvm::json::Object &b) {
  for (StringRef key :
       {"scale", "causal", "window", "mask_value", "batch_dims", "layout",
        "query_offset", "score_mod", "paged", "kv_lens", "varlen", "pack_dim",
        "f32_precision", "value_scale", "scale_factors", "value_scale_factors",
        "index_limit"}) {
    const llvm::json::Value *x = a.get(key), *y = b.get(key);
    if (!x != !y || (x && *x != *y))
      return false;
  }
  return true;
}

/// Whether the GPU pipeline will find ptxas: on PATH or under
/// /usr/local/cuda/bin (MLIR's default toolkit path).
static bool ptxasAvailable() {
  if (llvm::sys::findProgramByName("ptxas"))
    return true;
  return llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas");
}

using BundleFiles = SmallVector<std::pair<std::string, std::string>>;

/// A constant argument's bytes as the kernel reads them: row-major, each
/// element little-endian in its type's width, a bool as one byte.
static std::string constantBytes(ElementsAttr value) {
  std::string out;
  Type elt = value.getElementType();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    ArrayRef<char> data = res.getRawHandle().getBlob()->getData();
    return std::string(data.begin(), data.end());
  }
  auto dense = cast<DenseElementsAttr>(value);
  if (elt.isInteger(1)) {
    for (bool x : dense.getValues<bool>())
      out.push_back(x ? 1 : 0);
    return out;
  }
  unsigned bytes = elt.getIntOrFloatBitWidth() / 8;
  auto put = [&](const APInt &bits) {
    for (unsigned i = 0; i < bytes; ++i)
      out.push_back(static_cast<char>(bits.extractBitsAsZExtValue(8, 8 * i)));
  };
  out.reserve(dense.getNumElements() * bytes);
  if (isa<FloatType>(elt))
    for (APFloat x : dense.getValues<APFloat>())
      put(x.bitcastToAPInt());
  else
    for (APInt x : dense.getValues<APInt>())
      put(x);
  return out;
}

/// Compiles attention `index` of `source` (-1: its only one) into a
/// bundle's files, under `member/` when it is a member of a set; `entry`
/// receives the set index's line for it. `variant`: the options of a launch
/// variant the pass asked for (then `member` is its directory); the pass's
/// variants of this kernel are built under `member/v1`, `member/v2`, ...
static LogicalResult buildBundle(ModuleOp source, int64_t index,
                                 StringRef member, BundleFiles &files,
                                 llvm::json::Object &entry,
                                 DictionaryAttr variant = {},
                                 std::string *bindingOut = nullptr,
                                 const llvm::json::Object *parent = nullptr) {
  OwningOpRef<ModuleOp> module = source.clone();
  OwningOpRef<ModuleOp> forCubin = source.clone();

  SmallVector<int64_t> paramOrder, cubinOrder;
  FailureOr<std::string> ptx = compile(
      *module, "isa", paramOrder, explainKernel && !variant, index, variant);
  if (failed(ptx))
    return failure();
  auto info = (*module)->getAttrOfType<DictionaryAttr>("attn.bundle");
  if (!info) {
    llvm::errs() << "attn-bundle: no kernel description in the module\n";
    return failure();
  }
  llvm::json::Object manifest;
  manifest["format"] = "attn-opt-bundle/2";
  manifest["chip"] = chip.getValue();
  manifest["ptx"] = "kernel.ptx";
  // ptxas (PATH or /usr/local/cuda): where there is none the bundle
  // carries PTX only (the driver JIT-compiles it); where there is one and
  // it rejects the PTX, the driver would too: an error, not a bundle.
  FailureOr<std::string> cubin = failure();
  if (ptxasAvailable()) {
    cubin = compile(*forCubin, "bin", cubinOrder, /*explain=*/false, index,
                    variant);
    if (failed(cubin)) {
      llvm::errs() << "attn-bundle: ptxas rejected the kernel's PTX (see "
                      "above); no bundle written\n";
      return failure();
    }
  } else {
    static bool noted = false;
    if (!noted)
      llvm::errs() << "attn-bundle: note: no ptxas (PATH, /usr/local/cuda); "
                      "the bundle carries PTX only\n";
    noted = true;
  }
  bool haveCubin = succeeded(cubin) && cubinOrder == paramOrder;
  if (haveCubin)
    manifest["cubin"] = "kernel.cubin";
  llvm::json::Object attention;
  std::string prefix = member.empty() ? "" : member.str() + "/";
  // Constant arguments' files: (name, bytes).
  BundleFiles constantFiles;
  ArrayAttr variants;
  for (NamedAttribute n : info) {
    StringRef k = n.getName().getValue();
    if (k == "variants") {
      // A variant's own compile asks for none (its options are given).
      if (!variant)
        variants = cast<ArrayAttr>(n.getValue());
    } else if (k == "args") {
      // In kernel parameter order; a constant's data goes to its file.
      auto args = cast<ArrayAttr>(n.getValue());
      llvm::json::Array ordered;
      for (int64_t i : paramOrder) {
        auto arg = cast<DictionaryAttr>(args[i]);
        auto value = arg.getAs<ElementsAttr>("value");
        if (!value) {
          ordered.push_back(toJson(arg));
          continue;
        }
        llvm::json::Object o;
        for (NamedAttribute f : arg)
          if (f.getName() != "value")
            o[f.getName().getValue()] = toJson(f.getValue());
        std::string file =
            (arg.getAs<StringAttr>("name").getValue() + ".bin").str();
        o["constant"] = file;
        constantFiles.push_back({file, constantBytes(value)});
        ordered.push_back(std::move(o));
      }
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
  if (variant &&
      (callerArgs(manifest.getArray("args")) !=
           callerArgs(parent->getArray("args")) ||
       !sameComputation(attention, *parent->getObject("attention")))) {
    llvm::errs() << "attn-bundle: internal error: launch variant " << member
                 << " takes other arguments or computes another attention "
                    "than its bundle; nothing written\n";
    return failure();
  }
  llvm::json::Object attentionCopy = attention;
  manifest["attention"] = std::move(attention);
  // The variants: whole bundles in v1, v2, ... beside this one's files,
  // each listed with its launch rule and binding.
  if (variants) {
    llvm::json::Array list;
    for (auto [i, a] : llvm::enumerate(variants)) {
      auto opts = cast<DictionaryAttr>(a);
      std::string dir = "v" + std::to_string(i + 1);
      llvm::json::Object sub;
      std::string subBinding;
      if (failed(buildBundle(source, index, prefix + dir, files, sub, opts,
                             &subBinding, &manifest)))
        return failure();
      list.push_back(llvm::json::Object{
          {"dir", dir},
          {"when", opts.getAs<StringAttr>("when").getValue().str()},
          {"kernel_choice", sub.getString("kernel_choice").value_or("").str()},
          {"binding_sha256", subBinding}});
    }
    manifest["variants"] = std::move(list);
  }

  std::string ptxSha = sha256Hex(*ptx);
  std::string cubinSha = haveCubin ? sha256Hex(*cubin) : std::string();
  llvm::json::Object hashes;
  hashes["kernel.ptx"] = ptxSha;
  if (haveCubin)
    hashes["kernel.cubin"] = cubinSha;
  for (auto &[file, bytes] : constantFiles)
    hashes[file] = sha256Hex(bytes);
  manifest["sha256"] = std::move(hashes);
  std::string bindingSha = sha256Hex(bindingText(manifest, ptxSha, cubinSha));
  manifest["binding_sha256"] = bindingSha;
  if (bindingOut)
    *bindingOut = bindingSha;

  std::string why;
  if (failed(validateManifest(manifest, why))) {
    llvm::errs() << "attn-bundle: internal error: the manifest would be "
                    "invalid ("
                 << why << "); nothing written\n";
    return failure();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  files.push_back({prefix + "kernel.ptx", *ptx});
  for (auto &[file, bytes] : constantFiles)
    files.push_back({prefix + file, std::move(bytes)});
  if (haveCubin)
    files.push_back({prefix + "kernel.cubin", *cubin});
  files.push_back({prefix + "manifest.json", text});
  entry = llvm::json::Object{
      {"dir", member.str()},
      {"kernel_choice", attentionCopy.getString("kernel_choice").value_or("").str()},
      {"location", attentionCopy.getString("location").value_or("").str()},
      {"function", attentionCopy.getString("function").value_or("").str()}};
  return success();
}

static int attnBundleMain(int argc, char **argv) {
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
  // A module with several attentions (one per layer) gives a bundle set:
  // DIR/index.json and one bundle per attention, DIR/attn0, DIR/attn1, ...
  unsigned count = 0;
  {
    OwningOpRef<ModuleOp> probe = module->clone();
    PassManager pm(&context);
    pm.addPass(attn::createAttnFuse());
    if (failed(pm.run(*probe)))
      return 1;
    probe->walk([&](attn::AttentionOp) { ++count; });
  }
  BundleFiles files;
  llvm::json::Object entry;
  if (count <= 1) {
    if (failed(buildBundle(*module, -1, "", files, entry)))
      return 1;
    return failed(writeBundleAtomically(outDir, files)) ? 1 : 0;
  }
  llvm::json::Array members;
  for (unsigned i = 0; i < count; ++i) {
    std::string member = "attn" + std::to_string(i);
    if (failed(buildBundle(*module, i, member, files, entry)))
      return 1;
    members.push_back(std::move(entry));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}",
                      llvm::json::Value(llvm::json::Object{
                          {"format", "attn-opt-bundle-set/1"},
                          {"bundles", std::move(members)}}))
     << "\n";
  files.push_back({"index.json", text});
  return failed(writeBundleAtomically(outDir, files)) ? 1 : 0;
}

// The parser recurses once per nesting level: run on a 1 GiB stack
// (reserved, not committed), as attn-opt does.
int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  int rc = 1;
  llvm::thread worker(std::optional<unsigned>(1u << 30), [&] { rc = attnBundleMain(argc, argv); });
  worker.join();
  return rc;
}
