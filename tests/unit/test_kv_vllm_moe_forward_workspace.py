"""Task kv53: a fused-MoE profile forward holds vLLM's expert workspace (runtimes/vllm_activation.FORWARD_IN_WORKSPACE).

From 0.19 TritonExperts takes its intermediates from the WorkspaceManager: workspace13 (M, top-k, max(I, hidden)) and
workspace2 (M, top-k, max(2I, hidden)) hold the gate/up output, the activation and the down output between them
(fused_moe.py TritonExperts.apply, modular_kernel._allocate_buffers, vLLM 0.20.2). kv's forward term counted top-k x
(3I + hidden) instead, which is less where a rank's expert share is small (2I < hidden). kv now takes the larger.

Hand-made MoE shapes, by hand (16-bit values, 2 bytes; the layer's 5 hidden-size tensors on top in both terms):
  A: hidden 4096, I 384 (Qwen3-235B-A22B's 1536 at tensor parallel 4), top-8
     old forward: (8 x (3 x 384 + 4096) + 5 x 4096) x 2 = (41,984 + 20,480) x 2 = 124,928 B a token
     workspace:   8 x (max(384, 4096) + max(768, 4096)) x 2 = 8 x 8192 x 2 = 131,072 B a token
     new forward: 131,072 + 5 x 4096 x 2 = 131,072 + 40,960 = 172,032 B a token
  B: hidden 2048, I 1536, top-8 (I > hidden / 3: the old term is the larger and stays)
     old forward: (8 x (4608 + 2048) + 10,240) x 2 = (53,248 + 10,240) x 2 = 126,976 B a token
     new forward: 8 x (2048 + 3072) x 2 + 20,480 = 81,920 + 20,480 = 102,400 B a token
"""
import pytest

OLD_A, WS_A, NEW_A = 124_928, 131_072, 172_032
OLD_B, NEW_B = 126_976, 102_400
TOKENS = 32_768
V020, V018 = (0, 20, 0), (0, 18, 0)
ROW_32K = "vllm-kaitaku-qwen3-235b-a22b-2507-fp8-tp4ep-4xh100-240k-u096-mbt32k-seqs128"
ROW_64K = "vllm-kaitaku-qwen3-235b-a22b-2507-fp8-tp4ep-4xh100-240k-u092-mbt64k-seqs128-refused"
GiB = 1 << 30


def _moe(hidden, moe_intermediate):
    from gpu_garden.memory.llm.spec import LLMSpec
    # a vocabulary of 1,000: one sequence's sampler warm-up (1,000 x 4 B x 3.85) is far below either forward
    return LLMSpec(name="hand-moe", arch="qwen3_moe", layer_kinds=["full"] * 2, hidden=hidden, n_heads=8, n_kv_heads=2,
                   head_dim_k=128, head_dim_v=128, vocab=1000, n_experts=128, n_experts_per_tok=8,
                   moe_intermediate=moe_intermediate)


def _act(spec, version, **kw):
    from gpu_garden.memory.llm.runtimes.vllm_activation import activation
    return activation(spec, TOKENS, 1, version, v1=True, **kw)


def test_hand_figures():
    assert (8 * (3 * 384 + 4096) + 5 * 4096) * 2 == OLD_A
    assert 8 * (4096 + 4096) * 2 == WS_A and WS_A + 5 * 4096 * 2 == NEW_A
    assert (8 * (3 * 1536 + 2048) + 5 * 2048) * 2 == OLD_B
    assert 8 * (2048 + 3072) * 2 + 5 * 2048 * 2 == NEW_B
    assert TOKENS * NEW_A == 5_637_144_576  # 5.25 GiB


def test_workspace_is_the_forward_where_a_rank_holds_few_expert_columns():
    # breaks with the old term (124,928 a token), or with the workspace alone (131,072: no hidden-size tensors)
    assert _act(_moe(4096, 384), V020) == TOKENS * NEW_A


def test_the_old_term_stays_where_it_is_larger():
    # breaks if the workspace replaces the old term instead of bounding it from below (102,400 a token)
    assert _act(_moe(2048, 1536), V020) == TOKENS * OLD_B


def test_gated_by_the_workspace_manager_release_and_mxfp4():
    # before 0.19 (no WorkspaceManager) and for MXFP4 experts (other kernels) the old term is kept
    assert _act(_moe(4096, 384), V018) == TOKENS * OLD_A
    assert _act(_moe(4096, 384), V020, weights_format="mxfp4") == TOKENS * OLD_A


def test_per_rank_share_reaches_the_term():
    # the plan hands activation() one tensor-parallel rank's experts: I 1536 at TP 4 is the 384 of shape A
    from gpu_garden.memory.llm.runtimes import vllm as V
    spec = _moe(4096, 1536)
    assert V.per_rank(spec, 4).moe_intermediate == 384
    assert _act(V.per_rank(spec, 4), V020) == TOKENS * NEW_A


def _rows():
    import json
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


@pytest.mark.parametrize("row_id, printed, before", [
    # batch 117, kaitakuai/experiments qwen3-235b-vllm020-240k: 'Available KV cache memory: 12.15 GiB' at 32768
    # batched tokens (kv 14.25 before), and the refusal's '(4.15 GiB)' at 65536 (kv 7.09 before)
    (ROW_32K, 12.15, 14.25),
    (ROW_64K, 4.15, 7.09),
])
def test_qwen3_235b_pools_come_closer(row_id, printed, before):
    row = _rows()[row_id]  # load_benchmark puts benchmarks/ on the path
    from llm_score import _capacity, _plan
    _, res = _plan(row)
    tokens = row["input"]["max_num_batched_tokens"]
    # the forward at the batched tokens is the peak (one sequence's 128 x 151,936 x 4 B x 3.85 sampler, 0.28 GiB, is not)
    assert res["overhead"]["activation_profile"] == tokens * (8 * (4096 + 4096) * 2 + 5 * 4096 * 2)
    assert printed < _capacity(res) / GiB < before - 0.7
