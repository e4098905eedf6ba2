"""triage_text / is_oom_error contract (used by the OOM panel) and the CLI."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.triage.engine import CAUSES

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "memory" / "triage" / "samples" / "comfyui_vae_decode_oom.log"

ASYNC = ("Allocation on device 0 would exceed allowed memory. (out of memory)\n"
         "Currently allocated     : 9.43 GiB\nRequested               : 640.00 MiB\n"
         "Device limit            : 11.59 GiB\nFree (according to CUDA): 7.12 MiB\n"
         "PyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB")
CACHING = ("CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.02 GiB is free. "
           "Including non-PyTorch memory, this process has 22.60 GiB memory in use. Of the allocated memory 19.04 GiB is allocated "
           "by PyTorch, and 3.11 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def _check_shape(res):
    assert set(res) >= {"found", "cause", "events"}
    for ev in res["events"]:
        assert set(ev) >= {"runtime", "device_kind", "numbers", "causes", "guide", "line"}
        assert ev["causes"] and all(c["id"] in CAUSES for c in ev["causes"])
        assert all(set(c) >= {"id", "confidence", "evidence"} for c in ev["causes"])
        g = ev["guide"]
        assert set(g) >= {"id", "title", "markdown", "commands"}
        assert all(set(c) == {"label", "text"} for c in g["commands"])
    json.dumps(res)


@pytest.mark.parametrize("exc,msg,expected", [
    ("OutOfMemoryError", "", True),
    ("torch.OutOfMemoryError", "anything", True),
    ("torch.cuda.OutOfMemoryError", "CUDA out of memory.", True),
    ("RuntimeError", "CUDA error: out of memory", True),
    ("RuntimeError", ASYNC, True),
    ("RuntimeError", "MPS backend out of memory (MPS allocated: 17.00 GiB, other allocations: 1.20 GiB, max allowed: 18.13 GiB). Tried to allocate 256.00 MiB on private pool.", True),
    ("RuntimeError", "[enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 5242880 bytes.", True),
    ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (77x768 and 2048x320)", False),
    ("ValueError", "", False),
    ("MemoryError", "", True),
    ("builtins.MemoryError", "Unable to allocate 3.00 GiB for an array with shape (1024, 1024, 768)", True),
    ("", "", False),
])
def test_is_oom_error(exc, msg, expected):
    assert triage.is_oom_error(exc, msg) is expected


def test_triage_text_contract_async_with_node_context():
    res = triage.triage_text(ASYNC, {"node_type": "VAEDecode", "platform": "windows", "backend": "cuda", "cuda_malloc_async": True})
    _check_shape(res)
    assert res["found"] and res["cause"] == "vae-decode"
    ev = res["events"][-1]
    assert ev["numbers"]["requested"] == 640 * 2**20
    actions = ev["guide"]["actions"]
    swap = next(a for a in actions if a["kind"] == "swap_node")
    assert swap["from"] == "VAEDecode" and swap["to"] == "VAEDecodeTiled"
    assert swap["widgets"] == {"tile_size": 512, "overlap": 64, "temporal_size": 64, "temporal_overlap": 8}


def test_caching_fragmentation_linux_recommends_both_env_names():
    res = triage.triage_text(CACHING, {"platform": "linux"})
    _check_shape(res)
    assert res["cause"] == "fragmentation"
    text = " ".join(c["text"] for c in res["events"][-1]["guide"]["commands"])
    assert "PYTORCH_ALLOC_CONF=expandable_segments:True" in text
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in text


@pytest.mark.parametrize("ctx", [{"platform": "windows"}, {"backend": "rocm"}])
def test_never_recommends_expandable_segments_where_ignored(ctx):
    res = triage.triage_text(CACHING, ctx)
    g = res["events"][-1]["guide"]
    assert "expandable_segments:True" not in " ".join(c["text"] for c in g["commands"])


def test_no_oom_found():
    res = triage.triage_text("all good\nPrompt executed in 3.2 seconds\n")
    assert res == {**res, "found": False, "cause": None, "events": []}


def test_demo_section_is_text():
    out = triage.demo_section()
    assert isinstance(out, str) and "vae-decode" in out


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'tests'); import conftest; "
                           "from gpu_garden.memory.cli import main; sys.exit(main(sys.argv[1:]))", *args],
                          cwd=REPO, input=stdin, capture_output=True, timeout=60)


def test_cli_exit_codes_and_json(tmp_path):
    r = _cli("triage", str(SAMPLE), "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["found"] and res["cause"] == "vae-decode"
    r = _cli("triage", "-", stdin=b"nothing to see\n")
    assert r.returncode == 1
    r = _cli("triage", str(tmp_path / "missing.log"))
    assert r.returncode == 2 and b"no such file" in r.stderr
    r = _cli("triage", str(tmp_path))
    assert r.returncode == 2 and b"directory" in r.stderr


def test_cli_human_output_has_cause_numbers_and_commands():
    r = _cli("triage", str(SAMPLE))
    out = r.stdout.decode()
    assert out.startswith("Cause: vae-decode")
    assert "requested 256.00 MiB" in out and "VAEDecodeTiled" in out


def test_panel_snapshot_names_other_processes():
    snap = {"devices": [{"index": 0, "name": "RTX 4070", "backend": "cuda", "total": 12 * 2**30, "free": 0,
                         "other_processes": 5 * 2**30, "torch_reserved": 6 * 2**30}], "host_ram": {}, "sampled_at": 0.0}
    res = triage.triage_text("torch.OutOfMemoryError: Allocation on device ", {"node_type": "KSampler", "snapshot": snap,
                                                                                "platform": "linux", "cuda_malloc_async": True})
    ev = res["events"][-1]
    assert res["cause"] == "other-process" and ev["runtime"] == "comfyui"
    assert any("NVML" in e for e in ev["causes"][0]["evidence"])
    assert "--reserve-vram 5.5" in " ".join(c["text"] for c in ev["guide"]["commands"])


def _caching(alloc_gib, req="1.00 GiB", ru="100.00 MiB"):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 23.64 GiB of "
            f"which 200.00 MiB is free. Including non-PyTorch memory, this process has 23.00 GiB memory in use. Of the allocated "
            f"memory {alloc_gib:.2f} GiB is allocated by PyTorch, and {ru} is reserved by PyTorch but unallocated.")


def test_memory_growing_between_failures_is_a_leak():
    log = "\n".join([_caching(14.0), "epoch 2", *["step"] * 5, _caching(17.5), "epoch 3", _caching(21.0)])
    res = triage.triage_text(log)
    assert res["count"] == 3 and res["cause"] == "leak"
    assert "grew from" in res["events"][-1]["causes"][0]["evidence"][0]


def test_same_model_failing_after_a_good_run_is_a_leak():
    log = "\n".join(["got prompt", "Requested to load WAN21", "100%|##########| 6/6 [01:00<00:00]", "Prompt executed in 70.1 seconds",
                     "got prompt", "Requested to load WAN21", "!!! Exception during processing !!! Allocation on device ",
                     "Got an OOM, unloading all loaded models."])
    res = triage.triage_text(log)
    assert res["cause"] == "leak"
    assert any("WAN21 ran fine" in e for e in res["events"][-1]["causes"][0]["evidence"])


def test_comfyui_startup_lines_decide_the_allocator_and_platform():
    frag = _caching(15.0, req="1.00 GiB", ru="3.00 GiB")
    native_linux = "Device: cuda:0 NVIDIA GeForce RTX 4090 : native\n" + frag
    ev = triage.triage_text(native_linux)["events"][-1]
    assert ev["causes"][0]["id"] == "fragmentation" and ev["platform"]["allocator"] == "native"
    windows = "** Platform: Windows\nDevice: cuda:0 NVIDIA GeForce RTX 4090 : native\n" + frag
    ev = triage.triage_text(windows)["events"][-1]
    assert ev["platform"]["os"] == "windows" and ev["platform"]["expandable_segments"] is False
    assert "expandable_segments:True" not in " ".join(c["text"] for c in ev["guide"]["commands"])


def test_the_last_failure_decides_and_recovered_ones_are_marked():
    log = "\n".join(["Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.",
                     "Prompt executed in 12.0 seconds", *["x"] * 300,
                     "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`"])
    res = triage.triage_text(log)
    assert [e["recoverable"] for e in res["events"]] == [True, False]
    assert res["cause"] == "weights-exceed-vram" and res["events"][-1]["runtime"] == "vllm"


def test_wrapper_lines_alone_are_still_an_oom():
    res = triage.triage_text("Got an OOM, unloading all loaded models.")
    assert res["found"] and res["events"][0]["runtime"] == "comfyui"


def test_llm_logs_get_flags_from_the_kv_calculator():
    log = ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in "
           "KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    ev = triage.triage_text(log)["events"][-1]
    assert ev["runtime"] == "vllm" and ev["causes"][0]["id"] == "kv-cache"
    texts = [s["text"] for s in ev.get("suggestions", [])]
    assert "--max-model-len 7168" in texts
    assert any(c["label"] == "From this log's numbers" for c in ev["guide"]["commands"])


def test_session_history_from_the_panel_points_to_a_leak():
    """Each OOM the panel triages is one message; the growth across a ComfyUI session comes as context."""
    from gpu_garden.memory.triage.engine import triage_text

    msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
           "23.64 GiB of which 301.69 MiB is free. Including non-PyTorch memory, this process has 23.33 GiB memory in use. "
           "Of the allocated memory {a} GiB is allocated by PyTorch, and 310.52 MiB is reserved by PyTorch but unallocated.")
    first = triage_text(msg.format(a="18.10"), {"node_type": "KSampler"})
    assert first["cause"] != "leak"
    prev = [{"numbers": first["events"][-1]["numbers"]}]
    second = triage_text(msg.format(a="22.90"), {"node_type": "KSampler", "previous_ooms": prev})
    leak = [c for c in second["events"][-1]["causes"] if c["id"] == "leak"]
    assert leak and "previous OOM of this ComfyUI session" in leak[0]["evidence"][0]


def test_repeated_session_ooms_without_growth_are_not_a_leak():
    from gpu_garden.memory.triage.engine import triage_text

    msg = ("RuntimeError: MPS backend out of memory (MPS allocated: 17.80 GB, other allocations: 1.23 GB, max allowed: "
           "18.13 GB). Tried to allocate 1.00 GB on private pool.")
    first = triage_text(msg)
    prev = [{"numbers": first["events"][-1]["numbers"]}] * 3
    assert triage_text(msg, {"previous_ooms": prev})["cause"] == first["cause"] != "leak"


def test_a_host_ram_snapshot_says_nothing_about_a_gpus_other_processes():
    """On a CPU host the probe's only device is RAM: other programs' RAM is no evidence about a CUDA card."""
    snap = {"devices": [{"index": None, "name": "CPU (host RAM)", "backend": "cpu", "total": 24 * 2**30, "free": 20 * 2**30,
                         "other_processes": 4 * 2**30}], "host_ram": {}, "sampled_at": 0.0}
    msg = _caching(20.5, req="1.50 GiB")
    with_snap = triage.triage_text(msg, {"node_type": "KSampler", "snapshot": snap, "platform": "linux"})
    without = triage.triage_text(msg, {"node_type": "KSampler", "platform": "linux"})
    assert with_snap["cause"] == without["cause"] != "other-process"
    assert not any("NVML" in e for c in with_snap["events"][-1]["causes"] for e in c["evidence"])
