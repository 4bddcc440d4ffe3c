"""What several test files share: the built attn-bundle, or a skip."""
import pytest

import attn_opt


def real_attn_bundle():
    """The attn-bundle the tests would run, or None when it is not built."""
    try:
        return attn_opt.find_attn_bundle()
    except FileNotFoundError:
        return None


needs_attn_bundle = pytest.mark.skipif(real_attn_bundle() is None,
                                       reason="attn-bundle not built")


def compile_once(tmp_path_factory, name, program):
    """A module-scoped bundle of `program` (skips without attn-bundle)."""
    if real_attn_bundle() is None:
        pytest.skip("needs attn-bundle")
    out = tmp_path_factory.mktemp(name) / "b"
    return attn_opt.bundle.compile(program, out, attn_bundle=real_attn_bundle())



def packed_decode(name, m, d, scale):
    """A decode with a dynamic batch and key count, 8 kv heads of 4 query
    heads each, M new tokens, head dim D (f16)."""
    tq = f"tensor<?x8x4x{m}x{d}xf16>"
    tk = f"tensor<?x8x?x{d}xf16>"
    mp = "affine_map<(b, h, g, m, n, d, e) -> "
    return f"""
func.func @{name}(%q: {tq}, %k: {tk}, %v: {tk}, %o: {tq}) -> {tq} {{
  %s = arith.constant {scale} : f32
  %r = attn.attention ins(%q, %k, %v : {tq}, {tk}, {tk}) scale(%s)
      outs(%o : {tq}) indexing_maps = [
        {mp}(b, h, g, m, d)>, {mp}(b, h, n, d)>,
        {mp}(b, h, n, e)>, {mp}(b, h, g, m, e)>] -> {tq}
  return %r : {tq}
}}
"""


# Four row warps (M = 16): a bundle with launch variants (v1, v2).
DECODE_PACKED = packed_decode("decode_packed", 16, 128, "0.088")
