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
