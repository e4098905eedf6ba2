"""fixT: small triage defects a review of rev51 left open. Hand-made excerpts (no corpus case); every expected value is
read from the lines by hand.

1. vLLM's ROCm-only switches (vllm/envs.py VLLM_ROCM_*) name a ROCm card only when set on (1/true) as a shell sets them (a
   command line, an export/env line, docker's -e), never when set off, never in a logged dump of envs.py's defaults (some of
   which are True on every machine), and never where the log names an NVIDIA card (facts "vllm_rocm_on", "cuda_device").
"""
from support.regex_time import assert_each_fast
from support.triage_event import read

# vLLM's start-up refusal (its own words); it names no device, so the device kind comes from the lines before it
REFUSAL = ("ValueError: To serve at least one request with the model's max seq len (262144), 40.00 GiB KV cache is needed, "
           "which is larger than the available KV cache memory (12.50 GiB). Based on the available memory, the estimated "
           "maximum model length is 81920. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
           "initializing the engine.\n")


def test_vllm_rocm_switch_set_on_as_a_shell_sets_it():
    for before in ("export VLLM_ROCM_USE_AITER=1\n$ vllm serve some-org/some-model -tp 4\n",
                   "root@box:/workspace# HF_HOME=/data VLLM_ROCM_USE_AITER=true vllm serve some-org/some-model\n",
                   "docker run --rm --device /dev/kfd -e VLLM_ROCM_USE_AITER=1 some/image vllm serve some-org/some-model\n"):
        assert read(before + REFUSAL)[3] == "rocm", before


def test_vllm_rocm_switch_set_off_or_dumped_names_no_card():
    for before in ("$ VLLM_ROCM_USE_AITER=0 vllm serve some-org/some-model -tp 4\n",
                   "$ VLLM_ROCM_USE_AITER=False vllm serve some-org/some-model -tp 4\n",
                   # a logged dump of envs.py's defaults: VLLM_ROCM_USE_AITER_LINEAR defaults to True on any machine
                   "INFO 05-01 10:00:00 [envs.py:1] VLLM_ROCM_USE_AITER=False, VLLM_ROCM_USE_AITER_LINEAR=True\n",
                   "DEBUG 05-01 10:00:00 [envs.py:1] VLLM_ROCM_USE_AITER_LINEAR=True\n"):
        assert read(before + REFUSAL)[3] == "cuda", before


def test_a_cuda_device_line_outweighs_the_switch():
    # the same dump one setting a line (as an env listing prints it), on a machine whose log names its NVIDIA card
    dump = "VLLM_ROCM_USE_AITER=False\nVLLM_ROCM_USE_AITER_LINEAR=True\nVLLM_ROCM_USE_SKINNY_GEMM=True\n"
    assert read(dump + REFUSAL)[3] == "rocm"          # nothing says otherwise: the setting stands
    for device in ("INFO 05-01 10:00:00 [__init__.py:239] Automatically detected platform cuda.\n",
                   "GPU 0: NVIDIA H100 80GB HBM3\nGPU 1: NVIDIA H100 80GB HBM3\n",
                   "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync\n"):
        assert read(device + dump + REFUSAL)[3] == "cuda", device
        assert read(dump + device + REFUSAL)[3] == "cuda", device
    # ROCm's PyTorch names its card cuda:0 too: an AMD card there is no CUDA device line
    assert read("Device: cuda:0 AMD Radeon RX 7900 XTX : native\n" + dump + REFUSAL)[3] == "rocm"


def test_vllm_rocm_pattern_is_linear():
    from gpu_garden.memory.triage.fact_patterns import VLLM_ROCM_ON
    assert_each_fast([(VLLM_ROCM_ON.search, ["A=" + "x" * 199 + " " * 4 + "B=1 " * 250000,
                                             "$ " + "A=b " * 250000 + "VLLM_ROCM_X=0", "-e " * 330000])])
