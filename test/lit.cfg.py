# -*- Python -*-
import os

import lit.formats

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["lib", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

bin_dir = os.path.join(config.attn_obj_root, "bin")
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

python = "python3"
exec_check = " ".join([
    python, os.path.join(config.attn_src_root, "test", "lib", "exec_check.py"),
    "--attn-opt", os.path.join(bin_dir, "attn-opt"),
    "--tools", config.llvm_tools_dir,
    "--libs", config.llvm_lib_dir,
    "--transform-lib",
    os.path.join(config.attn_src_root, "test", "lib", "decompose-softmax.mlir"),
])
config.substitutions.append(("%exec-check", exec_check))
config.substitutions.append(("%python", python))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%cmake_compilers",
    f"-DCMAKE_C_COMPILER={config.c_compiler} -DCMAKE_CXX_COMPILER={config.cxx_compiler}"))
config.substitutions.append(("%runner-libs", ",".join(
    os.path.join(config.llvm_lib_dir, l)
    for l in ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"])))
