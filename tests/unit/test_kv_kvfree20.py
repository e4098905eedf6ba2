"""Task kvfree20: kv's verdict against a free figure the runtime read after its own CUDA context (and the terms
Round 41 named). Each test fails when its rule is broken on purpose (the commit says how)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import free_after_context
from gpu_garden.memory.units import GiB, MiB


# 1. Ollama >= 0.30 reads free memory with `llama-server --list-devices` and its llama-server fits itself against
# llama_params_fit's own reading (src/llama.cpp llama_get_device_memory_data: a context first, then
# ggml_backend_dev_memory): both after a CUDA context, so none is charged against --vram there; llama.cpp's --vram is
# the card and Ollama before 0.30 keeps its own per-GPU minimum.
def test_free_after_context_by_runtime_and_version():
    assert free_after_context("ollama", (0, 30, 0)) and free_after_context("ollama", (0, 34, 0))
    assert free_after_context("ollama", None)  # the newest
    assert not free_after_context("ollama", (0, 29, 9)) and not free_after_context("ollama", (0, 12, 11))
    assert not free_after_context("llama.cpp", (8030,)) and not free_after_context("vllm", (0, 10, 1))
    assert not free_after_context("sglang", None)  # no row: the plan keeps its own context


def test_ollama_034_judges_the_fit_steps_free_figure_without_a_second_context():
    # qwen3:4b Q4_K_M at num_ctx 4096, q8_0 cache, flash attention on, on a GTX 1650 whose llama-server fit step
    # printed 3801 MiB free: full offload with every layer on the GPU (AccessFlow's note: 37/37, the 1024 MiB target
    # cleared by 17 MiB). With a 384 MiB context charged again kv left layers on the CPU.
    s = llm.describe(model="qwen3:4b")
    kw = dict(ctx=4096, kv_dtype="q8_0", flash_attn=True, runtime_version="0.34.0", vram=3801 * MiB,
              gpu_name="NVIDIA GeForce GTX 1650")
    r = llm.plan(s, "ollama", **kw)
    assert "cuda_context" not in r["overhead"] and r["overhead"]["margin"] == 1024 * MiB
    assert r["fits_as_requested"] is True
    # the same card through llama.cpp's --vram (the card's total) still holds llama.cpp's context
    lc = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="q8_0", flash_attn=True, runtime_version="b9840",
                  weights_dtype="Q4_K_M", vram=3801 * MiB)
    assert lc["overhead"]["cuda_context"] == 384 * MiB
    # 0.29 keeps Ollama's own 457 MiB minimum, its rule
    old = llm.plan(s, "ollama", **dict(kw, runtime_version="0.29.0"))
    assert old["overhead"]["cuda_context"] == 457 * MiB
