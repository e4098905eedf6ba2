"""The message census (benchmarks/data/triage_census.json): every OOM / allocation-failure format of the runtimes triage
serves, read from their sources. Each entry's line, alone and inside its runtime's preamble, must be recognised (a
runtime's own retry as recoverable), with the runtime, device kind and numbers the data file declares (declared by hand
from the format, never computed by the engine). benchmarks/triage_census.py prints the same as a table."""
import json
import re
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.triage import error_patterns as RX, parse as P
from gpu_garden.memory.units import parse_size

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import triage_census as CENSUS  # noqa: E402
from support.regex_time import cpu_limit, cpu_now

DATA = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "triage_census.json").read_text(encoding="utf-8"))
ENTRIES = DATA["entries"]
CTX = DATA["contexts"]
RUNTIMES = {"pytorch", "comfyui", "vllm", "llama.cpp", "ollama", "sglang"}
DEVICES = {None, "cuda", "rocm", "xpu", "mps", "cpu", "directml", "vulkan", "metal"}


def _numbers(e):
    return {k: float(v) if k.endswith("_ratio") else int(v) if k.endswith("_tokens") else parse_size(v, binary_decimal=True)
            for k, v in e["numbers"].items()}


def _text(e, mode):
    return CENSUS.text_of(e, CTX, mode)   # the benchmark's reading of an entry, one source


def wrong(e, mode) -> list:
    """What the engine reads differently from the entry's declaration (empty: all right)."""
    res = triage.triage_text(_text(e, mode))
    if e.get("failure") is False:
        return ["read as a failure"] if res["found"] else []
    if not res["found"]:
        return ["not recognised"]
    ev = res["events"][-1]
    out = []
    if all(x["recoverable"] for x in res["events"]) != e["recoverable"]:
        out.append(f"recoverable {not e['recoverable']}")
    runtime = e.get("alone_runtime", e["runtime"]) if mode == "alone" else e["runtime"]
    if ev["runtime"] != runtime:
        out.append(f"runtime {ev['runtime']} != {runtime}")
    device = e["device"] if mode == "alone" else e.get("context_device") or e["device"] or CTX[e["context"]]["device"]
    if device is not None and ev["device_kind"] != device:
        out.append(f"device {ev['device_kind']} != {device}")
    out += [f"{k} {ev['numbers'].get(k)} != {v}" for k, v in _numbers(e).items() if ev["numbers"].get(k) != v]
    if not e["shortage"] and res["cause"] != "other":
        out.append(f"cause {res['cause']}: no shortage, expected other")
    return out


@pytest.mark.parametrize("mode", ["alone", "context"])
@pytest.mark.parametrize("entry", [pytest.param(e, marks=pytest.mark.xfail(reason=e["known_gap"], strict=True)) if e.get("known_gap") else e
                                   for e in ENTRIES], ids=[e["id"] for e in ENTRIES])
def test_census_entry_is_read_as_declared(entry, mode):
    assert wrong(entry, mode) == []


def test_census_is_well_formed():
    assert 60 <= len(ENTRIES) <= 120
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    assert len({e["line"] for e in ENTRIES}) == len(ENTRIES)       # one entry per format, not per call site
    for e in ENTRIES:
        assert {"repo", "path", "ref", "checked"} <= set(e["source"]) and all(e["source"].values()), e["id"]
        assert e["format"] and e["line"], e["id"]
        assert e["runtime"] in RUNTIMES and e["device"] in DEVICES and e["context"] in CTX, e["id"]
        assert e.get("context_device", "cuda") in DEVICES - {None}, e["id"]
        _numbers(e)                                                   # every declared number parses
    # every runtime the product serves is in the census, and the census names the runtimes' own sources
    assert {e["runtime"] for e in ENTRIES} == RUNTIMES
    assert {"pytorch/pytorch", "Comfy-Org/ComfyUI", "Comfy-Org/comfy-aimdo", "vllm-project/vllm", "ggml-org/llama.cpp",
            "ollama/ollama", "sgl-project/sglang"} <= {e["source"]["repo"] for e in ENTRIES}


def _entry(id_):
    return next(e for e in ENTRIES if e["id"] == id_)


def test_the_check_can_fail():
    # a wrong declaration of each kind is caught: runtime, device, a number, recoverability, the no-shortage cause
    e = _entry("ggml-alloc-metal")
    assert wrong(dict(e, runtime="ollama"), "context") and wrong(dict(e, device="cuda"), "alone")
    assert wrong(dict(e, numbers={"requested": "12884901889 bytes"}), "alone")
    assert wrong(dict(_entry("comfy-sdpa-slice"), recoverable=False), "alone")
    assert wrong(dict(_entry("ggml-cuda-malloc"), failure=False), "alone") == ["read as a failure"]
    assert wrong(dict(_entry("ggml-cuda-malloc"), shortage=False), "alone")
    assert wrong(dict(e, line="alloc_tensor_range: buffer of size 12884901888 was allocated"), "alone") == ["not recognised"]


# --- what the census taught (each fails on the rules before it) --------------------------------------------------

def test_recovered_attention_retry_is_its_own_event():
    # ComfyUI's attention caught an OOM and went on; the failure later in the log is read with its own lines
    log = ("Requested to load AutoencoderKL\nscaled_dot_product_attention OOMed: switched to slice attention\n"
           "Requested to load BaseModel\nloaded completely 14086.37 1639.40 True\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 11.99 GiB of which "
           "1.02 GiB is free. Of the allocated memory 9.80 GiB is allocated by PyTorch, and 800.00 MiB is reserved by PyTorch but unallocated.\n")
    res = triage.triage_text(log)
    assert res["count"] == 2 and [e["recoverable"] for e in res["events"]] == [True, False]
    assert res["events"][-1]["kind"] == "torch.cuda"


def test_ollama_runner_gone_counts_only_an_oom():
    assert P.recognise("llama-server process no longer running: exit status 2 ") is None
    ev = P.recognise("llama-server process no longer running: exit status 1 ggml_backend_cuda_buffer_type_alloc_buffer: allocating "
                     "9216.00 MiB on device 0: cudaMalloc failed: out of memory")
    assert ev["kind"] == "ollama.runner" and ev["numbers"] == {"requested": 9216 << 20} and ev["device_kind"] == "cuda"


NEW = ["COMFY_ATTN_RETRY", "GGML_METAL_BUF", "OLLAMA_RUNNER"]


@pytest.mark.parametrize("name", NEW)
def test_new_patterns_are_linear(name):
    rx, n = getattr(RX, name), 60_000
    for text in ("softmax in" + " " * n + "x", "ggml_metal_" + "x" * n + ": error", "ggml_backend_metal_" * (n // 19),
                 "out of memory error, " * (n // 21), "process no longer running: " * (n // 27), "size =" + " " * n + "1"):
        t = cpu_now()
        rx.search(text)
        assert cpu_now() - t < cpu_limit(1.0), (name, text[:30])
