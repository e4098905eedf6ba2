"""Triage round 116 (batches 611-613): message forms written by hand from the runtimes' own wording, with the expected
values worked out by hand.

1. vLLM's start-up check quoted as its head alone, the sentence cut after the figures ("Free memory on device xpu:0
   (5.0/31.89 GiB)" ending the line): the start-up refusal (vllm.startup_free), free and total read, the device by
   torch's name, another program's memory as the cause. CatBoost's "Free memory on device #0 7212.578125MB" is not it,
   nor the head with the sentence going on ("... on startup is less ..."), which the full form reads."""
from support.regex_time import assert_each_fast
from support.triage_event import kinds, read
from gpu_garden.memory.triage.error_patterns import VLLM_STARTUP_HEAD

GiB = 1 << 30


def test_startup_head_alone_xpu():
    cause, kind, runtime, device, nums = read("Free memory on device xpu:0 (7.25/23.5 GiB)\n")
    assert kind == "vllm.startup_free" and runtime == "vllm" and device == "xpu"
    assert nums["free"] == int(7.25 * GiB) and nums["total"] == int(23.5 * GiB)
    assert cause == "other-process"


def test_startup_head_alone_cuda_with_prefix():
    cause, kind, _, device, nums = read("(EngineCore_DP0 pid=42) ValueError: Free memory on device cuda:1 (3/80 GiB)  \n")
    assert kind == "vllm.startup_free" and device == "cuda"
    assert nums["free"] == 3 * GiB and nums["total"] == 80 * GiB
    assert cause == "other-process"


def test_full_sentence_keeps_share_numbers():
    # the full message still reads its share and request (the head form does not take it over)
    _, kind, _, _, nums = read("ValueError: Free memory on device cuda:0 (4.0/24.0 GiB) on startup is less than desired GPU "
                               "memory utilization (0.9, 21.6 GiB). Decrease GPU memory utilization or reduce GPU memory "
                               "used by other processes.\n")
    assert kind == "vllm.startup_free"
    assert nums["gpu_memory_utilization_ratio"] == 0.9 and nums["requested"] == int(21.6 * GiB)


def test_catboost_device_lines_not_vllm():
    assert VLLM_STARTUP_HEAD.search("Free memory on device #0 7212.578125MB") is None
    assert "vllm.startup_free" not in kinds("Free memory on device #0 7212.578125MB\nFree memory on device #1 458.5MB\n")


def test_head_needs_line_end():
    assert VLLM_STARTUP_HEAD.search("Free memory on device xpu:0 (5.0/31.89 GiB) on startup") is None
    assert VLLM_STARTUP_HEAD.search("Free memory on device xpu:0 (5.0/31.89 GiB)").group(1, 2, 3) == ("xpu", "5.0", "31.89")


def test_round116_pattern_linear():
    n = 1 << 20
    assert_each_fast([
        (VLLM_STARTUP_HEAD.search, ["Free memory on device xpu:0 (" * (n // 29), "Free memory on device xpu:0 (" + "1" * n,
                                    "Free memory on device xpu:0 (1.0/" + "1" * n + " GiB) x",
                                    "Free memory on device xpu:0 (1.0/2.0 GiB)" + " " * n + "x",
                                    "Free memory on device " + "a" * n]),
    ])
