"""Task ellm80 (kv-accuracy round 102, batch 108 after its first sight).

The vLLM fork row c108-vllm-vllmhybrid-qwen25-1.5b-bf16-h100kvm-512-u090default-eager prints 'V1 LLM engine
(v0.1.dev8475+g78fa48cb8)': setuptools-scm's untagged form names no release, so kv read it as the newest vLLM. The
fork's history at 78fa48cb8 (git rev-list --count: 8475) holds upstream main up to 2025-08-07 (#22131), after the
v0.10.0 cut (#20544, 'for v0.10.0', 2025-07-24): the row now says 'based on 0.10.0' (a row input, not a formula).

Qwen2.5-1.5B-Instruct (vocab 151,936, 28 layers, 2 KV heads x 128) on an H100 (79.19 GiB), LLM class, 0.9, eager:
  the LLM class on an H100 profiles max_num_seqs 1024 rows of fp32 logits in the sampler warm-up;
  0.10.0 (PyTorch-native top-k/top-p, the log's 'Falling back to the PyTorch-native implementation'): 9.7 copies
    1024 x 151,936 x 4 B = 622,329,856 B; x 9.7 = 6,036,599,603 B (5.62 GiB)
  newest (Triton masking, vllm#33538, from 0.16): x 3.85 = 2,395,969,945 B (2.23 GiB)
  pool at 0.10.0: budget 0.9 x 79.19 GiB = 76,526,653,538 B - weights 3,095,817,216 - 6,036,599,603 - non-torch
    150,323,855 = 67,243,912,864 B; / 28,672 B a token (28 x 2 x 128 x 2 B x K+V) = 2,345,281.2 -> 2,345,280 tokens in
    16-token blocks; the log prints 62.71 GiB and 2,348,496 tokens (-0.14 %), where the newest reading gave 2,468,128
    (+5.1 %).
"""
import json
from pathlib import Path

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version

GiB = 1 << 30
ROW = "c108-vllm-vllmhybrid-qwen25-1.5b-bf16-h100kvm-512-u090default-eager"
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "llm_measured.json"


def _row():
    return next(r for r in json.loads(DATA.read_text())["rows"] if r["id"] == ROW)


def _plan(version):
    spec = llm.describe(model="Qwen/Qwen2.5-1.5B-Instruct")
    return llm.plan(spec, "vllm", ctx=512, weights_dtype="bf16", vram=int(79.19 * GiB), gpu_memory_utilization=0.9,
                    enforce_eager=True, vllm_entrypoint="llm", runtime_version=version,
                    gpu_name="NVIDIA H100 80GB HBM3")


def test_fork_row_reads_as_the_release_its_history_holds():
    row = _row()
    assert parse_version(row["version"], "vllm") == (0, 10, 0)
    assert parse_version("0.1.dev8475+g78fa48cb8", "vllm") is None  # the bare form: the newest


def test_fork_row_pool_at_its_release():
    p = _plan(_row()["version"])
    assert p["overhead"]["activation_profile"] == 6_036_599_603  # 1024 x 151,936 x 4 x 9.7
    assert p["kv_capacity_bytes"] == 67_243_912_864
    assert p["kv_capacity_tokens"] == 2_345_280
    assert abs(p["kv_capacity_tokens"] / 2_348_496 - 1) < 0.002  # the printed pool
    newest = _plan("0.1.dev8475+g78fa48cb8")
    assert newest["overhead"]["activation_profile"] == 2_395_969_945  # x 3.85
    assert newest["kv_capacity_tokens"] == 2_468_128
