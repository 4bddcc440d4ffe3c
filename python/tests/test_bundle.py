"""Kernel bundles without a GPU: manifest parsing and validation, argument
checks, attn-bundle invocation. Launching is tested only where torch sees a
CUDA device (never in CI)."""
import hashlib
import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

import attn_opt
from attn_opt import bundle
from attn_opt.bundle import BundleError
from tools import needs_attn_bundle, real_attn_bundle

ROOT = Path(__file__).resolve().parents[2]


def ptx_for(kernel, n):
    params = ",\n".join(f"\t.param .u64 .ptr .align 1 {kernel}_param_{i}" for i in range(n))
    return (f"//\n.version 8.0\n.target sm_90a\n.address_size 64\n\n"
            f".visible .entry {kernel}(\n{params}\n)\n{{\n\tret;\n}}\n")


FAKE_CUBIN = b"\x7fELF fake"


def seal(m, nparams=None, cubin=True):
    """Sets sha256 / binding_sha256 as attn-bundle would for the files
    fake_bundle writes (the PTX: one pointer per arg unless `nparams`)."""
    n = len(m["args"]) if nparams is None else nparams
    return bundle.seal(m, ptx_for(m["kernel"], n).encode(),
                       FAKE_CUBIN if cubin else None)


def try_seal(m):
    """seal() where the edit left binding_text something to hash."""
    try:
        seal(m)
    except (BundleError, KeyError, TypeError):
        pass
    return m


def manifest(**over):
    """A valid manifest: [B=2, H=4, S, D] f16 with a bool mask, as dicts,
    sealed (sha256 of fake_bundle's files, binding_sha256)."""
    m = {
        "format": "attn-opt-bundle/2", "kernel": "attn_fwd_kernel",
        "chip": "sm_90a", "ptx": "kernel.ptx", "cubin": "kernel.cubin",
        "args": [
            {"name": "q", "dtype": "float16", "shape": [2, 4, 33, 64]},
            {"name": "k", "dtype": "float16", "shape": [2, 4, 47, 64]},
            {"name": "v", "dtype": "float16", "shape": [2, 4, 47, 32]},
            {"name": "mask", "dtype": "bool", "shape": [2, 4, 33, 47]},
            {"name": "out", "dtype": "float16", "shape": [2, 4, 33, 32]},
        ],
        "grid": [1, 8, 1], "block": [128, 1, 1], "shared_bytes": 0,
        "attention": {"scale": 0.125, "causal": True, "window": None,
                      "mask_value": "-inf", "batch_dims": 2},
    }
    m.update(over)
    return try_seal(m)


@pytest.fixture
def fake_bundle(tmp_path):
    def make(obj=None, nparams=None, cubin=True):
        d = tmp_path / "bundle"
        d.mkdir(exist_ok=True)
        obj = manifest() if obj is None else obj
        seal(obj, nparams, cubin)
        n = len(obj["args"]) if nparams is None else nparams
        (d / "kernel.ptx").write_text(ptx_for(obj["kernel"], n))
        if cubin:
            (d / "kernel.cubin").write_bytes(FAKE_CUBIN)
        (d / "manifest.json").write_text(json.dumps(obj))
        return d
    return make


# --- manifest -----------------------------------------------------------------

def test_read_manifest(fake_bundle):
    m = attn_opt.read_manifest(fake_bundle())
    assert m.kernel == "attn_fwd_kernel" and m.chip == "sm_90a"
    assert [a.name for a in m.args] == ["q", "k", "v", "mask", "out"]
    assert m.inputs == ("q", "k", "v", "mask")
    assert m.arg("q").dims == ("b0", "b1", "m", "d")
    assert m.arg("mask").dims == ("b0", "b1", "m", "n")
    assert m.arg("out").nbytes == 2 * 4 * 33 * 32 * 2
    assert m.sizes() == {"b0": 2, "b1": 4, "m": 33, "n": 47, "d": 64, "e": 32}
    att = m.attention
    assert att.causal and att.window is None and att.scale == 0.125
    assert att.mask_value == float("-inf")  # written as "-inf"
    assert m.file_sha256("kernel.cubin") == hashlib.sha256(FAKE_CUBIN).hexdigest()
    assert m.grid == (1, 8, 1) and m.block == (128, 1, 1)


def test_attn_bundle_conventions():
    """What attn-bundle writes: per-arg affine maps, window 0 for none,
    -inf as "-inf", finite mask values as numbers."""
    obj = manifest()
    for a, res in zip(obj["args"], ["(d0, d1, d2, d4)", "(d0, d1, d3, d4)",
                                    "(d0, d1, d3, d5)", "(d0, d1, d2, d3)",
                                    "(d0, d1, d2, d5)"]):
        a["map"] = f"affine_map<(d0, d1, d2, d3, d4, d5) -> {res}>"
    obj["attention"].update(window=0, mask_value=-3.4028234663852886e38)
    m = bundle.parse_manifest(seal(obj))
    assert m.attention.window is None
    assert m.attention.mask_value == -3.4028234663852886e38
    assert m.arg("v").dims == ("b0", "b1", "n", "e")


