"""Review 14a's defects in `gpu-garden kv` (task llmfix18): each test from vLLM's source or hand arithmetic."""
import time

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version

GiB = 1 << 30


@pytest.mark.parametrize("v", ["0.1.dev19754+g3a0914114.cu129", "0.1.dev19754+g3a0914114.precompiled",
                               "0.1.dev19754+g3a0914114.d20260101.cu128", "0.0.0.dev3+gd91c3682b.rocm641"])
def test_untagged_build_with_local_segments_is_a_commit(v):
    # setuptools-scm's untagged version, then the local segments vLLM's setup.py adds (+cu129 / .precompiled) after a
    # dirty tree's .dYYYYMMDD: a commit, not release 0.1 (the old pattern stopped at .dYYYYMMDD: (0, 1, 0))
    assert parse_version(v, "vllm") is None


def test_untagged_pattern_stays_linear_on_many_segments():
    # 100,000 dot segments and a character no segment takes: a pattern whose segments could swallow dots backtracks
    # without end; this one fails in one pass (refused as no version, quickly)
    v = "0.1.dev1+gabcdef1" + ".a1" * 100000 + "!"
    t = time.perf_counter()
    with pytest.raises(llm.UserError):
        parse_version(v, "vllm")
    assert time.perf_counter() - t < 1.0
