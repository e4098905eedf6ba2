"""rev56, decided by task dsv4d: a vLLM with no release named (no --runtime-version, a nightly, a commit, an untagged
build without a stated base) is the newest release in every gate, the DeepSeek-V4 pool's form (deepseek_v4.layout_kind)
and a sliding layer's batches in flight (runtimes/vllm.swa_slack) included, as the plan's header ("(newest)") and
runtimes.version_note say. rev56 had found both rules reading it as vLLM 0.20.2 and added a note for it (UNNAMED_NOTE),
which is gone. The dataset's untagged builds whose pools are one batch's carry the release they are based on (their
rows' version, "... based on 0.22.0"). Expected values are worked here by hand, not taken from kv."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

FLASH_PACKED = 1_002_240   # the packed block: the full-MLA group's 21 x 37,440 + 21 x 8,640 + 20 x 1,728
FLASH_TUPLES = 1_051_776   # 0.20.2's block: 22 layer tuples x 47,808


def _flash(version):
    spec = llm.describe(model="deepseek-ai/DeepSeek-V4-Flash")
    kw = {"runtime_version": version} if version is not None else {}
    return llm.plan(spec, "vllm", ctx=131072, kv_dtype="fp8", tensor_parallel_size=4, vram=141 * GiB, **kw)


# DeepSeek-V4-Flash at 131,072 tokens on a 141 GiB card (vLLM's default batch there: 8192 tokens). A request's pages:
#   newest (two batches in flight, 16,384 tokens), packed: cdiv(131072, 256) = 512 (full MLA) + 2 x (cdiv(127 + 16384,
#   64) + 1 = 259) (the two sliding latent groups) + cdiv(7 + 16384, 4) + 1 = 4099 (c 4 states) + cdiv(127 + 16384, 8)
#   + 1 = 2065 (c 128 states) = 7194 pages x 1,002,240 bytes;
#   0.21.1 (one batch, 8192), 0.20.2's tuples: 512 + 2 x (cdiv(8319, 64) + 1 = 131) + (cdiv(8199, 4) + 1 = 2051) +
#   (cdiv(8319, 8) + 1 = 1041) = 3866 pages x 1,051,776 bytes.
# Breaks with layout_kind reading no version as 0.20.2 again (tuples: the block 1,051,776), with swa_slack keeping one
# batch for it (3866 pages), or with a stated base ignored.
@pytest.mark.parametrize("version, pages, block", [
    (None, 7194, FLASH_PACKED), ("nightly", 7194, FLASH_PACKED), ("0.1.dev5+gabcdef1", 7194, FLASH_PACKED),
    ("0.26.1", 7194, FLASH_PACKED), ("0.21.1", 3866, FLASH_TUPLES), ("0.1.dev5+gabcdef1 based on 0.21.1", 3866, FLASH_TUPLES),
])
def test_dsv4_pool_of_no_named_release_is_the_newest(version, pages, block):
    res = _flash(version)
    assert res["kv_detail"]["total"] == pages * block
    assert res["kv_detail"]["per_token"] == block // 256
    assert not any("DeepSeek-V4 with no vLLM release named" in n for n in res["notes"])  # rev56's note is gone


# Gemma-4-31B with its tower on a GB10 at 8192 tokens (batch 73's r8 row; 1024-token window, 16-token blocks): the
# newest release raises the default batch to the 2496-token video item (MM_PREFIX_FLOOR) and keeps two in flight, so a
# sliding layer holds (ceil((1023 + 2 x 2496) / 16) + 1) x 16 = 377 x 16 = 6032 cells; an untagged build stated to be
# based on 0.24.0 keeps one 2048-token batch: (ceil(3071 / 16) + 1) x 16 = 193 x 16 = 3088. Breaks with swa_slack
# reading no version as one batch (221 x 16 = 3536 for no version).
@pytest.mark.parametrize("version, cells", [(None, 377 * 16), ("0.1.dev1+ge08a6f3ae", 377 * 16),
                                            ("0.1.dev1+ge08a6f3ae based on 0.24.0", 193 * 16)])
def test_sliding_layer_of_no_named_release_keeps_two_batches(version, cells):
    spec = llm.describe(model="google/gemma-4-31B-it")
    kw = {"runtime_version": version} if version is not None else {}
    res = llm.plan(spec, "vllm", ctx=8192, kv_dtype="fp8", weights_dtype="bf16", vram=121.63 * GiB,
                   gpu_memory_utilization=0.72, gpu_name="NVIDIA GB10", **kw)
    assert res["kv_detail"]["sliding_cells"] == cells


# The rows whose printed pools are one batch's name their base, so the newest-by-default does not reach them: the
# seven exact GB10 / P520 Gemma rows and #44376. Breaks if a row's version is set back to the bare untagged build
# (or none): it would parse as the newest.
def test_the_one_batch_rows_carry_a_release_before_0_26():
    import json
    from pathlib import Path
    from gpu_garden.memory.llm.runtimes import at_least, parse_version
    rows = {r["id"]: r for r in json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "data"
                                            / "llm_measured.json").read_text())["rows"]}
    ids = ["vllm-44376-deepseek-v4-flash-tp2-ep-2xgh200-30k-fp8-refused",
           "vllm-jethac-gemma4-31b-bf16-gb10-8k-u072-fp8kv-mm-r8", "vllm-jethac-gemma4-26b-a4b-bf16-gb10-8k-u072-lmonly-r9",
           "vllm-jethac-gemma4-26b-a4b-bf16-gb10-8k-u072-lmonly-fp8kv-r9",
           "vllm-jethac-gemma3-12b-bf16-gb10-8k-u072-lmonly-fp8kv-r9",
           "vllm-jethac-gemma4-12b-bf16-gb10-8k-u080-mnbt4096-tfmain",
           "vllm-jethac-p520-gemma3-1b-bf16-5060ti16-8k-u085-fa", "vllm-jethac-p520-gemma3-1b-bf16-5060ti16-8k-u060-fa"]
    for i in ids:
        v = parse_version(rows[i]["version"], "vllm")
        assert v is not None and not at_least(v, 0, 26), (i, rows[i]["version"])
