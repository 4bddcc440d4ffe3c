"""The bundle loader on hostile input (issue 15): every malformed, modified,
mixed or oversized bundle is a BundleError naming what is wrong, never
another exception, never accepted.

data/hostile/ holds the reproducers of 2026-11-23 (manifest/*.json, format
/1, each next to the good bundle's kernel.ptx/.cubin, as manifest/check.sh
ran them), the good bundle itself (kernel.ptx, kernel.cubin and the /2
manifest.json that attn-bundle writes for bundle-a-wgmma.mlir) and its old
/1 manifest. The 200 kB deep-nesting reproducer is generated here, byte for
byte. Each reproducer is checked as it is and upgraded to /2 (as if a
buggy attn-bundle had written it, hashes and all): the schema must still
refuse what is wrong, and the hashes what was edited or mixed. No GPU, no
attn-bundle needed (except the last test)."""
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

import attn_opt
from attn_opt import bundle
from attn_opt.bundle import BundleError

DATA = Path(__file__).resolve().parent / "data" / "hostile"
GOOD = DATA / "good_bundle"
PTX = (GOOD / "kernel.ptx").read_bytes()
CUBIN = (GOOD / "kernel.cubin").read_bytes()
GOOD_TEXT = (GOOD / "manifest.json").read_bytes()
GOOD_V2 = json.loads(GOOD_TEXT)
CASES = sorted(p.name for p in (DATA / "cases").glob("*.json"))

# manifest/crash-recursionerror-deep-nesting.json, regenerated.
DEEP_NESTING = (b'{"format": "attn-opt-bundle/1", "x": ' + b"[" * 100000 +
                b"]" * 100000 + b"}")


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_bundle(d, manifest, ptx=PTX, cubin=CUBIN):
    """A bundle directory: `manifest` (bytes, or an object to dump) next to
    the good kernel files (or the ones given)."""
    d.mkdir(parents=True, exist_ok=True)
    if ptx is not None:
        (d / "kernel.ptx").write_bytes(ptx)
    if cubin is not None:
        (d / "kernel.cubin").write_bytes(cubin)
    if not isinstance(manifest, bytes):
        manifest = json.dumps(manifest).encode()
    (d / "manifest.json").write_bytes(manifest)
    return d


def both_reject(d, match=None):
    """read_manifest and open_bundle both raise BundleError (never anything
    else); returns open_bundle's message."""
    for fn in (attn_opt.read_manifest, bundle.open_bundle):
        with pytest.raises(BundleError, match=match) as info:
            fn(d)
    return str(info.value)


def upgrade(raw, reseal):
    """A /1 reproducer as attn-bundle would write it in format /2, its
    hostile part kept byte for byte: format, mask_value null -> "-inf" (the
    /2 spelling; null itself is tested apart), the sha256 of the good
    kernel files and a binding_sha256: of the upgraded manifest itself
    (`reseal`: a writer that produced the wrong manifest) or the good
    bundle's (a good manifest edited afterwards)."""
    text = raw.replace(b'"attn-opt-bundle/1"', b'"attn-opt-bundle/2"')
    text = text.replace(b'"mask_value": null', b'"mask_value": "-inf"').rstrip()
    assert text.endswith(b"}")
    ptx_name, binding = "kernel.ptx", GOOD_V2["binding_sha256"]
    try:
        obj = json.loads(text.decode("utf-8"))
    except ValueError:  # invalid UTF-8, 5000 digits: the good names and seal
        obj = None
    if obj is not None:
        ptx_name = obj.get("ptx", ptx_name)
        if reseal:
            binding = bundle.binding_sha256(obj, sha(PTX), sha(CUBIN))
    extra = {"sha256": {ptx_name: sha(PTX), "kernel.cubin": sha(CUBIN)},
             "binding_sha256": binding}
    return text[:-1] + b", " + json.dumps(extra)[1:].encode()


# --- the good bundle ------------------------------------------------------------

