"""kv-accuracy round 61 (task ellm39, batch 66 after first sight)."""
import pytest

from gpu_garden.memory.errors import UserError  # noqa: F401
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import OWN_NUMBERING, parse_version, version_note
from gpu_garden.memory.units import GiB, MiB

Q36 = "Qwen/Qwen3.6-35B-A3B"
# batch 66's Lemonade row (hogeheer strix-halo-guide, server-shootout/lemonade-b1259-qwen36-np8-workstation-baseline):
# the version as the collector wrote it; the binary printed 'build_info: b1-e77056f'
LEMONADE = "lemonade llamacpp-rocm b1259 (build_info b1-e77056f)"


# --- a distribution's own build number is no llama.cpp build ----------------------------------------------------------
def test_lemonade_build_number_reads_as_newest_with_a_note():
    # before round 61: UserError ('cannot read a version'); Lemonade's b1259 is its own release count, not b1259
    assert parse_version(LEMONADE, "llama.cpp") is None
    # the same number written first is still Lemonade's, not llama.cpp's b1259 of 2023 (before: (1259,))
    assert parse_version("b1259 (Lemonade llamacpp-rocm)", "llama.cpp") is None
    note = version_note(LEMONADE, "llama.cpp")
    assert note and "Lemonade" in note and "newest" in note
    # a plain llama.cpp build keeps its number and no note
    assert parse_version("b9010", "llama.cpp") == (9010,) and version_note("b9010", "llama.cpp") is None
    # the word must be whole: 'lemonaded' is no row of the table and stays unreadable
    with pytest.raises(UserError):
        parse_version("lemonaded 1.0", "llama.cpp")
    assert [w for w, _, _ in OWN_NUMBERING] == ["lemonade"]


def test_lemonade_row_plans_as_the_newest_llamacpp():
    # the Lemonade ROCm row: -c 32768 -np 8 -fa on -ub 512, Qwen3.6-35B-A3B UD-Q4_K_M, 'Total VRAM: 122880 MiB'
    # (before round 61 the plan raised UserError on this version and the row was not scored)
    spec = llm.describe(model=Q36)
    kw = dict(runtime="llama.cpp", ctx=32768, parallel=8, kv_dtype="f16", weights_dtype="UD-Q4_K_M",
              flash_attn="on", ubatch=512, ngl=999, kv_unified=False, vram=122880 * MiB)
    lem = llm.plan(spec, runtime_version=LEMONADE, **kw)
    # KV: 10 attention layers x 2 KV heads x 256 x 2 (K, V) x 2 bytes x 4096 cells x 8 slots = 640 MiB (printed
    # 'ROCm0 KV buffer size = 640.00 MiB'), + the recurrent state, 8 slots x 62.8125 MiB ('ROCm0 RS buffer size =
    # 502.50 MiB')
    assert 10 * 2 * 256 * 2 * 2 * 4096 * 8 == 640 * MiB
    assert lem["kv_total"] == 640 * MiB + 502.5 * MiB
    # compute: the log printed 'ROCm0 compute buffer size = 497.00 MiB'; the plan's reserve is within 5 % of it
    assert abs(lem["overhead"]["compute_buffer"] - 497 * MiB) < 0.05 * 497 * MiB
    assert lem["fits"] is True and lem["total"] < 120 * GiB
    assert any("Lemonade" in n for n in lem["notes"])


def test_lemonade_without_ctx_takes_the_newest_fit_step_not_b1259s():
    # without -c a --fit build (the newest) keeps its 1024 MiB free-memory target as the margin; reading the text as
    # llama.cpp's b1259 (2023, no --fit) would plan that build's larger margin instead
    spec = llm.describe(model=Q36)
    kw = dict(runtime="llama.cpp", parallel=8, weights_dtype="UD-Q4_K_M", flash_attn="on", vram=120 * GiB)
    lem = llm.plan(spec, runtime_version=LEMONADE, **kw)
    old = llm.plan(spec, runtime_version="b1259", **kw)
    assert lem["overhead"]["margin"] == 1024 * MiB
    assert old["overhead"]["margin"] != 1024 * MiB


# --- --quant-group: a 4-bit checkpoint's group size, for a model named without its config -----------------------------
Q30 = "Qwen/Qwen3-30B-A3B-Instruct-2507"


def test_quant_group_sizes_awq_at_its_groups():
    spec = llm.describe(model=Q30)
    kw = dict(runtime="vllm", ctx=32768, weights_dtype="awq")
    g128 = llm.plan(spec, **kw)["weights"]
    g32 = llm.plan(spec, quant_group=32, **kw)["weights"]
    # Qwen3-30B-A3B's decoder matmuls: 48 layers x (128 experts x 3 x 2048 x 768 + q 2048 x 4096 + k, v 2048 x 512 x 2
    # + o 4096 x 2048) = 48 x 622,854,144 = 29,896,998,912. AWQ: 4 bits + an fp16 scale and a 4-bit zero a group:
    # 4 + 20/128 bits at 128, 4 + 20/32 at 32, so 32 costs 29,896,998,912 x (20/32 - 20/128) / 8 = 1,751,777,280 bytes more
    assert abs((g32 - g128) - 1_751_777_280) < 64
    # given as 128 it is the default
    assert llm.plan(spec, quant_group=128, **kw)["weights"] == g128


def test_quant_group_refused_where_unread_or_not_a_group():
    spec = llm.describe(model=Q30)
    with pytest.raises(UserError, match="group_size"):
        llm.plan(spec, runtime="vllm", ctx=4096, weights_dtype="awq", quant_group=48)
    with pytest.raises(UserError, match="quant-group"):
        llm.plan(spec, runtime="llama.cpp", ctx=4096, weights_dtype="Q4_K_M", quant_group=32)
