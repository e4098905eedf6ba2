"""Task ellm21b (kv-accuracy round 46): batch 53 read after its first sight. Each test fails when its rule is broken
on purpose (the commit says how). Expected values are computed here from the config.json figures, not by kv."""
from gpu_garden.memory.llm import kv as llm

# Gemma-4-31B's published config.json: vocab 262144, hidden 5376, tied; vision_config 27 layers of 1152 (16 heads x
# 72), intermediate 4304, patch 16, position_embedding_size 10240
VOCAB, HIDDEN = 262144, 5376
TABLE = VOCAB * HIDDEN * 2                                   # the token table in 16 bits
D, FF, N = 1152, 4304, 27
TOWER_MATMULS = N * (4 * D * (16 * 72) + 3 * D * FF)         # q k v o and the gated MLP of each encoder layer
TOWER_REST = N * 4 * D + 3 * 16 * 16 * D + 2 * 10240 * D + D * HIDDEN   # norms, patch proj, position table, projection


def _sglang(model, tp, wd="awq"):
    s = llm.describe(model=model)
    return llm.plan(s, "sglang", ctx=4096, parallel=1, weights_dtype=wd, tensor_parallel_size=tp,
                    mem_fraction_static=0.85, vram=24 << 30, gpu_name="NVIDIA GeForce RTX 3090",
                    runtime_version="0.5.12")


# 1. SGLang's Gemma 4 vision tower at tensor parallel 2 (models/gemma4_vision.py: the encoder's QKV, o and gate/up/
# down are parallel linears; the patch embedder, position table, norms and gemma4_mm.py's ReplicatedLinear projection
# are not). Before round 46 SGLang took vLLM's "whole tower" row, which adds the tower for vLLM only: no tower at all.
# At TP 1 the tower is whole (T1 = decoder + table + matmuls + rest); at TP 2, one GPU holds (decoder + matmuls) / 2 +
# the table + the rest, so T2 - T1 / 2 = table / 2 + rest / 2. Breaking it: SGLang back to "whole" in TOWER_TP_SPLIT
# leaves T2 - T1/2 short by (matmuls + rest) / 2 (0.27 GiB); the token table split (rule 2 off) short by table / 2.
def test_sglang_gemma4_tower_encoder_split_over_tp():
    one, two = _sglang("google/gemma-4-31B-it", 1), _sglang("google/gemma-4-31B-it", 2)
    got = two["weights"] - one["weights"] / 2
    assert abs(got - (TABLE + 2 * TOWER_REST) / 2) < 4096, (got, (TABLE + 2 * TOWER_REST) / 2)
    assert any(n.startswith("vision tower: its encoder matmuls split over the 2 GPUs") for n in two["notes"])
    # vLLM keeps its own row: the tower whole on every GPU (its two Gemma 4 TP runs), unchanged here
    s = llm.describe(model="google/gemma-4-31B-it")
    v = llm.plan(s, "vllm", ctx=4096, parallel=1, weights_dtype="bf16", tensor_parallel_size=2, vram=24 << 30)
    assert any(n.startswith("vision tower counted whole on every GPU") for n in v["notes"])


# 2. SGLang's Gemma 3 / Gemma 4 token table is a plain nn.Embedding (gemma3_causal.py Gemma3TextScaledWordEmbedding,
# which gemma4_causal.py aliases): the whole table on each TP GPU. Other decoders keep VocabParallelEmbedding's split.
# Breaking it (WHOLE_TOKEN_TABLE emptied) halves the Gemma rows' embedding.
def test_sglang_gemma_token_table_whole_on_each_gpu():
    for tp in (2, 4):
        assert _sglang("google/gemma-4-31B-it", tp)["weights_by_role"]["embedding"] == TABLE
    g3 = _sglang("google/gemma-3-27b-it", 2, wd="bf16")   # Gemma 3 27B: vocab 262208, hidden 5376
    assert g3["weights_by_role"]["embedding"] == 262208 * 5376 * 2
    assert any("token table as a plain embedding" in n for n in g3["notes"])
    llama = _sglang("meta-llama/Llama-3.1-8B-Instruct", 2, wd="bf16")   # VocabParallelEmbedding: split
    assert llama["weights_by_role"]["embedding"] == 128256 * 4096 * 2 // 2
    assert not any("token table as a plain embedding" in n for n in llama["notes"])
