"""A failure in host RAM whose runner-up (or top) cause is other-process reads a host-RAM guide, not "Another program
holds the GPU's memory" (fixU, from the fixW2 walk: ComfyUI --cpu, the OOM panel's second cause named the GPU guide).
The guide follows the failure's device (engine: device cpu reads the platforms: [cpu] guides); the causes do not move."""
import pytest

from gpu_garden.memory.triage import engine, guides
from gpu_garden.nodes.oom_build import log_excerpt
from support.cpu_oom import CPU_SNAP

GiB = 1024 ** 3
# ComfyUI --cpu asking for 4 GB more than the host had: DefaultCPUAllocator's message, as ComfyUI's log prints it
CPU_4GB = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate "
           "4000000000 bytes. Error code 12 (Cannot allocate memory)")


def _event(text, context):
    return engine.triage_text(text, dict(context, snapshot=CPU_SNAP, platform="linux"))["events"][-1]


@pytest.mark.parametrize("context", [{}, {"backend": "cpu"}, {"backend": "cuda"}])
def test_comfyui_host_ram_other_process_reads_the_ram_guide(context):
    # {}: the backend inferred; "cpu": ComfyUI --cpu (the panel passes it); "cuda": a host-RAM failure on a GPU machine
    ev = _event(log_excerpt("RuntimeError", CPU_4GB), context)
    assert ev["runtime"] == "comfyui" and ev["device_kind"] == "cpu", ev
    assert [c["id"] for c in ev["causes"][:2]] == ["host-ram", "other-process"], ev["causes"]
    other = next(a for a in ev["alternatives"] if a["id"] == "other-process")
    assert other["guide"] == {"id": "comfyui-other-process-ram", "title": "Other programs hold the system RAM (ComfyUI)"}
    assert ev["guide"]["id"] == "comfyui-host-ram"       # the top cause's guide is unchanged


def test_a_plain_pytorch_host_ram_failure_reads_the_ram_guide_too():
    from support.cpu_oom import CPU_OOM
    ev = _event(CPU_OOM, {})
    other = next(a for a in ev["alternatives"] if a["id"] == "other-process")
    assert other["guide"]["id"] == "pytorch-other-process-ram", other


@pytest.mark.parametrize("runtime,gpu_guide", [("comfyui", "comfyui-other-process"), ("pytorch", "pytorch-other-process")])
def test_a_gpu_failure_keeps_the_gpu_guide(runtime, gpu_guide):
    # (env.infer always names a backend: "cuda" when the log says none)
    for backend in ("cuda", "rocm", "xpu"):
        assert guides.select("other-process", runtime, {"os": "linux", "backend": backend})["id"] == gpu_guide
    assert guides.select("other-process", runtime, {"os": "linux", "backend": "cpu"})["id"] == gpu_guide + "-ram"


def test_the_ram_guide_speaks_of_ram_with_the_logs_figure():
    g = guides.select("other-process", "comfyui", {"backend": "cpu"}, {"other_processes": "10.71 GiB"})
    md = g["markdown"]
    assert "10.71 GiB was held outside this ComfyUI" in md, md
    assert "nvidia-smi" not in md and "--reserve-vram" not in md and "VRAM is" not in md, md
    for flag in ("--cache-ram", "--cache-none", "--disable-pinned-memory", "--lowvram"):
        assert flag in md, flag
    # no figure from the log: the sentence still reads
    assert "part of it was held outside this ComfyUI" in guides.select("other-process", "comfyui", {"backend": "cpu"})["markdown"]
