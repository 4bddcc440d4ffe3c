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
