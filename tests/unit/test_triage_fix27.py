"""fix27 (review26 item 3's remainder): the MLX and MLC LLM runtime markers need each runtime's own lines, as round 66 did
for LMDeploy; a bare mention is the last-resort fact runtime_named. Logs made up in the shape of the corpus' cases (vLLM's
start-up lines as in test_triage_review26, mlx_engine / mlc-llm paths as batches 79 and 102 print them); expected values
by hand."""
import pytest

from support.triage_event import top


def _vllm_log(mention):
    # a vLLM start-up that names another runtime once (a benchmark note), then the CUDA runtime's error string
    return ("INFO 03-02 09:10:11 [__init__.py:239] Automatically detected platform cuda.\n"
            "INFO 03-02 09:10:12 [api_server.py:1043] vLLM API server version 0.8.5\n"
            f"# {mention}\n"
            "INFO 03-02 09:10:40 [gpu_model_runner.py:1347] Model loading took 14.9899 GiB and 8.2 seconds\n"
            "INFO 03-02 09:10:55 [kv_cache_utils.py:634] GPU KV cache size: 51,312 tokens\n"
            "CUDA runtime error: out of memory\n")


# Before fix27 the bare word was a runtime marker and the first marker wins: the vLLM log read as MLX's / MLC LLM's.
# Breaking it: the bare words back in the mlx or mlc-llm row of lines.RUNTIME_MARKERS.
@pytest.mark.parametrize("mention", [
    "same prompt as the mlx run on the laptop",
    "compared with mlx-community/Qwen3-8B-4bit on a Mac",
    "mflux numbers for the image side are elsewhere",
    "comparing against mlc-llm on the same card",
    "pip: mlc_llm not installed",
])
def test_a_passing_mention_does_not_claim_a_vllm_log(mention):
    cause, scores, ev = top(_vllm_log(mention))
    assert ev["runtime"] == "vllm", (mention, ev["runtime"])


# Their own lines still name them; a bare mention with nothing else named does too (runtime_named). Breaking it: the
# own-line patterns, or env.guess_runtime's runtime_named step (the last two texts).
@pytest.mark.parametrize("text, runtime", [
    ('  File "/Users/u/.lmstudio/extensions/backends/vendor/app-mlx-generate/lib/python3.11/site-packages/mlx_engine/'
     'generate.py", line 12, in prompt_step\nRuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes '
     'which is greater than the maximum allowed buffer size of 30150672384 bytes.\n', "mlx"),
    ("import mlx.core as mx\nCUDA runtime error: out of memory\n", "mlx"),
    ("mlc-llm/tvm/src/runtime/cuda/cuda_device_api.cc:129: InternalError: Check failed: (e == cudaSuccess || "
     "e == cudaErrorCudartUnloading) is false: CUDA: out of memory\n", "mlc-llm"),
    ("mlc_chat_cli --model Llama-2-7b-chat-hf-q4f16_1\nCUDA runtime error: out of memory\n", "mlc-llm"),
    ("python 3.11, mlx==0.25.0, macOS 15\nCUDA runtime error: out of memory\n", "mlx"),
    ("python 3.11, mlc-llm nightly, driver 550\nCUDA runtime error: out of memory\n", "mlc-llm"),
])
def test_own_lines_and_a_bare_mention_alone_still_name_them(text, runtime):
    cause, scores, ev = top(text)
    assert ev["runtime"] == runtime, (text, ev["runtime"])