def test_layouts_bshd_and_gqa():
    """[B, S, H, D] through attention.layout (names or positions); K/V of a
    grouped-query attention lack the group dim."""
    obj = manifest(args=[
        {"name": "q", "dtype": "bfloat16", "shape": [2, 33, 8, 64]},
        {"name": "k", "dtype": "bfloat16", "shape": [2, 47, 4, 64]},
        {"name": "v", "dtype": "bfloat16", "shape": [2, 47, 4, 64]},
        {"name": "out", "dtype": "bfloat16", "shape": [2, 33, 8, 64]},
    ])
    obj["attention"]["layout"] = {
        "q": ["b0", "m", "b1", "d"], "out": [0, 2, 1, 5],
        "k": "(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1, d4)",
        "v": ["b0", "n", "b1", "e"]}
    obj["grid"] = [1, 16, 1]
    with pytest.raises(BundleError, match="'k' has b1=4 but other arguments have b1=8"):
        bundle.parse_manifest(seal(obj))
    obj["attention"]["batch_dims"] = 3
    obj["args"][0]["shape"] = [2, 33, 4, 2, 64]
    obj["args"][3]["shape"] = [2, 33, 4, 2, 64]
    obj["attention"]["layout"] = {
        "q": ["b0", "m", "b1", "b2", "d"], "out": ["b0", "m", "b1", "b2", "e"],
        "k": ["b0", "n", "b1", "d"], "v": ["b0", "n", "b1", "e"]}
    m = bundle.parse_manifest(seal(obj))
    assert m.sizes() == {"b0": 2, "b1": 4, "b2": 2, "m": 33, "n": 47, "d": 64, "e": 64}


def _args(m, name):
    return next(a for a in m["args"] if a["name"] == name)


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(format="attn-opt-bundle/1"), "format 'attn-opt-bundle/1'"),
    (lambda m: m.pop("grid"), "missing 'grid'"),
    (lambda m: m.update(block=[2048, 1, 1]), "more than 1024 threads"),
    (lambda m: m.update(block=[1, 1, 128]), "z = 128 is above CUDA's limit 64"),
    (lambda m: m.update(grid=[1, 0, 1]), "'grid' must be >= 1"),
    (lambda m: m.update(grid=[1, 4, 1]), r"grid [1, 4, 1] does not match the "
     r"attention: m = 33, tile_q = 128 (block x), batch [2, 4] need grid [1, 8, 1]"),
    (lambda m: m.update(grid=[2 ** 31, 8, 1]), "x = 2147483648 is above CUDA's limit"),
    (lambda m: m.update(grid=[1, 70000, 1]), "y = 70000 is above CUDA's limit 65535"),
    (lambda m: m.update(grid=[1, 2 ** 64, 1]), "grid[1]: 18446744073709551616 is "
     "outside the 64-bit integer range"),
    (lambda m: m.update(grid=[1, 8.0, 1]), "'grid' must be 3 integers"),
    (lambda m: m.update(shared_bytes=2 ** 40), "'shared_bytes' must be an integer "
     "in [0, 232448] (chip sm_90a)"),
    (lambda m: m.update(shared_bytes=200000, chip="sm_80"), "in [0, 166912] (chip sm_80)"),
    (lambda m: m.update(shared_bytes=-1), "'shared_bytes' must be an integer"),
    (lambda m: m.update(ptx="../x.ptx"), "file name inside the bundle"),
    (lambda m: m.update(ptx="/etc/passwd"), "file name inside the bundle"),
    (lambda m: m.update(ptx="a/../../x"), "file name inside the bundle"),
    (lambda m: m.update(ptx="a" * 5000), "file name inside the bundle"),
    (lambda m: m.update(cubin=".."), "file name inside the bundle"),
    (lambda m: m.update(cubin="kernel.ptx"), "name the same file"),
    (lambda m: m.update(kernel="attn fwd"), "'kernel' must be a PTX identifier"),
    (lambda m: m.update(kernel="k" * 300), "'kernel' must be a PTX identifier"),
    (lambda m: m.update(chip="sm_90a\n"), "'chip' must be a chip name"),
    (lambda m: m["args"][1].update(dtype="float64"), "'k' has dtype 'float64'"),
    (lambda m: m["args"][1].update(dtype="bool"), "only 'mask' may be bool"),
    (lambda m: m["args"][1].update(name="key"), "unknown argument name 'key'"),
    (lambda m: m["args"].pop(4), "no 'out' argument"),
    (lambda m: m["args"].pop(0), "no 'q' argument"),
    (lambda m: m["args"].append(dict(m["args"][0])), "argument names repeat"),
    (lambda m: m["args"][2].update(shape=[2, 4, 46, 32]), "'v' has n=46"),
    (lambda m: m["args"][2].update(shape=[2, 4, 0, 32]), "'v'.shape must be >= 1"),
    (lambda m: m["args"][2].update(shape=[2 ** 62, 4, 4, 32]),
     "its size in bytes does not fit in 64 bits"),
    (lambda m: m["args"][0].update(shape=[2, 4, 33, 64, 1]),
     "'q' has shape [2, 4, 33, 64, 1] (rank 5) and no layout"),
    (lambda m: m["args"][0].update(map="(d0) -> (d0)\narg q float16 [1] -"),
     "the map of 'q' must be a string of at most 1024 printable"),
    (lambda m: m["attention"].update(layout={"q": ["b0", "b1", "n", "d"]}),
     "allowed"),
    (lambda m: m["attention"].update(layout={"q": ["b0", "m", "m", "d"]}),
     "repeats a dimension"),
    (lambda m: m["attention"].update(layout={"q": ["b0", "b1", "m", "x"]}),
     "bad layout entry 'x'"),
    (lambda m: m["attention"].update(layout={"q": " " * 5000}), "longer than 1024"),
    (lambda m: m["attention"].update(layout=[]), "attention.layout must be an object"),
    (lambda m: m["attention"].update(window=-2), "window must be null or a positive"),
    (lambda m: m["attention"].update(mask_value="lots"),
     'mask_value must be a finite number, "-inf" or "inf"'),
    (lambda m: m["attention"].update(mask_value=None), "mask_value must be"),
    (lambda m: m["attention"].update(mask_value="nan"), "mask_value must be"),
    (lambda m: m["attention"].update(mask_value="NaN"), "mask_value must be"),
    (lambda m: m["attention"].update(mask_value="-Infinity"), "mask_value must be"),
    (lambda m: m["attention"].update(mask_value=float("nan")),
     "attention.mask_value: nan is not a finite number"),
    (lambda m: m["attention"].pop("mask_value"), "lacks 'mask_value'"),
    (lambda m: m["attention"].pop("scale"), "lacks 'scale'"),
    (lambda m: m["attention"].update(scale="0.5"), "scale must be a finite number"),
    (lambda m: m["attention"].update(scale="nan"), "scale must be a finite number"),
    (lambda m: m["attention"].update(scale=None), "scale must be a finite number"),
    (lambda m: m["attention"].update(scale=True), "scale must be a finite number"),
    (lambda m: m["attention"].update(scale=float("inf")),
     "attention.scale: inf is not a finite number"),
    (lambda m: m["attention"].update(batch_dims=10 ** 6), "batch_dims must be an integer"),
    (lambda m: m["attention"].update(tile_q=0), "tile_q must be a positive"),
    (lambda m: m["attention"].update(tensor_cores="yes"), "tensor_cores must be true/false"),
    (lambda m: (m["attention"].update(tensor_cores=True),
                _args(m, "k").update(dtype="float32")),
     "a tensor-core kernel takes q, k, v and out of one dtype"),
    (lambda m: (m["attention"].update(tensor_cores=True),
                [a.update(dtype="float32") for a in m["args"] if a["name"] != "mask"]),
     "a tensor-core kernel takes q, k, v and out of one dtype"),
    (lambda m: m["attention"].update(kernel_choice=7), "kernel_choice must be a string"),
    (lambda m: m["attention"].update(x=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]),
     "attention.x[0]"),
    (lambda m: m.update(x={1: 2}), "key 1 is not a string"),
    (lambda m: m.update(x=object()), "object is not a JSON value"),
    (lambda m: m.pop("sha256"), "missing 'sha256'"),
    (lambda m: m["sha256"].pop("kernel.cubin"), "'sha256' has no entry for 'kernel.cubin'"),
    (lambda m: m["sha256"].update({"other.bin": "0" * 64}), "'sha256' names 'other.bin'"),
    (lambda m: m["sha256"].update({"kernel.ptx": "0" * 63}),
     "sha256['kernel.ptx'] must be 64 lowercase hex"),
    (lambda m: m["sha256"].update({"kernel.ptx": "A" * 64}),
     "sha256['kernel.ptx'] must be 64 lowercase hex"),
    (lambda m: m.update(binding_sha256=None), "'binding_sha256' must be 64"),
])
def test_bad_manifests(edit, message):
    """Each edit is resealed (as if attn-bundle had written it): the schema,
    not the hash, must refuse it."""
    obj = manifest()
    edit(obj)
    if "sha256" not in message:
        try_seal(obj)
    with pytest.raises(BundleError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)").replace("]", r"\]")):
        bundle.parse_manifest(obj)


