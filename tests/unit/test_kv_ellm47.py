"""kv-accuracy round 69 (task ellm47, batch 74 after first sight)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.cache import kv_cache

MiB = 1 << 20


# --- Ollama: gpt-oss's sliding layers in its own engine's allocation ------------------------------------------------
# gpt-oss:20b: 24 layers alternating sliding (window 128) and full attention, 8 KV heads x 64, f16: 2 KiB a token a
# layer. Ollama's engine builds the sliding layers as kvcache.NewSWAMemCache(128, 4096); kvcache/causal.go Init turns
# a memory not smaller than the capacity into the whole num_ctx ("if int(c.swaMemorySize) >= capacity"), else
# parallel x 4096 + one batch of 512.
#   num_ctx 4096 on 0.18.2 (batch 74, MI25 under ROCm): 12 x 4096 + 12 x 4096 cells x 2 KiB = 192.0 MiB, printed
#     'kv cache' device=ROCm0 192.0 MiB (kv had 204.0: 12 x 4608 sliding cells, the 0.11 estimate's GraphSize);
#   num_ctx 8192: 12 x 8192 + 12 x 4608 = 300.0 MiB, as the estimate (ollama/ollama#11711 on 0.11.2 prints 300.0).
def _gptoss():
    return llm.describe(model="gpt-oss:20b")


def test_gptoss_ollama_engine_keeps_num_ctx_when_the_swa_memory_is_not_smaller():
    kvd = kv_cache(_gptoss(), 4096, 1, "f16", "ollama", version=(0, 18, 2))
    assert kvd["sliding_cells"] == 4096
    assert kvd["total"] == 192 * MiB


def test_gptoss_ollama_engine_above_the_swa_memory_keeps_4096_and_a_batch():
    kvd = kv_cache(_gptoss(), 8192, 1, "f16", "ollama", version=(0, 18, 2))
    assert kvd["sliding_cells"] == 4096 + 512
    assert kvd["total"] == 300 * MiB


def test_gptoss_ollama_estimate_before_its_engine_is_measured_is_unchanged():
    # 0.11.2's GraphSize case "gptoss": numParallel x 4096 + batch whatever num_ctx
    kvd = kv_cache(_gptoss(), 4096, 1, "f16", "ollama", version=(0, 11, 2))
    assert kvd["sliding_cells"] == 4096 + 512
    assert kvd["total"] == 204 * MiB


# --- Ollama: the phi4-mini library is Phi-4-mini -----------------------------------------------------------------
# batch 74's RX Vega row loads phi4-mini:latest; the runner prints general.name 'Phi 4 Mini Instruct', arch phi3, 32
# layers, 8 KV heads x 128, Q4_K_M, and a 512.00 MiB f16 cache at 4096 cells (32 x 4096 x 2 x 8 x 128 x 2 bytes).
# kv refused the tag (no library entry) though Phi-4-mini is built in from its config.json.
def test_phi4_mini_library_tag_is_phi4_mini():
    for tag in ("phi4-mini", "phi4-mini:3.8b", "phi4-mini:latest"):
        s = llm.describe(model=tag)
        assert s.name == "Phi-4-mini", tag
    r = llm.plan(llm.describe(model="phi4-mini:3.8b"), "ollama", ctx=4096, parallel=1, vram=7 * (1 << 30),
                 runtime_version="0.17.4")
    assert r["kv_total"] == 512 * MiB


def test_phi4_is_still_not_phi4_mini():
    assert llm.describe(model="phi4-reasoning:14b").name == "Phi-4"
