"""Task kvfree20: kv's verdict against a free figure the runtime read after its own CUDA context (and the terms
Round 41 named). Each test fails when its rule is broken on purpose (the commit says how)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB


# 1. (Ollama >= 0.30 judged without llama-server's context) was withdrawn by task fix20b: kv's --vram for Ollama is the
# free memory read before llama-server starts, so its context is charged; test_kv_fix20b.py holds the tests.


# 4. vLLM 0.8.3-0.9.0 start a sliding-window model whose pool holds less than one max_model_len: the start check
# (check_enough_kv_cache_memory on the model's own specs) sizes a sliding layer by its window, then the pool gives every
# layer full-length pages (runtimes/vllm.py SWA_CHECKED). "fits" with a concurrency below 1 is vLLM's own outcome
# (Gemma-3-12B AWQ at TP 2 on two 4090s, 131072: 0.53x printed and served); kv says what the figure means.
def test_vllm_sliding_start_check_below_one_request_says_what_it_means():
    s = llm.describe(model="google/gemma-3-12b-it")
    kw = dict(ctx=131072, weights_dtype="awq", tensor_parallel_size=2, vram=23.55 * GiB)
    r = llm.plan(s, "vllm", runtime_version="0.8.4", **kw)
    assert r["fits"] and r["concurrency"] < 1
    note = next(n for n in r["notes"] if n.startswith("vLLM starts, but its pool holds"))
    assert f"{r['kv_capacity_tokens']:,} tokens" in note and f"--max-model-len {r['kv_capacity_tokens'] // 16 * 16} or less" in note
    assert not any("the other requests of the 1" in n for n in r["notes"])
    new = llm.plan(s, "vllm", runtime_version="0.9.2", **kw)  # the hybrid manager: the window's pages
    assert new["concurrency"] > 1 and not any(n.startswith("vLLM starts, but") for n in new["notes"])


# 3. Ollama's own engine runs Pixtral's vision attention through nn.Attention -> ScaledDotProductAttention, which is
# ggml_flash_attn_ext when the backend's flash attention is on (ml/backend/ggml/ggml.go; model/models/mistral3/
# model_vision.go): no 16 x 12100^2 score matrix (9.37 GB at 1540 px) then, the gated MLP's rows instead.
def test_ollama_pixtral_vision_graph_follows_flash_attention():
    s = llm.describe(model="devstral-small-2:24b")
    kw = dict(ctx=32768, runtime_version="0.21.0", vram=44 * GiB)
    on, off = llm.plan(s, "ollama", flash_attn=True, **kw), llm.plan(s, "ollama", flash_attn=False, **kw)
    patches, d, ff = (1540 // 14) ** 2, 1024, 4096
    assert off["overhead"]["projector_graph"] == 16 * patches * patches * 4
    assert on["overhead"]["projector_graph"] == 4 * patches * (3 * ff + 2 * d)  # 661.7 MiB
    assert on["projector"]["graph"] == on["overhead"]["projector_graph"]
    # the log (SeanceTable/auto-iteration ollama.log, flash on): 'compute graph' 1.2 GiB on CUDA0, text and vision
    # together; kv's two graphs now sum to 0.91 GiB (9.0 GiB before)
    both = (on["overhead"]["compute_buffer"] + on["overhead"]["projector_graph"]) / GiB
    assert 0.6 < both < 1.25
    # the llama runner's estimate (before Ollama measured its own engine's graph) keeps the score matrix
    old = llm.plan(s, "ollama", flash_attn=True, **dict(kw, runtime_version="0.6.0"))
    assert old["overhead"]["projector_graph"] == 16 * patches * patches * 4