@pytest.mark.parametrize("edit", [
    lambda m: m["args"].__setitem__(slice(0, 2), [m["args"][1], m["args"][0]]),
    lambda m: m["args"][0].update(dtype="bfloat16"),
    lambda m: m.update(kernel="other_kernel"),
    lambda m: m.update(block=[256, 1, 1]),
    lambda m: m.update(shared_bytes=1024),
    lambda m: m["args"][3].update(map="affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>"),
    lambda m: m["sha256"].update({"kernel.ptx": "0" * 64}),
])
def test_edited_manifest_fails_binding(edit):
    """A consistent manifest edited after it was written: only
    binding_sha256 can tell."""
    obj = manifest()
    edit(obj)
    with pytest.raises(BundleError, match=r"binding_sha256 mismatch"):
        bundle.parse_manifest(obj)


def test_binding_text_is_the_documented_text():
    obj = manifest()
    text = bundle.binding_text(obj, "a" * 64, None)
    assert text == (
        "format attn-opt-bundle/2\n"
        "kernel attn_fwd_kernel\n"
        f"ptx {'a' * 64}\n"
        "cubin -\n"
        "grid 1 8 1\n"
        "block 128 1 1\n"
        "shared_bytes 0\n"
        "arg q float16 [2,4,33,64] -\n"
        "arg k float16 [2,4,47,64] -\n"
        "arg v float16 [2,4,47,32] -\n"
        "arg mask bool [2,4,33,47] -\n"
        "arg out float16 [2,4,33,32] -\n")
    obj["args"][0]["map"] = "affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>"
    obj["args"][0]["shape"] = []
    assert ("arg q float16 [] affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>\n"
            in bundle.binding_text(obj, None, None))
    with pytest.raises(BundleError, match="'grid' must be a list of integers"):
        bundle.binding_text(dict(obj, grid="1 8 1"), None, None)


