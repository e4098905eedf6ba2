"""--gpu-memory-utilization from a vLLM log's numbers is a share in (0, 1], or no value at all with the reason.
Numbers from vllm-project/vllm#188 (Mistral 7B fp16 on an 11 GB RTX 2080 Ti, --gpu-memory-utilization 0.8) and #4408
(WizardLM-2-8x22B on one 80 GB A100, 0.50); the start-up check's wording from vllm/v1/worker/utils.py (request_memory)."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB

MISTRAL = ("python -u -m vllm.entrypoints.openai.api_server --model mistralai/Mistral-7B-v0.1 --dtype half "
           "--gpu-memory-utilization 0.8  --max-model-len 4096\n"
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB (GPU 0; 10.73 GiB total capacity; "
           "9.85 GiB already allocated; 46.44 MiB free; 9.86 GiB reserved in total by PyTorch)\n")
WIZARD = ("$ python3 -m vllm.entrypoints.openai.api_server --model alpindale/WizardLM-2-8x22B --dtype auto --max-model-len 8192 "
          "--gpu-memory-utilization 0.50 --enforce-eager\n"
          "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.15 GiB "
          "of which 147.75 MiB is free. Process 483452 has 78.98 GiB memory in use. Of the allocated memory 78.17 GiB is "
          "allocated by PyTorch, and 13.03 MiB is reserved by PyTorch but unallocated.\n")
STARTUP = ("ValueError: Free memory on device ({free}/23.64 GiB) on startup is less than desired GPU memory utilization "
           "(0.9, 21.28 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")


def _utils(sugg):
    return [x for x in sugg if x["name"] == "--gpu-memory-utilization"]


@pytest.mark.parametrize("log, share", [(MISTRAL, "0.8"), (WIZARD, "0.5")])
def test_weights_past_the_card_get_no_utilization(log, share):
    res, ev = last_event(log)
    assert res["cause"] == "weights-exceed-vram"
    u = _utils(ev.get("suggestions") or [])
    assert len(u) == 1 and u[0]["kind"] == "note" and u[0]["value"] == "", u
    assert f"more than its {share} share" in u[0]["reason"] and "quantized" in u[0]["reason"]
    assert "--gpu-memory-utilization -" not in ev["guide"]["markdown"]
    assert all(c["text"].count("--gpu-memory-utilization") == 0 for c in ev["guide"]["commands"] if "From this log" in c["label"])


def test_start_up_free_share_is_the_flag():
    u = _utils(llm.suggest_flags_from_log({"free": 20 * GiB, "total": 24 * GiB, "gpu_memory_utilization": 0.9}, "vllm"))
    assert [(x["kind"], x["value"]) for x in u] == [("flag", "0.81")]       # floor(83.3 - 2) / 100


@pytest.mark.parametrize("free", [46 * MiB, 240 * MiB, 1])
def test_nothing_free_at_start_is_said_not_a_negative_share(free):
    u = _utils(llm.suggest_flags_from_log({"free": free, "total": 24 * GiB, "gpu_memory_utilization": 0.9}, "vllm"))
    assert [(x["kind"], x["value"]) for x in u] == [("note", "")], u
    assert "stop the other process" in u[0]["reason"]


def test_own_memory_inside_the_share_says_nothing_of_the_share():
    n = {"free": 2 * GiB, "total": 24 * GiB, "gpu_memory_utilization": 0.9, "allocated": 20 * GiB}
    assert _utils(llm.suggest_flags_from_log(n, "vllm")) == []


@pytest.mark.parametrize("free, share", [("20.00", "0.82"), ("2.40", "0.08"), ("0.30", None), ("0.70", None)])
def test_startup_guide_share_stays_in_range(free, share):
    res, ev = last_event(STARTUP.format(free=free))
    md = ev["guide"]["markdown"]
    if share:
        assert f"--gpu-memory-utilization {share}" in md
    else:
        assert "--gpu-memory-utilization 0" not in md and "no `--gpu-memory-utilization`" in md


@pytest.mark.parametrize("free, share", [("20.00", "0.82"), ("2.40", "0.08"), ("1.20", "0.03")])
def test_kv_and_triage_suggest_one_share_for_one_log(free, share):
    # one formula: the free share less 0.02, floored to two digits (20.00 / 23.64 = 0.846 -> 0.82; 2.40 -> 0.0815 -> 0.08;
    # 1.20 -> 0.0308 -> 0.03); the triage guide and kv's suggestion from the same numbers print the same share
    res, ev = last_event(STARTUP.format(free=free))
    assert f"--gpu-memory-utilization {share}" in ev["guide"]["markdown"]
    u = _utils(llm.suggest_flags_from_log({"free": float(free) * GiB, "total": 23.64 * GiB, "gpu_memory_utilization": 0.9},
                                          "vllm"))
    assert [(x["kind"], x["value"]) for x in u] == [("flag", share)]
