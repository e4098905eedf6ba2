"""Task ellm30 (kv-accuracy round 54): EAGLE and EAGLE-3 drafters in `kv --speculative-config` (batch 61's four
manojarulmurugan/SpecDecoding-Study-vLLM-SGLang runs, vLLM 0.24 on A100s). Each test fails when its rule is broken on
purpose (the commit says how). Expected values are worked here by hand from the drafters' config.json
(benchmarks/data/drafters/, SafeAILab/EAGLE's copies) and vLLM's llama_eagle.py / llama_eagle3.py, not taken from kv."""
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import cache, kv as llm
from gpu_garden.memory.llm.runtimes import vllm_drafter as VD
from gpu_garden.memory.units import GiB

DRAFTERS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "drafters"
EAGLE = str(DRAFTERS / "EAGLE-LLaMA3-Instruct-8B")
EAGLE3 = str(DRAFTERS / "EAGLE3-LLaMA3.1-Instruct-8B")


# 1. EAGLE (yuhuili/EAGLE-LLaMA3-Instruct-8B: one Llama layer, hidden 4096, 32 heads, 8 KV heads of 128, MLP 14336,
# float16). vLLM keeps its layer and its fc (2 x 4096 -> 4096); token table and head are the target's
# (_maybe_share_embeddings / _maybe_share_lm_head for method "eagle"). By hand, in values:
#   q 4096 x 4096 = 16,777,216; k, v 4096 x 1024 = 4,194,304 each; o 16,777,216; gate, up, down 3 x 4096 x 14336 =
#   176,160,768; fc 8192 x 4096 = 33,554,432: 251,658,240 values x 2 bytes = 503,316,480 bytes (480 MiB).
# The run's 'Model loading took 15.43 GiB' less Llama-3-8B's 8,030,261,248 values in 16 bits (14.958 GiB) leaves
# 0.47 GiB: 480 MiB is 0.469 GiB. Breaking it: drop the "eagle" row of vllm_drafter.DRAFTER_METHODS (refused), or
# give it own_head True (a 128,256-row head more: about 1 GiB).
def test_eagle_drafter_weights_are_its_layer_and_fc():
    g = VD.read_drafter("eagle", EAGLE)
    assert VD.weight_bytes(g, 1) == 503_316_480
    assert abs((15.43 * GiB - 8_030_261_248 * 2) - 503_316_480) < 0.01 * GiB


# 2. EAGLE-3 (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, same layer geometry, draft_vocab_size 32000): its first layer's
# q/k/v read 2 x 4096 (embedding and hidden state concatenated, llama_eagle3.py qkv_input_size), its fc reads 3 x 4096,
# and it keeps its own 32,000-row head and an int64 draft-to-target map of 32,000. By hand:
#   q 8192 x 4096 = 33,554,432; k, v 8192 x 1024 = 8,388,608 each; o 16,777,216; MLP 176,160,768; fc 12288 x 4096 =
#   50,331,648: 293,601,280 values x 2 = 587,202,560 bytes; head 32,000 x 4096 x 2 = 262,144,000; map 32,000 x 8 =
#   256,000. Sum 849,602,560 bytes (0.791 GiB). At TP 2 the layer and the head split, the fc and the map do not:
#   243,269,632 + 100,663,296 + 131,072,000 + 256,000 = 475,260,928.
# Breaking it: qkv_in 1 for "eagle3" (-67,108,864 bytes at TP 1), or own_head False (-262,400,000).
def test_eagle3_drafter_weights_count_the_wide_qkv_and_its_own_head():
    g = VD.read_drafter("eagle3", EAGLE3)
    assert VD.weight_bytes(g, 1) == 849_602_560
    assert VD.weight_bytes(g, 2) == 475_260_928


# 3. The drafter's layer caches K and V like a target layer: 8 KV heads x 128 x 2 (K and V) x 2 bytes = 4096 bytes a
# token in 16 bits, 2048 at fp8. The runs print it: 46.77 GiB / 371,536 tokens = 135,170 bytes a token = 33 layers x
# 4096 (Llama-3-8B's 32 and the drafter's 1), and 50.27 GiB / 399,360 = 135,160 for EAGLE-3 on Llama-3.1-8B.
def test_draft_layer_kv_bytes_per_token():
    g = VD.read_drafter("eagle3", EAGLE3)
    assert cache.draft_token_bytes(VD.drafter_for_rank(g, 1), "f16") == 4096
    assert cache.draft_token_bytes(VD.drafter_for_rank(g, 1), "fp8") == 2048
    assert cache.draft_token_bytes(VD.drafter_for_rank(g, 2), "f16") == 2048
    assert round(46.77 * GiB / 371536 / 4096) == 33 and round(50.27 * GiB / 399360 / 4096) == 33


# 4. With an attention-only target the drafter's layer takes the same 16-token page as each target layer: a pool of
# 33 x 65,536 x 1000 bytes holds 1000 blocks of every one of the 33 layers, 16,000 tokens (blocks // groups x 16).
def test_eagle_layer_joins_an_attention_only_pool():
    spec = llm.vllm_per_rank(llm.describe(model="meta-llama/Meta-Llama-3-8B-Instruct"), 1)
    d = VD.drafter_for_rank(VD.read_drafter("eagle", EAGLE), 1)
    pool = cache.vllm_pool(spec, 33 * 65536 * 1000, "f16", 4096, drafter=d, tokens_from_concurrency=False)
    assert pool["blocks"] == 33000 and pool["tokens"] == 16000


# 5. The plan: batch 61's EAGLE row (Llama-3-8B fp16, 4096, 0.8 of an A100 80GB) counts the drafter's 480 MiB in the
# weights and says the head is the target's; EAGLE-3's note names its own head.
def test_plan_counts_the_drafter_and_names_it():
    base = dict(ctx=4096, parallel=1, weights_dtype="fp16", gpu_memory_utilization=0.8, runtime_version="0.24.0",
                vram=79.25 * GiB)
    spec = llm.describe(model="meta-llama/Meta-Llama-3-8B-Instruct")
    alone = llm.plan(spec, "vllm", **base)
    with_eagle = llm.plan(spec, "vllm", speculative_config={"method": "eagle", "model": EAGLE,
                                                            "num_speculative_tokens": 5}, **base)
    assert with_eagle["weights"] - alone["weights"] == 503_316_480
    notes = " ".join(with_eagle["notes"])
    assert "token table and head the target's" in notes
    r3 = llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm",
                  speculative_config={"method": "eagle3", "model": EAGLE3, "num_speculative_tokens": 5}, **base)
    assert "own 32000-row head" in " ".join(r3["notes"])


# 6. Methods without a row stay refused with the reason, and an EAGLE-3 config read as EAGLE (or the reverse) is not
# silently sized: the method picks the row, the config's architectures must be one it reads.
def test_other_methods_stay_refused():
    with pytest.raises(UserError, match="not modelled"):
        VD.parse({"method": "draft_model", "model": EAGLE, "num_speculative_tokens": 3})
    with pytest.raises(UserError, match="is read for"):
        VD.read_drafter("eagle", str(DRAFTERS / "Qwen3.6-35B-A3B-DFlash"))
