"""Task ellm66 (kv-accuracy round 88, batch 92 after its first sight).

SGLang's aiter cut of --mem-fraction-static: server_args.py _handle_attention_backend_compatibility ("# AMD platforms
backends", read in akao-amd/sglang at cf772ab4, 2026-05-05):

    if self.attention_backend == "aiter":
        if model_config.context_len > 8192:
            self.mem_fraction_static *= 0.85

(sgl-project/sglang#6564, 2025-05-24, first in v0.4.7, then in model_runner.py; moved to server_args by #12136 at 0.90
and set back to 0.85 by #12317 four days later, both before v0.5.5). _get_default_attn_backend picks aiter on ROCm for
an MHA model (`elif is_hip(): return "aiter"`), for an MLA model only with 16 or 128 KV heads a GPU (else triton).
Batch 92's MI355X starts of Qwen3.8-27B-FP8 at --mem-fraction-static 0.85 print 'aiter attention chosen by SGLang'
and context_len=262144: their pools are sized at 0.85 x 0.85 = 0.7225.
"""
import json
from types import SimpleNamespace

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes.sglang import aiter_factor

TP1 = "sglang-otel-qwen38-27b-fp8-mi355x-tp1-262k-mf085-mrr32"
TP2 = "sglang-otel-qwen38-27b-fp8-2xmi355x-tp2-262k-mf085-mrr32"
MI355X = "AMD Instinct MI355X 288 GB (gfx950)"
MHA = SimpleNamespace(mla=False, n_kv_heads=8)


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_aiter_factor_follows_server_args():
    new = None  # no version: the newest
    assert aiter_factor(MHA, 262144, 1, MI355X, new) == 0.85           # ROCm, SGLang's pick aiter, context > 8192
    assert aiter_factor(MHA, 8192, 1, MI355X, new) == 1.0              # context_len > 8192 only
    assert aiter_factor(MHA, 8193, 1, MI355X, new) == 0.85
    assert aiter_factor(MHA, 262144, 1, "NVIDIA H100 80GB HBM3", new) == 1.0  # CUDA: fa3 / flashinfer / triton
    assert aiter_factor(MHA, 262144, 1, MI355X, new, "triton") == 1.0  # --attention-backend triton given
    assert aiter_factor(MHA, 262144, 1, "NVIDIA H100", new, "aiter") == 0.85  # given aiter counts wherever it runs
    assert aiter_factor(MHA, 262144, 1, MI355X, parse_version("0.4.6")) == 1.0   # before sglang#6564
    assert aiter_factor(MHA, 262144, 1, MI355X, parse_version("0.4.7")) == 0.85
    # MLA on ROCm: aiter only with 16 or 128 KV heads a GPU (Kimi's 64 at TP 8 = 8: triton, as its row prints)
    assert aiter_factor(SimpleNamespace(mla=True, n_kv_heads=64), 262144, 8, MI355X, new) == 1.0
    assert aiter_factor(SimpleNamespace(mla=True, n_kv_heads=128), 262144, 8, MI355X, new) == 0.85
    assert aiter_factor(SimpleNamespace(mla=True, n_kv_heads=128), 262144, 1, MI355X, new) == 0.85


def test_otel_mi355x_tp1_pool_by_hand():
    # vram 287.98 GiB = 309,216,170,475 B; free0 = that - 512 MiB CUDA context = 308,679,299,563 B.
    # fraction 0.85 (given) x 0.85 (aiter, context 262144 > 8192) = 0.7225: budget 223,020,793,934 B.
    # rest = budget - kv's weights 30,360,924,128 B = 192,659,869,806 B.
    # mamba_cache_per_req = 48 DeltaNet layers x (30,720 conv values x 2 B + 786,432 state values x 4 B)
    #   = 48 x 3,207,168 = 153,944,064 B (the printed 146.81 MB); the 0.9 split: 192,659,869,806 x 0.9 / 1.9
    #   = 91,259,938,329 B -> 592 states = 91,134,885,888 B; the KV pool 101,524,983,918 B.
    # cell = 16 full-attention layers x 4 KV heads x 256 x (K + V) x 2 B = 65,536 B -> 1,549,148 tokens
    # (printed 1,543,256: +0.38 %). At 0.85 alone (the change reverted) it is 1,865,453 (+20.9 %).
    b, rows = _rows()
    s = b.score(rows[TP1])
    assert "error" not in s
    assert tuple(s["sglang_tokens"]) == (1549148, 1543256)


def test_otel_mi355x_tp2_pool_by_hand():
    # per GPU: budget 222,919,942,733 B at 0.7225 (kv's free0 at TP 2 also takes NCCL's 0.13 GiB); weights
    # 15,180,462,064 B; rest 207,739,480,669 B; per_req halves with the heads (76,972,032 B): the 0.9 split
    # 98,403,438,212 B -> 1278 states = 98,370,256,896 B; KV pool 109,369,223,773 B / 32,768 B (2 KV heads a GPU)
    # = 3,337,683 tokens (printed 3,228,418: +3.4 %; the run's free memory before the load was 8 GiB below TP1's)
    b, rows = _rows()
    s = b.score(rows[TP2])
    assert tuple(s["sglang_tokens"]) == (3337683, 3228418)


def test_triton_given_keeps_the_fraction():
    # the same start with --attention-backend triton: no cut, the 0.85 pool of first sight (1,865,453 tokens), and
    # the command carries the backend
    b, rows = _rows()
    row = rows[TP1]
    row = dict(row, input=dict(row["input"], attention_backend="triton"))
    _, res = b._plan(row)
    assert res["sglang_max_total_tokens"] == 1865453
    assert "--attention-backend triton" in res["command"]
    assert not any("aiter attention backend" in n for n in res["notes"])


def test_attention_backend_is_sglangs_only():
    from gpu_garden.memory.llm.plan_checks import check_names
    check_names("sglang", {"attention_backend": "triton"})
    with pytest.raises(UserError, match="attention_backend"):
        check_names("vllm", {"attention_backend": "triton"})
