"""Task ellm70 (kv-accuracy round 92, batch 96 after its first sight).

The gateway post's Qwen3-0.6B-FP8 pod runs the vllm/vllm-openai:v0.11.0 image. That image installs FlashInfer (its
Dockerfile: flashinfer-cubin / flashinfer-jit-cache), and V1's TopKTopPSampler before vllm#26859 ("Disable FlashInfer
sampler by default", 2025-10-14, after 0.11.0) samples with FlashInfer whenever it is importable and
VLLM_USE_FLASHINFER_SAMPLER is not 0 ("In V1, None means True", v1/sample/ops/topk_topp_sampler.py, read in
1CatAI/1Cat-vLLM at e66d787bc^). The row now says so (input vllm_sampler "flashinfer"); kv's default is the native sort.

By hand (Qwen3-0.6B: 28 layers, 8 KV heads of 128, vocabulary 151,936; vLLM 0.11.0 V1, 256 sequences by default on a
card under 70 GiB, graphs outside the share before 0.20):
  sampler warm-up, FlashInfer: 256 x 151,936 x 4 B x 3 copies = 466,747,392 B (the forward of 2048 tokens is smaller:
      2048 x (3 x 3072 + 2 x 1024) x 2 x 1.08 = 49.8 MB); native, 9.7 copies: int(155,582,464 x 9.7) = 1,509,149,900 B
  pool: share 20,106,352,526 - weights 762,183,680 - sampler 466,747,392 - non-torch 64,424,509 = 18,812,996,945 B;
      per token 28 x 8 x 128 x 2 x 2 B = 114,688 B: 164,037.5 tokens, 10,252 blocks of 16 = 164,032 tokens against
      163,472 printed (+0.3 %); with the native sampler 17,770,594,437 B: 154,948.4 tokens, 9,684 blocks = 154,944
      (-5.2 %, the first sight's figure).
"""
import json

ROW = "vllm-ddiiwoong-qwen3-06b-fp8-l4-8k-u085-prefix"
FLASHINFER = 256 * 151_936 * 4 * 3
NATIVE = int(256 * 151_936 * 4 * 9.7)


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_hand_figures():
    assert FLASHINFER == 466_747_392
    assert NATIVE == 1_509_149_900
    assert 20_106_352_526 - 762_183_680 - FLASHINFER - 64_424_509 == 18_812_996_945
    assert 18_812_996_945 // 114_688 // 16 * 16 == 164_032
    assert (18_812_996_945 + FLASHINFER - NATIVE) // 114_688 // 16 * 16 == 154_944


def test_row_names_the_images_sampler():
    b, rows = _rows()
    row = rows[ROW]
    assert row["input"].get("vllm_sampler") == "flashinfer"
    assert "vllm#26859" in row["inferred"]["vllm_sampler"]


def test_pool_with_the_flashinfer_sampler():
    b, rows = _rows()
    from llm_score import _plan
    _, res = _plan(rows[ROW])
    assert res["overhead"]["activation_profile"] == FLASHINFER
    assert res["weights"] == 762_183_680 and res["overhead"]["non_torch"] == 64_424_509
    s = b.score(rows[ROW])
    assert s["kv_tokens"] == (164_032, 163_472)
    # the same row without the key: kv's native default, the first sight's pool
    plain = dict(rows[ROW], input={k: v for k, v in rows[ROW]["input"].items() if k != "vllm_sampler"})
    assert _plan(plain)[1]["overhead"]["activation_profile"] == NATIVE
    assert b.score(plain)["kv_tokens"] == (154_944, 163_472)


HAMI = "vllm-ddiiwoong-qwen25-15b-bf16-l4-hami8000mib-2k-u080"


def test_hami_slice_total_is_the_limit():
    """HAMi-core's cuMemGetInfo_v2 hook (src/cuda/memory.c, Project-HAMi/HAMi-core 8f3a89c) answers total =
    min(limit, the card's total), the limit parsed from CUDA_DEVICE_MEMORY_LIMIT as 8000 x 1024 x 1024 bytes
    (get_limit_from_env): vLLM's total is 8,388,608,000 B = 7.8125 GiB, not 7.81.
    The pool by hand (vLLM 0.28.0, Qwen2.5-1.5B: 28 layers x 2 KV heads x 128 x 2 x 2 B = 28,672 B a token):
      share 0.80 x 8,388,608,000 = 6,710,886,400 B; less kv's weights 3,095,817,216, sampler 256 x 151,936 x 4 x 3.85
      = 598,992,486, non-torch 64,424,509 and graphs 536,870,912 (inside the share from 0.20): 2,414,781,277 B =
      84,220.9 tokens, 5,263 blocks = 84,208 (84,144 with 7.81 GiB) against 109,264 printed: still -22.9 %, left open
      (the printed figures leave 6.25 - 2.98 - 2.92 = 0.35 GiB for activation, non-torch memory and graphs)."""
    assert 8000 * 2**20 / 2**30 == 7.8125
    assert int(0.8 * 8000 * 2**20) == 6_710_886_400
    assert int(256 * 151_936 * 4 * 3.85) == 598_992_486
    assert 6_710_886_400 - 3_095_817_216 - 598_992_486 - 64_424_509 - 536_870_912 == 2_414_781_277
    assert 2_414_781_277 // 28_672 // 16 * 16 == 84_208
    b, rows = _rows()
    row = rows[HAMI]
    assert row["vram_gib"] == 7.8125
    assert b.score(row)["kv_tokens"] == (84_208, 109_264)
