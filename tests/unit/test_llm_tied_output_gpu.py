"""llama.cpp's model buffer on the GPU with -ngl N when the output is tied to the token table. llama-model.cpp creates
the missing output.weight from token_embd (TENSOR_DUPLICATED) in the output layer's buffer: a second copy, on the GPU
once the output layer is offloaded. Builds before ggml-org/llama.cpp#18148 offload N repeating layers and no output
(ollama#10848, Ollama 0.7.1's llama.cpp: Qwen3-4B Q8_0, 'offloaded 5/37 layers', CUDA0 model buffer 511.43 MiB);
later builds count the output layer first: the copy and N - 1 repeating layers."""
import pytest

from gpu_garden.memory.llm import kv as llm

MiB = 1 << 20
TOKEN_TABLE_Q8_0 = 151936 * 2560 * 34 // 32  # Qwen3-4B's vocab x hidden, Q8_0 (34 bytes a 32-value block)


def _gpu(ngl, version):
    s = llm.describe(model="Qwen/Qwen3-4B")
    return llm.plan(s, "llama.cpp", ctx=32768, ngl=ngl, weights_dtype="Q8_0", runtime_version=version)["gpu_weights"]


def test_before_output_first_five_repeating_layers_as_printed():
    assert _gpu(5, "b5400") / MiB == pytest.approx(511.43, rel=0.005)


def test_output_first_builds_load_the_tied_copy():
    assert _gpu(5, "b7400") - _gpu(4, "b5400") == pytest.approx(TOKEN_TABLE_Q8_0, rel=0.001)
