"""On a CPU device the host's snapshot measures host RAM: the other-process evidence says so, with no NVML label
(fixW3, from the fixW2 walk: ComfyUI --cpu, the OOM panel read "other processes held 10.71 GiB of the 23.54 GiB
card (NVML)"). Wording only: the same rows fire with the same weights (score_all unchanged)."""
import pytest

from gpu_garden.memory.triage import engine
from support.cpu_oom import CPU_OOM, CPU_SNAP

GiB = 1024 ** 3


def other_process_evidence(text, snap):
    ev = engine.triage_text(text, {"snapshot": snap, "platform": "linux"})["events"][-1]
    other = next((c for c in ev["causes"] if c["id"] == "other-process"), None)
    assert other is not None, ev["causes"]
    return " ".join(other["evidence"])


def test_a_cpu_snapshot_is_host_ram_not_an_nvml_card():
    said = other_process_evidence(CPU_OOM, CPU_SNAP)
    assert "other processes held 10.71 GiB of the 23.54 GiB of host RAM" in said, said
    assert "NVML" not in said and "card" not in said, said


@pytest.mark.parametrize("backend,label", [("cuda", "card (NVML)"), ("rocm", "card (AMD SMI)")])
def test_a_gpu_snapshot_names_the_library_that_read_it(backend, label):
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 12.00 GiB "
            "of which 1.00 GiB is free.\n")
    snap = {"devices": [{"index": 0, "name": "a card", "backend": backend, "device": "cuda:0", "total": 12 * GiB,
                         "free": 1 * GiB, "other_processes": 6 * GiB, "torch_reserved": 0}], "host_ram": {}, "sampled_at": 0.0}
    said = other_process_evidence(text, snap)
    assert f"other processes held 6.00 GiB of the 12.00 GiB {label}" in said, said
