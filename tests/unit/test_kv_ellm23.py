"""Task ellm23 (kv-accuracy round 48): batch 55 read after its first sight. Each test fails when its rule is broken on
purpose (the commit says how). Expected values are worked here from the model's geometry and the runs' printed
figures, not taken from kv."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

# Gemma 4 12B (Gemma4UnifiedForConditionalGeneration): 8 full-attention layers of one 512-wide KV head (kept whole on
# each GPU), 40 sliding layers of 8 KV heads x 256 (4 a GPU at TP 2); SGLang allocates K and V apart (the printed V size
# equals the K size), bf16: 2 bytes a value
G12_FULL_TP2 = 8 * 1 * 512 * 2 * 2
G12_SLIDING_TP2 = 40 * 4 * 256 * 2 * 2


def _gemma12_sglang(ratio):
    # mattbucci's 2x 3090 A1 ladder (SGLang 0.5.12, TP 2, --mem-fraction-static 0.85, one request; no max_num_seqs:
    # vLLM's setting, which plan() refuses for SGLang since fix26b and which changed nothing here before)
    return llm.plan(llm.describe(model="google/gemma-4-12B-it"), "sglang", ctx=262144, parallel=1, weights_dtype="awq",
                    tensor_parallel_size=2, mem_fraction_static=0.85, swa_full_tokens_ratio=ratio,
                    vram=23.56 * GiB)


# 1. SGLang gives Gemma 4 12B (gemma4_unified) its hybrid sliding-window pools, as it does Gemma 4's other sizes: the
# runs print "Use sliding window memory pool. full_layer_tokens=102094, swa_layer_tokens=81675" (ratio 0.8) and
# "SWAKVPool mem usage: 14.02 GB". kv refused --swa-full-tokens-ratio for that size ("has none"), and without the ratio
# sized every sliding layer like a full one. Breaking it: gemma4_unified* out of sglang.HYBRID_SWA_ARCHS.
def test_sglang_gemma4_12b_has_a_sliding_window_pool():
    for ratio in (0.8, 0.25, 0.03):
        r = _gemma12_sglang(ratio)
        assert r["kv_per_token"] == int(G12_FULL_TP2 + ratio * G12_SLIDING_TP2), (ratio, r["kv_per_token"])
    # the printed pool at ratio 0.8: 102094 full-layer tokens at that per-token price are the printed 14.02 GiB
    assert round(102094 * (G12_FULL_TP2 + 0.8 * G12_SLIDING_TP2) / GiB, 2) == 14.02
    # without the ratio, SGLang's default 0.8, not a full-size cache of every sliding layer
    r = llm.plan(llm.describe(model="google/gemma-4-12B-it"), "sglang", ctx=262144, parallel=1, weights_dtype="awq",
                 tensor_parallel_size=2, vram=23.56 * GiB)
    assert r["kv_per_token"] == int(G12_FULL_TP2 + 0.8 * G12_SLIDING_TP2)


# 2. Phi-3-mini-128k-instruct is Phi-3-mini-4k's geometry with 131072 positions: Ollama 0.15.5 prints n_ctx_train=131072
# for its GGUF and allocates 49152.00 MiB of f16 cache at 131072 cells (32 layers x 2 x 3072 x 2 bytes a cell; batch 55,
# MarvellianRohit/Nexus-AI). kv read the '-mini-128k' tag as the 4k model and lowered the context to 4096 (1536 MiB).
# Breaking it: the Phi-3-mini-4k row out of names.RELEASE_CONTEXT.
def test_phi3_mini_128k_keeps_its_131072_positions():
    for name in ("phi3:3.8b-mini-128k-instruct-q4_0", "microsoft/Phi-3-mini-128k-instruct"):
        assert llm.describe(model=name).max_ctx == 131072, name
    r = llm.plan(llm.describe(model="phi3:3.8b-mini-128k-instruct-q4_0"), "ollama", ctx=131072, parallel=1,
                 vram=107.0 * GiB, runtime_version="0.15.5")
    assert r["ctx"] == 131072
    assert r["kv_total"] == 32 * 2 * 3072 * 2 * 131072  # 49152 MiB, the printed Metal KV buffer
    # the 4k release and the library's plain tag stay at 4096
    for name in ("microsoft/Phi-3-mini-4k-instruct", "phi3:mini", "phi3:3.8b-mini-4k-instruct-q4_0"):
        assert llm.describe(model=name).max_ctx == 4096, name
