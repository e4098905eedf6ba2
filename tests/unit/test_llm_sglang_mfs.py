"""SGLang's default --mem-fraction-static by version (runtimes/sglang.py default_mfs). Expected values are the
fractions SGLang printed: 0.911 on an MI355X (288 GiB) with sglang#18263's branch of July 2026, and 0.85 for four L4s
at TP 4 on 0.4.3.post4 (didier-durand/llms-in-clouds, server_args)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes import sglang as SG

GiB, MiB = 1 << 30, 1 << 20


def test_newest_reserve_follows_the_card():
    # 512 + 1.5 x 16384 + 2 x 512 + 1/8 x 1024 MiB reserved on a card above 160 GiB: 0.911 printed; the 0.4 table
    # would give 0.88, a 1.0 MiB-per-token activation term 0.939
    assert SG.default_mfs(1, 288 * 1024, None) == 0.911


def test_the_04_table_stays_for_04_releases():
    assert SG.default_mfs(4, 23034, parse_version("0.4.3.post4")) == 0.85     # printed mem_fraction_static=0.85
    assert SG.default_mfs(4, 23034, None) != 0.85                              # the newest reserve differs


def test_plan_uses_the_card_reserve_and_says_so():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B-Instruct-2507")
    new = llm.plan(s, "sglang", ctx=32768, vram=288 * GiB)
    old = llm.plan(s, "sglang", ctx=32768, vram=288 * GiB, runtime_version="0.4.6")
    assert new["budget"] / old["budget"] == pytest.approx(0.911 / 0.88, rel=1e-6)
    assert any("--mem-fraction-static 0.911" in n for n in new["notes"])
    assert not any("SGLang's default for a" in n for n in old["notes"])