def test_unreadable_manifest(tmp_path):
    with pytest.raises(BundleError, match="cannot read"):
        attn_opt.read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{nope")
    with pytest.raises(BundleError, match="not valid JSON"):
        attn_opt.read_manifest(tmp_path)


# --- bundle files -----------------------------------------------------------------

def test_open_bundle(fake_bundle):
    b = bundle.open_bundle(fake_bundle())
    assert b.ptx.startswith(b"//") and b.cubin == b"\x7fELF fake"


def test_ptx_params_must_match_args(fake_bundle):
    d = fake_bundle(nparams=14)
    with pytest.raises(BundleError, match=r"takes 14 parameters .* \(5\)"):
        bundle.open_bundle(d)
    assert bundle.open_bundle(d, check_params=False).manifest.kernel == "attn_fwd_kernel"


def test_ptx_entry_params():
    ptx = (".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .f32 k_param_1,\n"
           "\t.param .u64 .ptr .global .align 16 k_param_2\n)\n")
    assert bundle.ptx_entry_params(ptx, "k") == [".u64", ".f32", ".u64"]
    assert bundle.ptx_entry_params(ptx, "other") is None


def test_missing_image(fake_bundle):
    d = fake_bundle(cubin=False)
    (d / "kernel.ptx").unlink()
    obj = manifest()
    del obj["cubin"]
    (d / "manifest.json").write_text(json.dumps(seal(obj, cubin=False)))
    with pytest.raises(BundleError, match="kernel.ptx is missing"):
        bundle.open_bundle(d)


# --- argument binding and checks (numpy arrays stand in for tensors) ----------------

def arrays(m, **over):
    xs = {a.name: np.zeros(a.shape, dtype=a.dtype) for a in m.args}
    xs.update(over)
    return xs


def test_bind_args():
    m = bundle.parse_manifest(manifest())
    xs = arrays(m)
    b = bundle.bind_args(m, [xs["q"], xs["k"], xs["v"], xs["mask"]], {})
    assert b["out"] is None and b["mask"] is xs["mask"]
    b = bundle.bind_args(m, [xs["q"], xs["k"]], {"v": xs["v"], "mask": xs["mask"],
                                                 "out": xs["out"]})
    assert b["out"] is xs["out"]
    with pytest.raises(TypeError, match=r"missing \['mask'\]"):
        bundle.bind_args(m, [xs["q"], xs["k"], xs["v"]], {})
    with pytest.raises(TypeError, match="takes 4 inputs"):
        bundle.bind_args(m, list(xs.values()), {})
    with pytest.raises(TypeError, match="unexpected argument 'sink'"):
        bundle.bind_args(m, [xs["q"], xs["k"], xs["v"], xs["mask"]], {"sink": xs["q"]})
    with pytest.raises(TypeError, match="'q' given twice"):
        bundle.bind_args(m, [xs["q"]], {"q": xs["q"]})


def test_check_args_messages():
    m = bundle.parse_manifest(manifest())
    bundle.check_args(m, arrays(m))
    with pytest.raises(BundleError, match="'k' must be float16, got float32"):
        bundle.check_args(m, arrays(m, k=np.zeros((2, 4, 47, 64), np.float32)))
    with pytest.raises(BundleError, match=r"'v' must have shape \[2, 4, 47, 32\] "
                       r"\(layout \['b0', 'b1', 'n', 'e'\]\), got \[2, 4, 47, 64\]"):
        bundle.check_args(m, arrays(m, v=np.zeros((2, 4, 47, 64), np.float16)))
    with pytest.raises(BundleError, match="'mask' must be bool, got float16"):
        bundle.check_args(m, arrays(m, mask=np.zeros((2, 4, 33, 47), np.float16)))
    q_t = np.zeros((2, 4, 64, 33), np.float16).swapaxes(-1, -2)
    with pytest.raises(BundleError, match="'q' must be contiguous"):
        bundle.check_args(m, arrays(m, q=q_t))
    # A contiguous view 2 bytes past a 16-byte boundary.
    n = 2 * 4 * 33 * 64
    base = np.zeros(n + 16, np.float16)
    skip = (-base.ctypes.data % 16) // 2 + 1
    q_off = base[skip:skip + n].reshape(2, 4, 33, 64)
    assert q_off.flags["C_CONTIGUOUS"] and q_off.ctypes.data % 16 == 2
    with pytest.raises(BundleError, match="'q' must start at a 16-byte aligned address"):
        bundle.check_args(m, arrays(m, q=q_off))


def test_dtype_name_reads_torch_style():
    class FakeTorchDtype:
        def __str__(self):
            return "torch.bfloat16"

    class T:
        dtype = FakeTorchDtype()
    assert bundle.dtype_name(T()) == "bfloat16"
    assert bundle.dtype_name(np.zeros(1, bool)) == "bool"


# --- compile(): attn-bundle --------------------------------------------------------

def test_compile_without_attn_bundle(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_BUNDLE", str(tmp_path / "no-such-attn-bundle"))
    with pytest.raises(FileNotFoundError, match="ATTN_BUNDLE=.*does not exist"):
        attn_opt.compile_bundle("func.func @f() { return }\n", tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        attn_opt.compile_bundle("x", tmp_path / "out", attn_bundle=str(tmp_path / "nope"))


FAKE_TOOL = """#!{python}
import json, pathlib, sys
args = sys.argv[1:]
src, out, chip = args[0], args[args.index("-o") + 1], args[-1].split("=", 1)[1]
text = pathlib.Path(src).read_text()
if "bad" in text:
    sys.stderr.write(src + ":1:1: error: no attention here\\n")
    sys.exit(1)
d = pathlib.Path(out)
d.mkdir(parents=True, exist_ok=True)
m = json.loads({manifest!r})
m["chip"] = chip
(d / "manifest.json").write_text(json.dumps(m))
(d / "kernel.ptx").write_text(text)
"""


@pytest.fixture
def fake_tool(tmp_path):
    tool = tmp_path / "attn-bundle"
    tool.write_text(FAKE_TOOL.format(python=sys.executable,
                                     manifest=json.dumps(manifest())))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return tool


def test_compile_runs_attn_bundle(fake_tool, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_BUNDLE", str(fake_tool))
    out = attn_opt.compile_bundle("// text\nfunc.func @f() { return }\n",
                                  tmp_path / "b1", chip="sm_80")
    assert out == tmp_path / "b1"
    assert attn_opt.read_manifest(out).chip == "sm_80"
    assert (out / "kernel.ptx").read_text().startswith("// text")
    src = tmp_path / "in.mlir"
    src.write_text("// from a file\n")
    for s in (src, str(src)):
        out = attn_opt.compile_bundle(s, tmp_path / "b2")
        assert (out / "kernel.ptx").read_text() == "// from a file\n"


def test_compile_error_carries_diagnostics(fake_tool, tmp_path):
    with pytest.raises(attn_opt.CompileError) as info:
        attn_opt.compile_bundle("bad\n", tmp_path / "b", attn_bundle=str(fake_tool))
    assert "exit 1" in str(info.value)
    assert "error: no attention here" in info.value.diagnostics


def test_import_does_not_load_torch():
    code = ("import sys, attn_opt, attn_opt.reference; "
            "assert 'torch' not in sys.modules")
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --- the real attn-bundle (when built) --------------------------------------------

PROGRAM = """func.func @attention(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x100x64xf16>, %v: tensor<2x4x100x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>)
      scale(%s) outs(%o : tensor<2x4x100x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}
"""




@needs_attn_bundle
def test_real_attn_bundle_manifest(tmp_path):
    out = attn_opt.compile_bundle(PROGRAM, tmp_path / "b")
    m = attn_opt.read_manifest(out)
    assert m.inputs == ("q", "k", "v")
    assert m.attention.causal and m.attention.scale == 0.125
    assert m.sizes() == {"b0": 2, "b1": 4, "m": 100, "n": 100, "d": 64, "e": 64}
    assert m.arg("out").dims == ("b0", "b1", "m", "e")
    assert (out / m.ptx).is_file()
    assert m.attention.kernel_choice.startswith("wgmma (sm_90a), 2 warpgroup(s)")
    sm80 = attn_opt.read_manifest(attn_opt.compile_bundle(PROGRAM, tmp_path / "c", chip="sm_80"))
    assert "not wgmma: chip=sm_80" in sm80.attention.kernel_choice


@needs_attn_bundle
def test_real_attn_bundle_kernel_takes_one_pointer_per_arg(tmp_path):
    """The launch contract: the PTX entry's parameters are exactly the
    manifest's args, each one 64-bit pointer."""
    out = attn_opt.compile_bundle(PROGRAM, tmp_path / "b")
    bundle.open_bundle(out, check_params=True)


def _eval_rule(rule: str, env: dict) -> object:
    """A manifest launch rule: names, + - * /, ceil(), max(), min(), sizeof(out),
    sizeof(q)."""
    import math
    names = dict(env, ceil=math.ceil, max=max, min=min)
    rule = rule.replace("sizeof(out)", "out_bytes").replace("sizeof(q)", "q_bytes")
    return eval(rule, {"__builtins__": {}}, names)


@needs_attn_bundle
@pytest.mark.parametrize("launch", [{}, {"warps": 4, "tile_kv": 64, "stages": 3},
                                    {"warps": 12, "tile_kv": 32, "min_blocks": 1},
                                    {"wgmma": 0}, {"wgmma": 0, "tile_q": 128, "tile_kv": 32, "stages": 3},
                                    {"wgmma": 0, "warps": 8, "tile_q": 256},
                                    {"wgmma": 0, "tile_q": 64, "q_shared": 1},
                                    {"wgmma": 0, "key_warps": 2},
                                    {"wgmma": 0, "key_warps": 4, "tile_kv": 64},
                                    {"pipeline": 1, "tile_kv": 48},
                                    {"wgmma": 0, "pipeline": 1, "tile_kv": 48},
                                    {"warp_specialize": 1},
                                    {"warp_specialize": 1, "warps": 4, "tile_kv": 64, "stages": 3},
                                    {"warp_specialize": 1, "pipeline": 1, "pingpong": 1},
                                    {"warp_specialize": 1, "pipeline": 1, "persistent": 1},
                                    {"f32_precision": "3xtf32"},
                                    {"f32_precision": "tf32", "warps": 8, "tile_kv": 32},
                                    {"f32_precision": "tf32", "wgmma": 0, "warps": 8,
                                     "tile_kv": 32},
                                    {"f32_precision": "tf32", "q_regs": 1}])
def test_real_attn_bundle_launch_rules(tmp_path, launch):
    """The manifest's grid/block/shared memory equal its rules evaluated on
    the shapes and the launch shape (f32 programs: 4-byte elements)."""
    f32 = "f32_precision" in launch
    program = PROGRAM.replace("xf16>", "xf32>") if f32 else PROGRAM
    out = attn_opt.compile_bundle(program, tmp_path / "b", launch=launch)
    raw = json.loads((out / "manifest.json").read_text())
    att = raw["attention"]
    assert att["tensor_cores"]
    # sm_90a: the wgmma kernel unless told otherwise (f32: mma.sync for
    # 3xTF32, wgmma for TF32).
    mma_sync = launch.get("wgmma") == 0 or launch.get("f32_precision") == "3xtf32"
    assert att["mma"] == ("mma.sync" if mma_sync else "wgmma")
    assert att.get("f32_precision") == launch.get("f32_precision")
    for key, value in launch.items():
        if key not in ("wgmma", "min_blocks", "f32_precision", "persistent", "q_regs"):
            assert att[key] == value
    env = dict(b0=2, b1=4, m=100, n=100, d=64, e=64, out_bytes=4 if f32 else 2,
               q_bytes=4 if f32 else 2,
               g=1, splits=att.get("splits", 1),
               warp_specialize=att.get("warp_specialize", 0),
               tma=att.get("tma", 0),
               persistent=att.get("persistent", 0),
               key_warps=att.get("key_warps", 1),
               **{k: att[k] for k in ("tile_q", "tile_kv", "warps", "stages")})
    rules = att["launch_rules"]
    assert _eval_rule(rules["grid"], env) == raw["grid"]
    assert _eval_rule(rules["block"], env) == raw["block"]
    assert _eval_rule(rules["shared_bytes"], env) == raw["shared_bytes"]


def _program(d: int, e: int, n: int, mask: str = "", elt: str = "f16") -> str:
    """[2, 4, n, d] attention with `elt` Q/K/V and an f16 output; `mask`:
    "bias" (f32 over (m, n)) or "keypad" (bool over (b, n))."""
    t = lambda x, ty=elt: f"tensor<2x4x{n}x{x}x{ty}>"  # noqa: E731
    o = t(e, "f16")
    m = "affine_map<(b, h, m, n, d, e) -> "
    maps = [m + "(b, h, m, d)>", m + "(b, h, n, d)>", m + "(b, h, n, e)>", m + "(b, h, m, e)>"]
    params, clause = "", ""
    if mask:
        mt, mmap = {"bias": (f"tensor<{n}x{n}xf32>", "(m, n)"),
                    "headbias": (f"tensor<4x{n}x{n}xf16>", "(h, m, n)"),
                    "keypad": (f"tensor<2x{n}xi1>", "(b, n)")}[mask]
        params = f", %mask: {mt}"
        clause = f" mask(%mask : {mt})"
        maps.append(m + mmap + ">")
    return f"""func.func @attention(%q: {t(d)}, %k: {t(d)}, %v: {t(e)}{params}, %o: {o}) -> {o} {{
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : {t(d)}, {t(d)}, {t(e)}) scale(%s){clause} outs(%o : {o})
      indexing_maps = [{", ".join(maps)}] -> {o}
  return %r : {o}
}}
"""


@needs_attn_bundle
@pytest.mark.parametrize("d,e,bias,launch,staged", [
    (96, 96, False, {}, False), (80, 48, False, {}, False), (256, 256, False, {}, False),
    # Staging would cost the default kernel its second resident block: not staged.
    (64, 64, True, {}, False),
    (64, 64, True, {"warp_specialize": 1}, True),
    (128, 128, True, {"warp_specialize": 1, "tile_kv": 64}, True),
    # 128-key tiles of an f32 bias do not fit beside 128 x 128 K/V stages.
    (128, 128, True, {"warp_specialize": 1}, False),
    (96, 32, True, {"pipeline": 1}, True)])
def test_real_attn_bundle_launch_rules_head_dims_and_staged_mask(tmp_path, d, e, bias, launch,
                                                                 staged):
    """The shared-memory rule holds for head dims in partial 64-column panels
    and with a bias tile staged in shared memory (mask_row_bytes)."""
    out = attn_opt.compile_bundle(_program(d, e, 128, "bias" if bias else ""),
                                  tmp_path / "b", launch=launch)
    raw = json.loads((out / "manifest.json").read_text())
    att = raw["attention"]
    assert att["mma"] == "wgmma"
    assert ("mask_row_bytes" in att) == staged
    env = dict(b0=2, b1=4, m=128, n=128, d=d, e=e, out_bytes=2,
               warp_specialize=att.get("warp_specialize", 0),
               tma=att.get("tma", 0),
               mask_row_bytes=att.get("mask_row_bytes", 0),
               **{k: att[k] for k in ("tile_q", "tile_kv", "warps", "stages")})
    assert _eval_rule(att["launch_rules"]["shared_bytes"], env) == raw["shared_bytes"]


@needs_attn_bundle
@pytest.mark.parametrize("elt,d,n,keypad", [
    ("f8E4M3FN", 128, 1024, False),   # persistent
    ("f8E4M3FN", 256, 1024, False),   # two stages, staging buffer
    ("f8E4M3FN", 64, 4096, False),    # three computing warpgroups
    ("f8E4M3FN", 128, 1024, True),    # key trim: its barrier slots
    ("f16", 128, 1024, True),
    # A per-head bias staged in the K/V stages of persistent blocks.
    ("f16", 128, 1024, "headbias")])
def test_real_attn_bundle_launch_rules_fp8_and_key_trim(tmp_path, elt, d, n, keypad):
    """The shared-memory rule holds for FP8 (128 elements per panel row, V's
    staging buffer and barrier), where the key loop is trimmed by a key
    padding mask (five more barrier slots) and for a bias staged beside the
    K/V stages of persistent blocks (their barrier slots before it)."""
    mask = keypad if isinstance(keypad, str) else "keypad" if keypad else ""
    out = attn_opt.compile_bundle(_program(d, d, n, mask, elt), tmp_path / "b")
    raw = json.loads((out / "manifest.json").read_text())
    att = raw["attention"]
    assert att["mma"] == "wgmma" and att["warp_specialize"] == 1
    if keypad is True:
        assert "keys past the mask's last kept key skipped" in att["kernel_choice"]
    if mask == "headbias":
        assert "persistent:" in att["kernel_choice"] and att["mask_row_bytes"]
    env = dict(b0=2, b1=4, m=n, n=n, d=d, e=d, out_bytes=2,
               warp_specialize=att.get("warp_specialize", 0),
               tma=att.get("tma", 0), mask_row_bytes=att.get("mask_row_bytes", 0),
               **{k: att[k] for k in ("tile_q", "tile_kv", "warps", "stages")})
    assert _eval_rule(att["launch_rules"]["shared_bytes"], env) == raw["shared_bytes"]


def test_compile_rejects_unknown_launch_option(tmp_path):
    with pytest.raises(ValueError, match="unknown launch option 'tiles'"):
        attn_opt.compile_bundle(PROGRAM, tmp_path / "b", launch={"tiles": 2})


# --- on a GPU only ------------------------------------------------------------------

def _cuda():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(real_attn_bundle() is None or not _cuda(),
                    reason="needs attn-bundle, torch and a CUDA GPU")
def test_launch_matches_reference(tmp_path):
    import torch
    from attn_opt.reference import TorchOps, make_inputs, reference, rel_error
    out_dir = attn_opt.compile_bundle(PROGRAM, tmp_path / "b")
    kernel = attn_opt.load_bundle(out_dir)
    ops = TorchOps()
    inputs = make_inputs(kernel.manifest, ops, seed=0)
    out = kernel.empty_out().fill_(float("nan"))
    kernel(inputs["q"], inputs["k"], inputs["v"], out=out)
    torch.cuda.synchronize()
    ref = reference(kernel.manifest, inputs, ops)
    assert not torch.isnan(out).any()
    assert rel_error(ops, out.float(), ref) < 1e-2
    with pytest.raises(BundleError, match="must be float16"):
        kernel(inputs["q"].float(), inputs["k"], inputs["v"])


def test_watchdog_fires_only_when_late():
    import threading
    import time
    from attn_opt.harness import Watchdog
    fired = threading.Event()
    with Watchdog(5.0, fired.set):
        pass
    time.sleep(0.05)
    assert not fired.is_set()
    with Watchdog(0.01, fired.set):
        assert fired.wait(2.0)
    with Watchdog(0, lambda: None) as w:
        assert w.timer is None


LSE_PROGRAM = """
func.func @attention(%q: tensor<2x40x4x32xf16>, %k: tensor<2x50x4x32xf16>, %v: tensor<2x50x4x32xf16>, %o: tensor<2x40x4x32xf16>) -> tensor<2x40x4x32xf16> {
  %s = arith.constant 0.125 : f32
  %r, %l = attn.attention ins(%q, %k, %v : tensor<2x40x4x32xf16>, tensor<2x50x4x32xf16>, tensor<2x50x4x32xf16>) scale(%s)
      outs(%o : tensor<2x40x4x32xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>, affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>]
      -> tensor<2x40x4x32xf16>, tensor<2x40x4xf32>
  return %r : tensor<2x40x4x32xf16>
}
"""


@needs_attn_bundle
def test_real_attn_bundle_lse_argument(tmp_path):
    """An lse result is an output argument beside out: f32, out's dims
    without e; callers pass the inputs only (out and lse are allocated)."""
    m = attn_opt.read_manifest(attn_opt.compile(LSE_PROGRAM, tmp_path / "b"))
    lse = m.arg("lse")
    assert lse.dtype == "float32" and lse.shape == (2, 40, 4)
    assert lse.dims == ("b0", "m", "b1")
    assert m.inputs == ("q", "k", "v")
    bound = bundle.bind_args(m, ("q", "k", "v"), {})
    assert bound["out"] is None and bound["lse"] is None
    with pytest.raises(TypeError, match="unexpected argument .lsee."):
        bundle.bind_args(m, ("q", "k", "v"), {"lsee": 1})
    obj = json.loads((tmp_path / "b" / "manifest.json").read_text())
    for a in obj["args"]:
        if a["name"] == "lse":
            a["dtype"] = "float16"
    with pytest.raises(BundleError, match="'lse' must be float32"):
        bundle.parse_manifest(obj)


# --- runtime per-tensor scales -----------------------------------------------

def _scaled_manifest(**att):
    """manifest() with two runtime scale tensors read by the factors."""
    obj = manifest()
    obj["args"][3:3] = [{"name": "scale0", "dtype": "float32", "shape": [],
                         "map": "scale"},
                        {"name": "scale1", "dtype": "bfloat16", "shape": [1],
                         "map": "scale"}]
    obj["attention"]["scale_factors"] = [
        {"arg": "scale0", "index": [], "divide": False},
        {"arg": "scale1", "index": [0], "divide": True}]
    obj["attention"].update(att)
    return obj


def test_manifest_runtime_scales():
    """scale<i> arguments (map "scale") are inputs after the others; the
    attention's factors name them; effective_scales applies them in f32."""
    from attn_opt.reference import effective_scales
    m = bundle.parse_manifest(seal(_scaled_manifest()))
    assert m.inputs == ("q", "k", "v", "mask", "scale0", "scale1")
    att = m.attention
    assert att.scale_factors == (("scale0", (), False), ("scale1", (0,), True))
    s, vs = effective_scales(att, {"scale0": np.array(3.0, np.float32),
                                   "scale1": np.array([0.5], np.float32)})
    assert s == np.float32(np.float32(0.125 * 3.0) / 0.5) and vs == 1.0


@pytest.mark.parametrize("edit,match", [
    (lambda o: o["attention"]["scale_factors"].pop(), "no scale factor reads 'scale1'"),
    (lambda o: o["attention"]["scale_factors"][1].update(index=[1]),
     r"reads 'scale1' at \[1\], outside its shape \[1\]"),
    (lambda o: o["attention"]["scale_factors"][0].update(arg="scale7"),
     "reads 'scale7', which is not an argument"),
    (lambda o: o["attention"]["scale_factors"][0].update(divide=1),
     "attention.scale_factors must be a list"),
    (lambda o: o["args"][3].update(dtype="int32"), "'scale0' must be a"),
    (lambda o: o["args"][3].update(map="(d0) -> ()"), "'scale0' must be a"),
])
def test_manifest_runtime_scales_invalid(edit, match):
    obj = _scaled_manifest()
    edit(obj)
    with pytest.raises(BundleError, match=match):
        bundle.parse_manifest(seal(obj))


def _dequant(x, scale_type, scale_map, op, wide):
    """%x (f16) = 8-bit %{x}8 extended to `wide`, `op` (mulf / divf) by the
    element of %{x}s (`scale_type`, read through `scale_map`)."""
    t8, t16 = "tensor<2x4x300x128xf8E4M3FN>", "tensor<2x4x300x128xf16>"
    st = scale_type[len("tensor<"):-1].split("x")[-1]
    ext = f"    %w = arith.extf %x : f8E4M3FN to {wide}\n"
    if wide != st:
        ext += f"    %c = arith.extf %sc : {st} to {wide}\n"
    sc = "%c" if wide != st else "%sc"
    tail = (f"    %y = arith.{op} %w, {sc} : {wide}\n"
            + (f"    %z = arith.truncf %y : {wide} to f16\n    linalg.yield %z : f16\n"
               if wide != "f16" else "    linalg.yield %y : f16\n"))
    m = "affine_map<(a, b, c, d) -> "
    return (f"  %{x}e = tensor.empty() : {t16}\n"
            f"  %{x} = linalg.generic {{indexing_maps = [{m}(a, b, c, d)>, {m}{scale_map}>, "
            f"{m}(a, b, c, d)>], iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
            f"\"parallel\"]}}\n      ins(%{x}8, %{x}s : {t8}, {scale_type}) outs(%{x}e : {t16}) {{\n"
            f"  ^bb0(%x: f8E4M3FN, %sc: {st}, %o: f16):\n{ext}{tail}  }} -> {t16}\n")


FP8_RUNTIME_SCALES = """
func.func @attention(%qs: tensor<f16>, %ks: tensor<1xf32>, %vs: tensor<f32>, %q8: tensor<2x4x300x128xf8E4M3FN>, %k8: tensor<2x4x300x128xf8E4M3FN>, %v8: tensor<2x4x300x128xf8E4M3FN>) -> tensor<2x4x300x128xf16> {
""" + _dequant("q", "tensor<f16>", "()", "mulf", "f16") \
    + _dequant("k", "tensor<1xf32>", "(0)", "divf", "f32") \
    + _dequant("v", "tensor<f32>", "()", "mulf", "f32") + """  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<2x4x300x300xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x300x300xf32>) -> tensor<2x4x300x300xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x300x128xf16>, tensor<2x4x300x128xf16>) outs(%sz : tensor<2x4x300x300xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %pp = arith.mulf %a32, %b32 : f32
    %r = arith.addf %acc, %pp : f32
    linalg.yield %r : f32
  } -> tensor<2x4x300x300xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x300x300xf32>) outs(%se : tensor<2x4x300x300xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.0883883461 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x4x300x300xf32>
  %p = linalg.softmax dimension(3) ins(%ss : tensor<2x4x300x300xf32>) outs(%se : tensor<2x4x300x300xf32>) -> tensor<2x4x300x300xf32>
  %oe = tensor.empty() : tensor<2x4x300x128xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x300x128xf32>) -> tensor<2x4x300x128xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, e, n) -> (b, h, m, n)>, affine_map<(b, h, m, e, n) -> (b, h, n, e)>, affine_map<(b, h, m, e, n) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x300x300xf32>, tensor<2x4x300x128xf16>) outs(%oz : tensor<2x4x300x128xf32>) {
  ^bb0(%a: f32, %b: f16, %acc: f32):
    %b32 = arith.extf %b : f16 to f32
    %pp = arith.mulf %a, %b32 : f32
    %r = arith.addf %acc, %pp : f32
    linalg.yield %r : f32
  } -> tensor<2x4x300x128xf32>
  %te = tensor.empty() : tensor<2x4x300x128xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<2x4x300x128xf32>) outs(%te : tensor<2x4x300x128xf16>) {
  ^bb0(%x: f32, %y: f16):
    %z = arith.truncf %x : f32 to f16
    linalg.yield %z : f16
  } -> tensor<2x4x300x128xf16>
  return %t : tensor<2x4x300x128xf16>
}
"""


@needs_attn_bundle
def test_real_attn_bundle_fp8_runtime_scales(tmp_path):
    """FP8 dequantized by runtime per-tensor scales, as a frontend writes it:
    the FP8 kernel with the three scale tensors as arguments, read through
    the attention's factors (K's divides)."""
    out = attn_opt.compile_bundle(FP8_RUNTIME_SCALES, tmp_path / "b")
    m = attn_opt.read_manifest(out)
    assert m.arg("q").dtype == "float8_e4m3fn"
    assert "wgmma" in m.attention.kernel_choice
    assert m.inputs[:3] == ("q", "k", "v")
    assert set(m.inputs[3:]) == {"scale0", "scale1", "scale2"}
    att = m.attention
    assert abs(att.scale - 0.0883883461) < 1e-8
    by_arg = {a: (m.arg(a).dtype, m.arg(a).shape, idx, div)
              for a, idx, div in att.scale_factors + att.value_scale_factors}
    assert sorted(by_arg.values()) == sorted([
        ("float16", (), (), False), ("float32", (1,), (0,), True),
        ("float32", (), (), False)])
    assert len(att.value_scale_factors) == 1 and att.value_scale == 1.0


@needs_attn_bundle
def test_real_attn_bundle_runtime_scale_reference(tmp_path):
    """A 16-bit attention whose scale is a runtime value (the same kernel
    rule): the reference with the factors equals the reference with their
    product as a constant scale."""
    from dataclasses import replace
    from attn_opt.reference import (NumpyOps, effective_scales, make_inputs,
                                    reference)
    t = "tensor<1x2x40x64xf16>"
    prog = f"""func.func @attention(%qs: tensor<f32>, %ks: tensor<2xf16>, %q: {t}, %k: {t}, %v: {t}, %o: {t}) -> {t} {{
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0.125 : f32
  %a = tensor.extract %qs[] : tensor<f32>
  %b16 = tensor.extract %ks[%c1] : tensor<2xf16>
  %b = arith.extf %b16 : f16 to f32
  %s1 = arith.mulf %s0, %a : f32
  %s = arith.divf %s1, %b : f32
  %r = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) scale(%s) outs(%o : {t})
      causal indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> {t}
  return %r : {t}
}}
"""
    m = attn_opt.read_manifest(attn_opt.compile_bundle(prog, tmp_path / "b"))
    assert m.attention.scale_factors == (("scale0", (), False), ("scale1", (1,), True))
    assert m.arg("scale1").shape == (2,) and m.arg("scale1").dtype == "float16"
    ops = NumpyOps()
    x = make_inputs(m, ops, seed=3)
    assert 0.25 <= float(x["scale0"]) <= 2.0
    s, _ = effective_scales(m.attention, x)
    assert s == np.float32(np.float32(0.125 * np.float32(x["scale0"]))
                           / np.float32(x["scale1"][1]))
    fixed = replace(m, attention=replace(m.attention, scale=s, scale_factors=()))
    np.testing.assert_array_equal(reference(m, x, ops), reference(fixed, x, ops))
