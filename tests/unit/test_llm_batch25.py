"""Batch 25 (read by ellm5). Expected values are what the runtimes printed: llama.cpp's model buffers under
partial offload (LM Studio's engine, lmstudio-ai/lmstudio-bug-tracker#1360; Ollama 0.5.7's bundled llama.cpp,
ollama/ollama#8964)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes.llamacpp import layer_devices

MiB, GiB = 1 << 20, 1 << 30


def _gpu_weights_mib(model, ngl, version=None, dtype="Q4_K_M"):
    r = llm.plan(llm.describe(model=model), "llama.cpp", ctx=2048, ngl=ngl, weights_dtype=dtype,
                 runtime_version=version)
    return (r["weights"] - r["host_weights"]) / MiB


def test_ngl_counts_the_output_layer_first():
    # 'offloading output layer and 19 repeating layers to GPU, offloaded 20/49' (-ngl 20, 48 repeating layers):
    # i_gpu_start = 49 - 20 = 29, the output on the GPU; before ggml-org/llama.cpp#18148 the last 20 and no output
    assert layer_devices(48, 20, [1], output_first=True) == ([19], 0, 29)
    assert layer_devices(48, 20, [1]) == ([20], None, 28)


def test_partial_offload_output_first_r1_distill_qwen14b():
    # LM Studio, January 2026: 'CUDA0 model buffer size = 3621.44 MiB' with 20 of 49 (Q4_K_M); the last 20 repeating
    # layers without the output would be 3153 MiB (-12.9 %)
    assert abs(_gpu_weights_mib("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 20) / 3621.44 - 1) <= 0.01


def test_partial_offload_moe_layers_are_larger_than_dense_ones():
    # Ollama 0.5.7's llama.cpp: 'offloading 5 repeating layers to GPU', 'CUDA0 model buffer size = 35533.34 MiB':
    # deepseek-r1:671b's last five layers are expert layers (its first three are dense) and use_more_bits puts their
    # ffn_down in Q6_K; an average layer would be 31418 MiB (-11.6 %)
    assert abs(_gpu_weights_mib("deepseek-r1:671b", 5, "b4400") / 35533.34 - 1) <= 0.01
