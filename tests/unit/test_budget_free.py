"""The VRAM Budget node's "free bytes" output (probe.free_bytes on ComfyUI's compute device)."""
from gpu_garden.memory.budget import probe
from gpu_garden.memory.units import GiB


def test_free_bytes_on_the_cpu_is_host_ram_not_an_idle_gpu():
    """Under --cpu the snapshot lists the machine's GPU (NVML) and, until a model is loaded on the CPU, no "cpu"
    entry: the free memory ComfyUI computes with is host RAM, not the card's."""
    snap = {"devices": [{"device": "cuda:0", "free": 23 * GiB}], "host_ram": {"total": 64 * GiB, "available": 40 * GiB}}
    assert probe.free_bytes(snap, "cpu") == 40 * GiB
    assert probe.free_bytes(snap, "cuda:0") == 23 * GiB and probe.free_bytes(snap) == 23 * GiB
    assert probe.free_bytes({"devices": [], "host_ram": {"available": None}}, "cpu") == 0