def test_good_v2_bundle_is_accepted(tmp_path):
    """What attn-bundle writes (kept in data/): read, hashes and binding
    verified, the launch consistent with the attention."""
    b = bundle.open_bundle(GOOD)
    m = b.manifest
    assert b.ptx == PTX and b.cubin == CUBIN
    assert m.grid == (1, 4, 1) and m.block == (256, 1, 1) and m.shared_bytes == 82944
    assert m.attention.mask_value == -math.inf and m.attention.scale == 0.5
    assert m.attention.tile_q == 128 and m.attention.tensor_cores
    assert [a.name for a in m.args] == ["q", "k", "v", "out"]
    assert m.file_sha256("kernel.ptx") == sha(PTX)
    # A copy elsewhere, and through a symlinked directory.
    d = make_bundle(tmp_path / "copy", GOOD_TEXT)
    assert bundle.open_bundle(d).manifest.args == m.args
    (tmp_path / "link").symlink_to(d)
    assert attn_opt.read_manifest(tmp_path / "link").grid == m.grid


def test_binding_text_matches_attn_bundle():
    """binding_text is the contract with attn-bundle.cpp: the /2 manifest it
    wrote hashes to its own binding_sha256, and upgrading the old /1
    manifest of the same kernel gives the same binding."""
    want = GOOD_V2["binding_sha256"]
    assert bundle.binding_sha256(GOOD_V2, sha(PTX), sha(CUBIN)) == want
    assert bundle.binding_text(GOOD_V2, sha(PTX), sha(CUBIN)).splitlines()[:5] == [
        "format attn-opt-bundle/2", "kernel attn_fwd_kernel", f"ptx {sha(PTX)}",
        f"cubin {sha(CUBIN)}", "grid 1 4 1"]
    v1 = (DATA / "good_manifest_v1.json").read_bytes()
    assert json.loads(upgrade(v1, reseal=True))["binding_sha256"] == want
    up = json.loads(upgrade(v1, reseal=True))
    assert bundle.parse_manifest(up).grid == (1, 4, 1)


# --- the reproducers ---------------------------------------------------------------

@pytest.mark.parametrize("case", CASES + ["crash-recursionerror-deep-nesting.json"])
def test_reproducer_as_written_is_refused(case, tmp_path):
    """As check.sh ran them (format /1, next to the good kernel files)."""
    raw = DEEP_NESTING if case.startswith("crash-recursion") else \
        (DATA / "cases" / case).read_bytes()
    both_reject(make_bundle(tmp_path / "b", raw))


# What each reproducer, upgraded to /2, must give: a BundleError matching
# the pattern (resealed, good seal), or "ok" (then `check` on the manifest).
UPGRADED = {
    "accepted-grid-2e64.json": (r"grid\[0\]: 18446744073709551616 is outside "
                                r"the 64-bit integer range",) * 2,
    "accepted-grid-too-small.json": (r"grid \[1, 1, 1\] does not match the "
                                     r"attention: m = 128, tile_q = 128, batch "
                                     r"\[2, 2\] need grid \[1, 4, 1\]",) * 2,
    "accepted-grid-x-2e32plus1-truncates-to-1.json": (
        r"x = 4294967297 is above CUDA's limit 2147483647",) * 2,
    "accepted-grid-y-70000.json": (r"y = 70000 is above CUDA's limit 65535",) * 2,
    "accepted-k-dtype-float32-for-f16-kernel.json": (
        r"a tensor-core kernel takes q, k, v and out of one dtype",) * 2,
    # +inf is read as +inf (it used to be written as null and read as -inf);
    # attn-bundle no longer writes it, and mask_value is not in the binding.
    "accepted-mask-value-posinf.json": ("ok", "ok"),
    # Consistent in itself (parameters k, q, v, out): only the binding of
    # the kernel it came with tells.
    "accepted-q-k-order-swapped.json": ("ok", r"binding_sha256 mismatch"),
    "accepted-scale-1e400-inf.json": (r"attention\.scale: 1e400 is outside the "
                                      r"double range",) * 2,
    "accepted-scale-NaN-literal.json": (r"attention\.scale: NaN is not JSON",) * 2,
    "accepted-scale-nan-string.json": (r"attention\.scale must be a finite "
                                       r"number, got 'nan'",) * 2,
    "accepted-shared-2e40.json": (r"'shared_bytes' must be an integer in "
                                  r"\[0, 232448\] \(chip sm_90a\), got "
                                  r"1099511627776",) * 2,
    "accepted-zero-shapes.json": (r"'q'\.shape must be >= 1",) * 2,
    "crash-oserror-long-ptx-name.json": (r"'ptx' must be a file name inside the "
                                         r"bundle",) * 2,
    "crash-unicodedecodeerror-invalid-utf8.json": (r"not UTF-8 text",) * 2,
    "crash-valueerror-5000-digit-int.json": (
        r"shared_bytes: an integer of 5000 digits is outside the 64-bit range",) * 2,
}


