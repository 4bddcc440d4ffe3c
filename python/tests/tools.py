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


# A dynamic GQA-packed decode of four row warps (M = 16, 4 query heads per kv
# head, B and N dynamic): a bundle with launch variants (v1, v2).
DECODE_PACKED = """
func.func @decode_packed(%q: tensor<?x8x4x16x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>, %o: tensor<?x8x4x16x128xf16>) -> tensor<?x8x4x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x16x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>) scale(%s)
      outs(%o : tensor<?x8x4x16x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<?x8x4x16x128xf16>
  return %r : tensor<?x8x4x16x128xf16>
}
"""
