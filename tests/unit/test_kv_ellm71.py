"""Task ellm71 (kv-accuracy round 93, batch 97 after its first sight).

99sono's Gemma-4-26B-A4B NVFP4 start at 256,000 tokens on an RTX 5090 (vLLM 0.19.2rc1.dev8+g4b7f5ea1a) passes
--moe-backend cutlass and prints "Using 'VLLM_CUTLASS' NvFp4 MoE backend": the experts run vLLM's own
CutlassExpertsFp4 (fused_moe/cutlass_moe.py at 4b7f5ea1a, read in 1CatAI/1Cat-vLLM). Its profile forward holds per
token, K = hidden 2816, N = moe_intermediate 704, topk 8:
  16-bit: workspace1 topk x max(2N, K) = 8 x 2816, workspace2 topk x N = 8 x 704, the input shuffled into expert order
      topk x K, the down output un-shuffled topk x K, its product with the router weights topk x K, the sum K and the
      output K: 8 x (3 x 2816 + 2816 + 704) + 2 x 2816 = 101,376 values; plus the layer's 5 hidden-size tensors (the
      Triton term's 5d) 14,080: 115,456 values = 230,912 B
  8-bit: the input's fp4 copy and block scales 8 x (1408 + 176), the intermediate's 8 x (352 + 44):
      8 x 9 x (2816 + 704) / 16 = 15,840 B
  = 246,752 B a token, against the Triton path's (8 x (3 x 704 + 2816) + 5 x 2816) x 2 = 107,008.
The pool by hand (share 0.85 x 31.36 GiB = 28,621,662,061 B; kv's weights 16,827,008,512; non-torch 64,424,509; graphs
outside the share before 0.20):
  profile forward of 16,384 tokens: 16,384 x 246,752 = 4,042,784,768 B (the sampler on 2 rows with the MoE workspace
      held, 8,074,035 + 1,476,395,008, and the vision tower's 92,897,280 are smaller)
  available 28,621,662,061 - 16,827,008,512 - 4,042,784,768 - 64,424,509 = 7,687,444,272 B = 7.159 GiB against 7.15
      printed; with the Triton term (16,384 x 107,008 = 1,753,219,072 B) 9,977,009,968 B = 9.292 GiB, the first
      sight's figure (KV tokens 81,184 against 62,496: +29.9 %; now 62,560: +0.1 %).
Since task kv53 the Triton path's forward is at least the expert workspace and the 5 hidden-size tensors (vLLM's
WorkspaceManager from 0.19, vllm_activation.FORWARD_IN_WORKSPACE): 8 x (max(704, 2816) + max(1408, 2816)) x 2 +
5 x 2816 x 2 = 90,112 + 28,160 = 118,272 B a token, above 107,008 (TRITON_HELD); the pool without --moe-backend is
28,621,662,061 - 16,827,008,512 - 16,384 x 118,272 (1,937,768,448) - 64,424,509 = 9,792,460,592 B = 9.120 GiB.
"""
import json

ROW = "vllm-99sono-gemma4-26b-a4b-redhatnvfp4-5090-256k-u085-fp8kv-mns2"
CUTLASS = (8 * (3 * 2816 + max(2 * 704, 2816) + 704) + 2 * 2816 + 5 * 2816) * 2 + 8 * 9 * (2816 + 704) // 16
TRITON = (8 * (3 * 704 + 2816) + 5 * 2816) * 2
TRITON_HELD = 8 * (2816 + 2816) * 2 + 5 * 2816 * 2


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_hand_figures():
    assert CUTLASS == 246_752 and TRITON == 107_008
    assert 16_384 * CUTLASS == 4_042_784_768 and 16_384 * TRITON == 1_753_219_072
    assert 28_621_662_061 - 16_827_008_512 - 4_042_784_768 - 64_424_509 == 7_687_444_272
    assert round(7_687_444_272 / 2**30, 3) == 7.159
    assert round((7_687_444_272 + 4_042_784_768 - 1_753_219_072) / 2**30, 3) == 9.292
    assert TRITON_HELD == 118_272 and 16_384 * TRITON_HELD == 1_937_768_448
    assert 28_621_662_061 - 16_827_008_512 - 1_937_768_448 - 64_424_509 == 9_792_460_592
    assert round(9_792_460_592 / 2**30, 3) == 9.12


def test_cutlass_fp4_per_token():
    from gpu_garden.memory.llm.names import load_builtin
    from gpu_garden.memory.llm.runtimes.vllm_activation import activation, cutlass_fp4_per_token
    spec = load_builtin("google/gemma-4-26B-A4B-it")
    assert cutlass_fp4_per_token(spec) == CUTLASS
    kw = dict(version=(0, 19, 2), v1=True, max_model_len=256_000, weights_format="nvfp4")
    assert activation(spec, 16_384, 2, moe_backend="cutlass", **kw) == 16_384 * CUTLASS
    # vLLM's own pick (FlashInfer's backends first) and a checkpoint that is not NVFP4 keep the Triton term
    assert activation(spec, 16_384, 2, **kw) == 16_384 * TRITON_HELD
    assert activation(spec, 16_384, 2, moe_backend="cutlass", **dict(kw, weights_format="awq")) == 16_384 * TRITON_HELD


def test_row_pool_with_the_cutlass_experts():
    b, rows = _rows()
    row = rows[ROW]
    assert row["input"]["moe_backend"] == "cutlass"
    from llm_score import _plan
    _, res = _plan(row)
    assert res["overhead"]["activation_profile"] == 4_042_784_768
    assert res["weights"] == 16_827_008_512 and res["overhead"]["non_torch"] == 64_424_509
    s = b.score(row)
    assert s["kv_available_gib"] == (7.159, 7.15)
    assert s["kv_tokens"] == (62_560, 62_496)
    plain = dict(row, input={k: v for k, v in row["input"].items() if k != "moe_backend"})
    assert b.score(plain)["kv_available_gib"] == (9.12, 7.15)  # the first sight's 9.292 before task kv53


def test_moe_backend_is_read_by_vllm_only():
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.names import load_builtin
    with pytest.raises(UserError, match="moe_backend"):
        llm.plan(load_builtin("google/gemma-4-26B-A4B-it"), "llama.cpp", ctx=4096, vram=32 * 2**30, moe_backend="cutlass")


def test_command_keeps_the_moe_backend():
    """The plan is sized for the backend asked, so the command it prints passes it on (vLLM's --moe-backend)."""
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.names import load_builtin
    kw = dict(ctx=256_000, vram=int(31.36 * 2**30), weights_dtype="nvfp4", max_num_batched_tokens=16_384,
              max_num_seqs=2, runtime_version="0.19.2", kv_dtype="fp8", gpu_memory_utilization=0.85)
    spec = load_builtin("google/gemma-4-26B-A4B-it")
    assert llm.plan(spec, "vllm", moe_backend="cutlass", **kw)["command"].endswith(" --moe-backend cutlass")
    assert "--moe-backend" not in llm.plan(spec, "vllm", **kw)["command"]
