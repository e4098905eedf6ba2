"""(fixY) A failure in host RAM whose runner-up is other-process reads a host-RAM guide on llama.cpp, Ollama and vLLM too,
not "Another program holds the GPU's memory (llama.cpp, Ollama)" or vLLM's start-up GPU check (fixU did ComfyUI and
PyTorch: test_triage_host_ram_other_guide.py). The guide follows the failure's device (engine: device cpu reads the
platforms: [cpu] guides); the causes do not move. Each runtime's flags are those its own docs or sources define."""
import re

import pytest

from gpu_garden.memory.triage import engine, guides
from support.cpu_oom import CPU_SNAP

# llama.cpp's CPU buffer refusal (batch-590's GB10 case, this size), Ollama's own refusal (batch-590's form, these sizes),
# and PyTorch's CPU allocator under vLLM's CPU platform (vLLM's start-up line, then the worker's error)
LOGS = {
    "llama.cpp": ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 17179869184\n"
                  "llama_model_load: error loading model: unable to allocate CPU buffer\n"),
    "ollama": "Error: model requires more system memory (12.3 GiB) than is available (8.1 GiB)\n",
    "vllm": ("INFO 01-01 00:00:00 [__init__.py:239] Automatically detected platform cpu.\n"
             "ERROR 01-01 00:00:05 [core.py:400] RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. "
             "DefaultCPUAllocator: can't allocate memory: you tried to allocate 40000000000 bytes. Error code 12 "
             "(Cannot allocate memory)\n"),
}
RAM_GUIDE = {"llama.cpp": ("llamacpp-other-process-ram", "Other programs hold the system RAM (llama.cpp)"),
             "ollama": ("ollama-other-process-ram", "Other programs hold the system RAM (Ollama)"),
             "vllm": ("vllm-other-process-ram", "Other programs hold the system RAM (vLLM)")}
GPU_GUIDE = {"llama.cpp": "llm-other-process", "ollama": "llm-other-process", "vllm": "vllm-other-process"}


@pytest.mark.parametrize("runtime", sorted(LOGS))
def test_a_host_ram_failure_with_others_holding_ram_reads_the_runtimes_ram_guide(runtime):
    ev = engine.triage_text(LOGS[runtime], {"snapshot": CPU_SNAP, "platform": "linux"})["events"][-1]
    assert ev["runtime"] == runtime and ev["device_kind"] == "cpu", ev
    assert [c["id"] for c in ev["causes"][:2]] == ["host-ram", "other-process"], ev["causes"]
    other = next(a for a in ev["alternatives"] if a["id"] == "other-process")
    gid, title = RAM_GUIDE[runtime]
    assert other["guide"] == {"id": gid, "title": title}, other
    assert "GPU" not in other["guide"]["title"]


@pytest.mark.parametrize("runtime", sorted(LOGS))
def test_a_gpu_failure_keeps_the_gpu_guide(runtime):
    for backend in ("cuda", "rocm", "vulkan", "mps"):
        assert guides.select("other-process", runtime, {"os": "linux", "backend": backend})["id"] == GPU_GUIDE[runtime]
    assert guides.select("other-process", runtime, {"os": "linux", "backend": "cpu"})["id"] == RAM_GUIDE[runtime][0]


# the flags each guide must offer, as the runtime's own docs name them (read for fixY: llama.cpp tools/server/README.md,
# Ollama docs/faq.mdx + envconfig/config.go, vLLM 0.20.2 arg_utils.py / cpu_worker.py), and what the guide must not offer
FLAGS = {"llama.cpp": (["-ngl", "--no-mmap", "--mlock", "--load-mode", "--cache-ram"], ["nvidia-smi", "OLLAMA_GPU_OVERHEAD"]),
         "ollama": (["ollama ps", "ollama stop", "keep_alive", "OLLAMA_KEEP_ALIVE=0", "OLLAMA_MAX_LOADED_MODELS=1"],
                    ["nvidia-smi", "OLLAMA_GPU_OVERHEAD", "-ngl"]),
         "vllm": (["--gpu-memory-utilization", "--kv-cache-memory-bytes", "VLLM_CPU_KVCACHE_SPACE", "--cpu-offload-gb",
                   "--kv-offloading-size"], ["nvidia-smi", "swap-space"])}


@pytest.mark.parametrize("runtime", sorted(LOGS))
def test_the_ram_guide_names_the_runtimes_own_ram_flags_and_the_logs_figure(runtime):
    g = guides.select("other-process", runtime, {"backend": "cpu"}, {"other_processes": "10.71 GiB"})
    md = " ".join(g["markdown"].split())       # the sentence may wrap
    assert "10.71 GiB was held by other programs" in md, md
    want, never = FLAGS[runtime]
    for flag in want:
        assert flag in md, (runtime, flag)
    for word in never:
        assert word not in md, (runtime, word)
    assert re.search(r"(?m)^(Flags as|Where these are)", g["markdown"]), "cite where each flag is documented"
    assert "part of it was held by other programs" in " ".join(
        guides.select("other-process", runtime, {"backend": "cpu"})["markdown"].split())
