"""Task ellm21: batch 51 read after its first sight. Each test fails when its rule is broken on purpose (the commit
says how)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import MiB


# 1. ggml-vulkan holds no CUDA context (runtimes/llamacpp.py VULKAN_GPU, device_context). Qwen2.5-7B-Instruct Q4_K_M
# at -c 4096 (-np 4 unified, b8681) on a GTX 1660 SUPER through Vulkan (NVK): the fit step printed "projected to use
# 4696 MiB of device memory vs. 5752 MiB of free device memory", "will leave 1055 >= 1024 MiB", and put 29/29 layers on
# the GPU (othoth77/mythos-prod docs/AI_RUNTIME.md at f34c9f3). At -c 8192 it projected 4920 MiB and kept 27/29.
def _mythos(ctx, gpu):
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    return llm.plan(s, "llama.cpp", ctx=ctx, parallel=4, kv_dtype="f16", weights_dtype="Q4_K_M", kv_unified=True,
                    flash_attn="auto", ubatch=512, runtime_version="b8681", vram=5752 * MiB, gpu_name=gpu)


def test_vulkan_device_charges_no_cuda_context():
    vk = "NVIDIA GeForce GTX 1660 SUPER through Vulkan (Vulkan0, NVK TU116)"
    r = _mythos(4096, vk)
    assert "cuda_context" not in r["overhead"]
    assert r["overhead"]["margin"] == 1024 * MiB  # --fit's target stays
    # llama.cpp's own projection (model + context + compute on Vulkan0) is 4696 MiB; kv's total less its margin is
    # within 8 MiB of it (the model buffer 4164.2 against 4168.09 printed)
    assert abs((r["total"] - r["overhead"]["margin"]) / MiB - 4696) < 8
    assert r["fits_as_requested"] is True
    assert any(n.startswith("Vulkan device: no CUDA context") for n in r["notes"])
    # the 8192 row did not fit whole (27/29 placed): kv says so too
    assert _mythos(8192, vk)["fits_as_requested"] is False
    # the same card under CUDA keeps ggml-cuda's context (and does not fit at 4096 against that free figure)
    cu = _mythos(4096, "NVIDIA GeForce GTX 1660 SUPER")
    assert cu["overhead"]["cuda_context"] == 384 * MiB and cu["fits_as_requested"] is False


# 2. A 16-bit GGUF of gpt-oss keeps the checkpoint's MXFP4 experts (weights.py MXFP4_EXPERTS): unsloth/gpt-oss-20b-GGUF
# F16, 12.83 GiB printed by llama.cpp b7772/b8193 on a T4 ("CUDA0 model buffer size = 12036.68 MiB", ghghang2/v1.4
# llama_server.log); every tensor at 16 bits would be about 39 GiB. vLLM's bf16 is a dequantized checkpoint.
def test_gptoss_f16_gguf_keeps_mxfp4_experts():
    s = llm.describe(model="openai/gpt-oss-20b")
    for dt in ("F16", "BF16"):
        r = llm.plan(s, "llama.cpp", ctx=32768, kv_dtype="f16", weights_dtype=dt, flash_attn=True, ngl=999,
                     runtime_version="b8193")
        assert abs(r["weights"] / 2**30 / 12.83 - 1) < 0.01
        assert abs(r["gpu_weights"] / MiB / 12036.68 - 1) < 0.01
    ol = llm.plan(s, "ollama", ctx=8192, weights_dtype="F16", runtime_version="0.12.3")
    assert abs(ol["weights"] / 2**30 / 12.83 - 1) < 0.01
    # the MXFP4 MoE file type (Q8_0 elsewhere) stays smaller, and vLLM's bf16 is every tensor at 16 bits
    mx = llm.plan(s, "llama.cpp", ctx=32768, kv_dtype="f16", weights_dtype="MXFP4", ngl=999, runtime_version="b8193")
    assert mx["weights"] / 2**30 < 11.5
    v = llm.plan(s, "vllm", ctx=32768, weights_dtype="bf16", vram=80 * 2**30)
    assert v["weights"] / 2**30 > 38
