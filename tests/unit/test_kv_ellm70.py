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