def test_every_reproducer_has_an_expectation():
    assert sorted(UPGRADED) == CASES


@pytest.mark.parametrize("reseal", [True, False], ids=["resealed", "good-seal"])
@pytest.mark.parametrize("case", CASES)
def test_reproducer_upgraded_to_v2(case, reseal, tmp_path):
    expect = UPGRADED[case][0 if reseal else 1]
    d = make_bundle(tmp_path / "b", upgrade((DATA / "cases" / case).read_bytes(),
                                            reseal))
    if expect != "ok":
        both_reject(d, expect)
        return
    m = bundle.open_bundle(d).manifest
    assert attn_opt.read_manifest(d) == m
    if "posinf" in case:
        assert m.attention.mask_value == math.inf
    if "swapped" in case:
        assert [a.name for a in m.args] == ["k", "q", "v", "out"]
        assert m.arg("q").dims == ("b0", "b1", "m", "d")


def test_deep_nesting_reproducer_upgraded(tmp_path):
    raw = DEEP_NESTING.replace(b"/1", b"/2")
    both_reject(make_bundle(tmp_path / "b", raw), "nested deeper than 32 levels")


# --- generated hostile manifests ------------------------------------------------------

def _good_with(old, new, first=False):
    assert GOOD_TEXT.count(old) == 1 or (first and old in GOOD_TEXT), old
    return GOOD_TEXT.replace(old, new, 1)


