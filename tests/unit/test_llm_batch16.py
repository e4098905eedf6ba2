"""Mechanisms tuned on batch 16 (benchmarks/data/llm_measured.json; those rows are regression rows now), each read in
Ollama's source: its estimate prices a DeepSeek (deepseek2) cache per head, its log's memory.weights.total adds the
output tensor from 0.6.3, Pixtral's vision tower is a gated, position-table-free ViT, and the library names
llama3.3, the coder libraries and mistral-small3.1/3.2. Every expected value is a number the runtime printed in
the thread named beside it; each test also shows the figure the mechanism's absence gives, outside the tolerance."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL

GiB, MiB = 1 << 30, 1 << 20


# --- Ollama prices a DeepSeek cache from the GGUF's per-head K/V, not MLA's latent ---------------------------------

def test_ollama_estimate_prices_deepseek_cache_per_head():
    # ollama/ollama#8667 (0.5.11): deepseek-r1:671b at num_ctx 2048, memory.required.kv 9.5 GiB,
    # memory.weights.total 385.0 GiB (0.5.x counts each block with its share of the cache)
    s = llm.describe(model="deepseek-r1:671b")
    r = llm.plan(s, "ollama", ctx=2048, vram=6.9 * GiB, runtime_version="0.5.11")
    assert r["kv_total"] / GiB == pytest.approx(9.5, abs=0.05)        # 61 x 2048 x 128 x (192 + 128) x 2 bytes
    assert r["ollama_weights_total"] / GiB == pytest.approx(385.0, rel=0.01)
    assert not r["fits_as_requested"]                                 # 3 of 62 layers went on the GPU
    # the latent cache (576 values a layer) would print 137 MiB: 70 times too small
    latent = llm.plan(s, "llama.cpp", ctx=2048, mla_cache="latent")["kv_total"]
    assert latent / GiB < 0.2


def test_ollama_deepseek_estimate_matches_its_runner_full_cache():
    # the same per-head cache is what Ollama's llama.cpp runner allocated for deepseek-r1:671b
    # (uv-genai/llm-setonix: 39040.00 MiB at 8192 cells); Ollama's estimate at num_ctx 2048 x 4 parallel agrees
    s = llm.describe(model="deepseek-r1:671b")
    r = llm.plan(s, "ollama", ctx=2048, parallel=4, runtime_version="0.6.5")
    assert r["kv_total"] / MiB == pytest.approx(39040.0, abs=0.5)


# --- memory.weights.total adds the output tensor from 0.6.3 ------------------------------------------------------

def test_ollama_weights_total_adds_the_output_from_0_6_3():
    # ollama/ollama#10615 (0.6.8): mistral-small3.1:24b prints total 13.1 GiB = repeating 12.7 + nonrepeating 0.36
    roles = {"blocks": int(12.7 * GiB), "output": int(360 * MiB)}
    assert OL.printed_weights_total((0, 6, 8), roles, 0) / GiB == pytest.approx(13.05, abs=0.01)
    assert OL.printed_weights_total((0, 6, 3), roles, 0) == roles["blocks"] + roles["output"]
    assert OL.printed_weights_total((0, 6, 2), roles, 0) == roles["blocks"]   # 0.6.2 prints the blocks alone
    s = llm.describe(model="mistral-small3.1:24b")
    r = llm.plan(s, "ollama", ctx=131072, runtime_version="0.6.8")
    # since batch 17 the output is its printed Q4_K size (test_llm_batch17); the blocks come out 2 % under the
    # printed 12.7 GiB (Llama-3-8B's Q4_K_M mix), within 3 % in all
    assert r["weights_by_role"]["output"] / MiB == pytest.approx(360.0, abs=0.05)
    assert r["ollama_weights_total"] / GiB == pytest.approx(13.1, rel=0.03)
    assert r["kv_total"] / GiB == pytest.approx(20.0, abs=0.05)


# --- Pixtral's vision tower (Mistral 3.1/3.2) ----------------------------------------------------------------------

def test_pixtral_projector_is_gated_without_position_table():
    # ollama/ollama#10615: projector.weights 769.3 MiB, projector.graph 8.8 GiB for mistral-small3.1:24b
    s = llm.describe(model="mistral-small3.1:24b")
    p = OL.projector(s)
    assert p["weights"] / MiB == pytest.approx(769.3, rel=0.005)
    assert p["graph"] / GiB == pytest.approx(8.8, rel=0.02)          # 16 heads x 12100^2 patches x 4 bytes
    # the generic ViT (two-matrix MLP, a learned position table, the projection) gives 611 MiB: 20 % short
    generic = dict(s.vision, model_type="siglip_vision_model")
    q = OL.projector(type(s)(**{**s.__dict__, "vision": generic}))
    assert q["weights"] / MiB < 0.85 * 769.3


# --- Ollama library names ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, built, quant", [
    ("llama3.3:70b-instruct-q3_K_M", "Llama-3.3-70B", "Q3_K_M"),      # ollama/ollama#10553
    ("llama3.3", "Llama-3.3-70B", "Q4_K_M"),
    ("qwen2.5-coder:7b", "Qwen2.5-7B", "Q4_K_M"),
    ("qwen3-coder:30b", "Qwen3-30B-A3B", "Q4_K_M"),
    ("mistral-small3.1:24b", "Mistral-Small-3.1-24B", "Q4_K_M_MISTRAL3"),      # ollama/ollama#10615
    ("mistral-small3.2", "Mistral-Small-3.1-24B", "Q4_K_M"),
])
def test_ollama_library_names(name, built, quant):
    s = llm.describe(model=name)
    assert (s.name, s.quant) == (built, quant)


def test_llama33_tag_cache_over_two_gpus():
    # ollama/ollama#10553 (0.7.1's runner, padding 256): llama3.3:70b-instruct-q3_K_M at 4096 cells,
    # KV self size 1280.00 MiB (CUDA0 784.00 + CUDA1 496.00)
    s = llm.describe(model="llama3.3:70b-instruct-q3_K_M")
    r = llm.plan(s, "llama.cpp", ctx=4096, flash_attn=True, runtime_version="b5400")
    assert r["kv_total"] / MiB == pytest.approx(1280.0, abs=0.005)
