"""(fixV) nvidia-smi's table pasted into a log is a CUDA device line (facts "cuda_device"): its header and its GPU rows
outweigh a VLLM_ROCM_* switch set on, as fixT's device lines do. Hand-made excerpts in nvidia-smi's own layout."""
from support.regex_time import assert_each_fast
from support.triage_event import read

SWITCH = "$ VLLM_ROCM_USE_AITER=1 vllm serve Qwen/Qwen2.5-7B-Instruct\n"
HEADER = "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
ROW = "|   0  NVIDIA GeForce RTX 4090        On  |   00000000:01:00.0 Off |                  Off |\n"
ROW_OLD = "|   0  GeForce GTX 1080    Off  | 00000000:01:00.0  On |                  N/A |\n"     # before 2021: no "NVIDIA"
USAGE = "|  0%   38C    P8             21W /  450W |   23512MiB /  24564MiB |      0%      Default |\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of "
       "which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.50 GiB memory in use.\n")


def test_nvidia_smi_outweighs_a_rocm_switch():
    assert read(SWITCH + OOM)[3] == "rocm"      # control: the switch alone still names ROCm
    for table in (HEADER + ROW + USAGE, HEADER, ROW + USAGE, ROW_OLD):
        assert read(SWITCH + table + OOM)[3] == "cuda", table
        assert read(table + SWITCH + OOM)[3] == "cuda", table


def test_other_bars_are_no_device_line():
    # rocm-smi's rows and a program's own table name no NVIDIA card: the switch stands
    for table in ("|   0  AMD Instinct MI300X   |  45.0c  |\n", "| step | loss |\n|   0  | 1.23 |\n"):
        assert read(SWITCH + table + OOM)[3] == "rocm", table


def test_device_pattern_is_linear():
    from gpu_garden.memory.triage.fact_patterns import FACTS
    rx = dict(FACTS)["cuda_device"]
    assert_each_fast([(rx.search, ["|" + " " * 1000000, "| " * 500000, "|   0" * 200000 + " " * 8, "NVIDIA-SMI " * 90000])])