HOSTILE_BYTES = {
    "empty": (b"", "not valid JSON"),
    "null": (b"null", "not a JSON object"),
    "list": (b"[]", "not a JSON object"),
    "empty object": (b"{}", "format None"),
    "truncated": (GOOD_TEXT[:len(GOOD_TEXT) // 2], "not valid JSON"),
    "NUL byte": (GOOD_TEXT[:100] + b"\0" + GOOD_TEXT[100:], "not valid JSON"),
    "UTF-8 BOM": (b"\xef\xbb\xbf" + GOOD_TEXT, "not valid JSON"),
    "UTF-16": (GOOD_TEXT.decode().encode("utf-16"), "not UTF-8 text"),
    "invalid UTF-8 in a string": (_good_with(b'"attn_fwd_kernel"', b'"attn\xff_kernel"'),
                                  "not UTF-8 text"),
    "overlong UTF-8": (_good_with(b'"kernel.ptx",', b'"kernel\xc0\xae.ptx",'),
                       "not UTF-8 text"),
    "lone surrogate escape": (_good_with(b'"attn_fwd_kernel"', b'"attn_\\ud800"'),
                              "'kernel' must be a PTX identifier"),
    "non-ASCII kernel": (_good_with(b'"attn_fwd_kernel"', '"attn_fwd_kérnel"'.encode()),
                         "'kernel' must be a PTX identifier"),
    "deep nesting 40": (_good_with(b'"window": null', b'"window": ' + b"[" * 40 + b"]" * 40),
                        "nested deeper than 32 levels"),
    "deep objects 5000": (_good_with(b'"window": null', b'"window": ' + b'{"a": ' * 5000
                                     + b"1" + b"}" * 5000), "nested deeper than 32 levels"),
    "brackets in a string do not count, then a bad grid": (
        _good_with(b'"kernel_choice": "', b'"kernel_choice": "' + b"[" * 60000)
        .replace(b'"grid": [\n    1,', b'"grid": [\n    2,'),
        r"grid \[2, 4, 1\] does not match the attention"),
    "5000-digit int in a shape": (_good_with(b'"shape": [\n        2,',
                                             b'"shape": [\n        ' + b"9" * 5000 + b",",
                                             first=True),
                                  r"args\[0\]\.shape\[0\]: an integer of 5000 digits"),
    "20-digit negative int": (_good_with(b'"shared_bytes": 82944',
                                         b'"shared_bytes": -99999999999999999999'),
                              "shared_bytes: -99999999999999999999 is outside the 64-bit"),
    "2^63": (_good_with(b'"shared_bytes": 82944', b'"shared_bytes": 9223372036854775808'),
             "outside the 64-bit integer range"),
    "Infinity": (_good_with(b'"scale": 0.5', b'"scale": Infinity'),
                 r"attention\.scale: Infinity is not JSON"),
    "-Infinity mask": (_good_with(b'"mask_value": "-inf"', b'"mask_value": -Infinity'),
                       r"attention\.mask_value: -Infinity is not JSON"),
    "NaN in an ignored field": (_good_with(b'"rescale_threshold": 8', b'"rescale_threshold": NaN'),
                                r"attention\.rescale_threshold: NaN is not JSON"),
    "null mask_value": (_good_with(b'"mask_value": "-inf"', b'"mask_value": null'),
                        r"mask_value must be a finite number, \"-inf\" or \"inf\", got None"),
    "1000-char float": (_good_with(b'"scale": 0.5', b'"scale": 0.' + b"5" * 1000),
                        "a number written with 1002 characters"),
    "duplicate key": (_good_with(b'"format": "attn-opt-bundle/2",',
                                 b'"format": "attn-opt-bundle/2", "format": "attn-opt-bundle/2",'),
                      "duplicate key 'format'"),
    "too large": (GOOD_TEXT[:-2] + b" " * (1 << 20) + b"}\n", "more than the 1048576"),
    "huge string": (_good_with(b'"kernel_choice": "', b'"kernel_choice": "' + b"x" * 100000),
                    r"kernel_choice: a string of 100\d\d\d characters"),
    "format /1 with /2 fields": (_good_with(b'"attn-opt-bundle/2"', b'"attn-opt-bundle/1"'),
                                 "format 'attn-opt-bundle/1', this loader reads"),
    "format /3": (_good_with(b'"attn-opt-bundle/2"', b'"attn-opt-bundle/3"'), "format"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_BYTES))
def test_hostile_manifest_bytes(name, tmp_path):
    raw, match = HOSTILE_BYTES[name]
    both_reject(make_bundle(tmp_path / "b", raw), match)


def _edited(edit):
    obj = json.loads(GOOD_TEXT)
    edit(obj)
    return obj


def test_manifest_edit_fails_binding(tmp_path):
    """q and k swapped after writing (the reproducer's edit on a /2
    bundle): consistent in itself, refused by binding_sha256."""
    def swap(m):
        m["args"][0], m["args"][1] = m["args"][1], m["args"][0]
    d = make_bundle(tmp_path / "b", _edited(swap))
    msg = both_reject(d, r"manifest does not describe this kernel \(binding_sha256 "
                         r"mismatch\)")
    assert "edited after attn-bundle wrote it" in msg
    # Other edits the binding covers.
    for edit in (lambda m: [a.update(dtype="bfloat16") for a in m["args"]],
                 lambda m: m["args"][3].update(map=m["args"][3]["map"][11:-1]),
                 lambda m: m.update(block=[128, 1, 1]),
                 lambda m: m.update(shared_bytes=1024),
                 lambda m: m.update(cubin=None) or m["sha256"].pop("kernel.cubin")):
        both_reject(make_bundle(tmp_path / "e", _edited(edit)), "binding_sha256 mismatch")


def test_mixed_bundle_fails_sha256(tmp_path):
    """The SIGKILL reproducer: another bundle's kernel.ptx (same parameter
    count) next to this manifest and cubin; and the other way round."""
    other_ptx = PTX.replace(b"attn_fwd_kernel", b"attn_fwd_kernel ", 1)
    d = make_bundle(tmp_path / "b", GOOD_TEXT, ptx=other_ptx)
    with pytest.raises(BundleError, match=r"kernel\.ptx does not match the manifest's "
                       r"sha256: the bundle is mixed or modified"):
        bundle.open_bundle(d)
    attn_opt.read_manifest(d)  # the manifest alone is fine
    d = make_bundle(tmp_path / "c", GOOD_TEXT, cubin=CUBIN + b"\0")
    with pytest.raises(BundleError, match=r"kernel\.cubin does not match"):
        bundle.open_bundle(d)
    # Both files of another kernel, the manifest of this one.
    d = make_bundle(tmp_path / "d", GOOD_TEXT, ptx=other_ptx, cubin=b"\x7fELF")
    with pytest.raises(BundleError, match="mixed or modified"):
        bundle.open_bundle(d)


def test_missing_files(tmp_path):
    d = make_bundle(tmp_path / "b", GOOD_TEXT, cubin=None)
    assert bundle.open_bundle(d).cubin is None  # the PTX is enough
    d = make_bundle(tmp_path / "c", GOOD_TEXT, ptx=None, cubin=None)
    with pytest.raises(BundleError, match="no kernel image on disk"):
        bundle.open_bundle(d)
    with pytest.raises(BundleError, match="cannot read"):
        bundle.open_bundle(tmp_path / "nowhere")


def test_symlinks_leaving_the_bundle(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kernel.ptx").write_bytes(PTX)  # the right bytes, the wrong place
    d = make_bundle(tmp_path / "b", GOOD_TEXT, ptx=None)
    (d / "kernel.ptx").symlink_to(outside / "kernel.ptx")
    with pytest.raises(BundleError, match=r"kernel\.ptx resolves to .*outside the "
                       "bundle directory"):
        bundle.open_bundle(d)
    (d / "kernel.ptx").unlink()
    (d / "kernel.ptx").symlink_to("../outside/kernel.ptx")
    with pytest.raises(BundleError, match="outside the bundle directory"):
        bundle.open_bundle(d)
    (d / "kernel.ptx").unlink()
    (d / "kernel.ptx").symlink_to(outside / "dangling.ptx")
    with pytest.raises(BundleError, match="outside the bundle directory"):
        bundle.open_bundle(d)
    (d / "kernel.ptx").unlink()
    (d / "kernel.ptx").symlink_to("/etc/passwd")
    with pytest.raises(BundleError, match="outside the bundle directory"):
        bundle.open_bundle(d)
    # A symlink that stays inside is fine.
    (d / "kernel.ptx").unlink()
    (d / "sub").mkdir()
    (d / "sub" / "real.ptx").write_bytes(PTX)
    (d / "kernel.ptx").symlink_to("sub/real.ptx")
    bundle.open_bundle(d)
    # The manifest itself.
    e = make_bundle(tmp_path / "e", GOOD_TEXT)
    (outside / "manifest.json").write_bytes(GOOD_TEXT)
    (e / "manifest.json").unlink()
    (e / "manifest.json").symlink_to(outside / "manifest.json")
    both_reject(e, r"manifest\.json resolves to .*outside the bundle directory")


def test_special_files(tmp_path):
    """A FIFO or a directory where a file should be: refused, no hang."""
    d = make_bundle(tmp_path / "b", GOOD_TEXT, ptx=None)
    os.mkfifo(d / "kernel.ptx")
    with pytest.raises(BundleError, match=r"kernel\.ptx is not a regular file"):
        bundle.open_bundle(d)
    e = tmp_path / "e"
    e.mkdir()
    os.mkfifo(e / "manifest.json")
    both_reject(e, r"manifest\.json is not a regular file")
    f = make_bundle(tmp_path / "f", GOOD_TEXT, ptx=None)
    (f / "kernel.ptx").mkdir()
    with pytest.raises(BundleError, match="not a regular file"):
        bundle.open_bundle(f)


def test_hostile_paths(tmp_path):
    for p in ("/tmp/" + "a" * 5000, str(tmp_path / ("a" * 300)), str(tmp_path) + "/x\0y",
              "/dev/null", "/proc/self"):
        both_reject(p)


def test_ptx_without_the_entry(tmp_path):
    """A PTX the hashes agree with but that does not declare the kernel
    (sealed as attn-bundle would)."""
    obj = json.loads(GOOD_TEXT)
    ptx = PTX.replace(b".entry attn_fwd_kernel", b".entry other_kernel")
    bundle.seal(obj, ptx, CUBIN)
    d = make_bundle(tmp_path / "b", obj, ptx=ptx)
    with pytest.raises(BundleError, match="has no '.entry attn_fwd_kernel'"):
        bundle.open_bundle(d)


def test_hostile_text_takes_linear_time(tmp_path):
    """Text built to make a backtracking scanner quadratic (hours at 1 MiB):
    refused in well under a second each."""
    import time
    cases = [
        (b'{"x": "' + b'\\"' * 500000, "not valid JSON"),       # escapes, never closed
        (b"[" * 16 + b'"' * 1000000 + b"]" * 16, "not valid JSON"),
        (GOOD_TEXT[:-2] + b', "x": "' + b"\\" * 400000 + b'"}',  # 200000 escaped \
         "x: a string of 200000 characters"),
    ]
    for raw, match in cases:
        t = time.monotonic()
        both_reject(make_bundle(tmp_path / "m", raw), match)
        assert time.monotonic() - t < 20
    obj = json.loads(GOOD_TEXT)
    for ptx, match in ((b".entry attn_fwd_kernel(" * 2000000, "has no '.entry attn_fwd_kernel'"),
                       (b".entry attn_fwd_kernel(" + b".param .param " * 4000 + b")",
                        r"the PTX entry takes 1 parameters"),
                       (b".entry attn_fwd_kernel(" + b"," * 5000000 + b")",
                        r"a parameter list of 5000000 characters")):
        t = time.monotonic()
        bundle.seal(obj, ptx, CUBIN)
        d = make_bundle(tmp_path / "p", obj, ptx=ptx)
        with pytest.raises(BundleError, match=match):
            bundle.open_bundle(d)
        assert time.monotonic() - t < 20


# --- fuzz -------------------------------------------------------------------------

def _deep(n):
    x = []
    for _ in range(n):
        x = [x]
    return x


_VALUES = [None, True, False, 0, 1, -1, 3, 65536, 2 ** 31, 2 ** 63 - 1, 2 ** 63, -2 ** 63 - 1,
           2 ** 64, 10 ** 30, 0.5, -0.0, 1e308, float("nan"), float("inf"), float("-inf"),
           "", "-inf", "inf", "nan", "NaN", "kernel.ptx", "kernel.cubin", "../x", "/etc/passwd",
           "a" * 300, "x" * 70000, "q", "k", "out", "float16", "bool", "\ud800", "\n", "é",
           "affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>", " " * 2000,
           [], {}, [0], [1, 1, 1], [0, 0, 0], [2 ** 40, 1, 1], [1.0, 4, 1], ["1"], [None],
           {"x": 1}, {"name": "q"}]


def _paths(x, path=()):
    yield path
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, path + (i,))


def _mutate(obj, rng):
    paths = [p for p in _paths(obj) if p]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        path = rng.choice(paths)
        parent = obj
        try:
            for k in path[:-1]:
                parent = parent[k]
            key = path[-1]
            old = parent[key]
        except (KeyError, IndexError, TypeError):
            continue
        op = rng.randrange(9)
        if op == 0:
            del parent[key]
        elif op == 1 and isinstance(old, (int, float)) and not isinstance(old, bool):
            parent[key] = rng.choice([old * 2 ** rng.randrange(70), -old, old + 1, old - 1,
                                      float(old), str(old), 0])
        elif op == 2:
            parent[key] = _deep(rng.choice([5, 31, 33, 40, 300]))
        elif op == 3 and isinstance(old, list) and old:
            rng.shuffle(old)
        elif op == 4 and isinstance(old, list):
            old.append(rng.choice(old) if old and rng.random() < 0.5 else rng.choice(_VALUES))
        elif op == 5 and isinstance(old, str):
            parent[key] = rng.choice([old * rng.randrange(2, 400), old[:-1], old + "\x00",
                                      old.upper(), [old], {"s": old}])
        elif op == 6 and isinstance(parent, dict):
            parent[rng.choice(["x", "map", "layout", "tile_q", "tensor_cores",
                               "sha256", "cubin"])] = rng.choice(_VALUES)
        else:
            parent[key] = rng.choice(_VALUES)
        paths = [p for p in _paths(obj) if p] or [()]
        if paths == [()]:
            break


def test_fuzz_manifest_mutations(tmp_path):
    """2,000 random mutations of the good /2 manifest (deletions, type
    swaps, huge/negative/NaN numbers, long strings, deep nesting), half of
    them resealed (so the schema, not the hash, must catch them), every
    tenth also through the bytes of a bundle: each is a Manifest or a
    BundleError."""
    rng = random.Random(20261123)
    outcomes = {"accepted": 0, "rejected": 0}
    d = make_bundle(tmp_path / "b", GOOD_TEXT)
    for i in range(2000):
        obj = json.loads(GOOD_TEXT)
        _mutate(obj, rng)
        if rng.random() < 0.5:
            try:
                ptx_name = obj.get("ptx") if isinstance(obj, dict) else None
                cubin_name = obj.get("cubin") if isinstance(obj, dict) else None
                bundle.seal(obj, PTX if isinstance(ptx_name, str) else None,
                            CUBIN if isinstance(cubin_name, str) else None)
            except (BundleError, TypeError, AttributeError):
                pass
        try:
            bundle.parse_manifest(obj)
            outcomes["accepted"] += 1
        except BundleError:
            outcomes["rejected"] += 1
        except Exception as e:  # pragma: no cover - the failure report
            pytest.fail(f"mutation {i}: {type(e).__name__}: {e}\n"
                        f"{bundle._show(obj, 2000)}")
        if i % 10 == 0:
            try:
                raw = json.dumps(obj).encode("utf-8", "surrogatepass")
            except (TypeError, ValueError, RecursionError):
                continue
            if rng.random() < 0.5 and raw:  # and a few flipped bytes
                raw = bytearray(raw)
                for _ in range(rng.randrange(1, 4)):
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
                raw = bytes(raw)
            (d / "manifest.json").write_bytes(raw)
            try:
                bundle.open_bundle(d)
            except BundleError:
                pass
            except Exception as e:  # pragma: no cover
                pytest.fail(f"mutation {i} as bytes: {type(e).__name__}: {e}\n{raw[:2000]!r}")
    # The fuzz reaches the checks behind the hashes and the good paths.
    assert outcomes["accepted"] >= 20 and outcomes["rejected"] >= 1000, outcomes


# --- with the real attn-bundle ---------------------------------------------------------

def _attn_bundle():
    try:
        exe = attn_opt.find_attn_bundle()
    except FileNotFoundError:
        return None
    return exe if os.access(exe, os.X_OK) else None


@pytest.mark.skipif(_attn_bundle() is None, reason="attn-bundle not built")
def test_real_bundles_mixed_by_hand(tmp_path):
    """Reproducer 24 without the kill: bundle A (the kernel kept in data/,
    rebuilt) and bundle B (mma.sync, 1x128x48); B's kernel.ptx with A's
    manifest and cubin is refused."""
    a, b = tmp_path / "a", tmp_path / "b"
    for src, out in ((DATA / "bundle-a-wgmma.mlir", a), (DATA / "bundle-b-mma.mlir", b)):
        p = subprocess.run([_attn_bundle(), str(src), "-o", str(out)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"attn-bundle failed (mid-rebuild?): {p.stderr[-500:]}")
    bundle.open_bundle(a)
    bundle.open_bundle(b)
    assert json.loads((a / "manifest.json").read_text())["binding_sha256"] == \
        GOOD_V2["binding_sha256"] or (a / "kernel.ptx").read_bytes() != PTX
    shutil.copy(b / "kernel.ptx", a / "kernel.ptx")
    with pytest.raises(BundleError, match=r"kernel\.ptx does not match the manifest's "
                       "sha256: the bundle is mixed or modified"):
        bundle.open_bundle(a)


# --- launch variants -------------------------------------------------------------

GOOD_VARIANT = {"dir": "v1", "when": "one_range", "binding_sha256": "a" * 64,
                "kernel_choice": "x"}


@pytest.mark.parametrize("variants, match", [
    ("v1", "'variants' must be a list"),
    ([], "must be a list of 1 to 8"),
    ([GOOD_VARIANT] * 9, "must be a list of 1 to 8"),
    (["v1"], "is not an object|must be an object"),
    ([dict(GOOD_VARIANT, dir="../v1")], r"dir must be 'v<digits>'"),
    ([dict(GOOD_VARIANT, dir="v1/../../etc")], r"dir must be 'v<digits>'"),
    ([dict(GOOD_VARIANT, dir="v1234")], r"dir must be 'v<digits>'"),
    ([dict(GOOD_VARIANT, dir=1)], r"must be a string|dir must be"),
    ([GOOD_VARIANT, GOOD_VARIANT], r"each once"),
    ([dict(GOOD_VARIANT, when="always")], "when must be one of"),
    ([dict(GOOD_VARIANT, binding_sha256="A" * 64)], "binding_sha256 must be 64 lowercase"),
    ([dict(GOOD_VARIANT, kernel_choice="x" * 5000)], "kernel_choice must be a string"),
    ([dict(GOOD_VARIANT, kernel_choice=None)], "must be a string"),
    # Well formed, on a bundle whose split count is not chosen at launch.
    ([GOOD_VARIANT], "need a split count chosen at launch"),
])
def test_hostile_variants(variants, match, tmp_path):
    """A manifest's `variants`, sealed as a buggy writer would: refused by
    the schema with a BundleError, never followed to a directory."""
    obj = json.loads(GOOD_TEXT)
    obj["variants"] = variants
    try:
        bundle.seal(obj, PTX, CUBIN)
    except BundleError:  # no binding text: the good bundle's seal stays
        pass
    d = make_bundle(tmp_path / "b", obj)
    (d / "v1").mkdir()
    both_reject(d, match)
