"""Task ellm33 (round 56, batch 62). Ollama's per-GPU MinimumMemory on a Metal GPU by release (runtimes/ollama.py
METAL_MINIMUM, read in ollama/ollama's source): 512 MiB through 0.12.3 (discover/gpu_darwin.go), none in 0.12.4-0.12.6
(discover/gpu.go devInfoToInfoList sets 457 MiB for CUDA and ROCm alone), 512 MiB again from 0.12.7 (ml/device.go).
Expected figures are the printed lines of batch 62's alagamai log (Ollama 0.12.6 on an Apple M1 Pro) and the source's
constants, not kv's output."""
import pytest
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20
M1_PRO = 11.84 * GiB  # Ollama's Metal total, recommendedMaxWorkingSetSize 12713.12 MB


def _full(model, version, gpu_name="Apple M1 Pro"):
    s = llm.describe(model=model)
    r = llm.plan(s, "ollama", ctx=4096, parallel=1, weights_dtype="Q4_K_M", vram=M1_PRO, flash_attn=False,
                 runtime_version=version, gpu_name=gpu_name)
    return r["ollama_required_full"]


@pytest.mark.parametrize("model, printed", [("Qwen/Qwen2.5-7B-Instruct", 4.7), ("Qwen/Qwen2.5-1.5B-Instruct", 1.3)])
def test_metal_at_0126_reserves_nothing(model, printed):
    # 'memory.required.full="4.7 GiB"' / '"1.3 GiB"' (one decimal: within 0.05 GiB); with Metal's 512 MiB (or CUDA's
    # 457) counted the figure is 0.45-0.5 GiB above what was printed
    assert abs(_full(model, "0.12.6") / GiB - printed) < 0.05


def test_metal_minimum_by_release():
    m = "Qwen/Qwen2.5-7B-Instruct"
    at_0126 = _full(m, "0.12.6")
    assert _full(m, "0.12.3") - at_0126 == 512 * MiB      # metalMinimumMemory, discover/gpu_darwin.go
    assert _full(m, "0.12.4-rc0") == at_0126              # devInfoToInfoList from the first 0.12.4 candidate
    assert _full(m, "0.12.7-rc0") - at_0126 == 512 * MiB  # ml/device.go DeviceInfo.MinimumMemory
    assert _full(m, None) - at_0126 == 512 * MiB          # the newest
    # off Metal nothing changes: CUDA keeps its 457 MiB at 0.12.6
    assert _full(m, "0.12.6", "NVIDIA GeForce RTX 3060") - _full(m, "0.12.3", "NVIDIA GeForce RTX 3060") == 0


def _alagamai(model, buffers):
    """Batch 62's rows as bench_llm scores them: Ollama 0.12.6's llama runner on an M1 Pro, weights_mib the sum of the
    runner's printed model buffers (alagamai/ollama-mcp-host-lab logs/ollama.log @ 4f273c75)."""
    return {"id": "t", "url": "u", "runtime": "ollama", "version": "0.12.6", "gpu": "Apple M1 Pro", "vram_gib": 11.84,
            "input": {"model": model, "weights_dtype": "Q4_K_M", "ctx": 4096, "parallel": 1, "flash_attn": "off",
                      "gpu_name": "Apple M1 Pro"},
            "measured": {"weights_mib": sum(buffers)},
            "notes": [f"'CPU_Mapped model buffer size = {buffers[0]} MiB', 'Metal_Mapped model buffer size = "
                      f"{buffers[1]} MiB' (weights_mib is the sum)"]}


@pytest.mark.parametrize("model, buffers", [("Qwen/Qwen2.5-1.5B-Instruct", (182.57, 934.69)),
                                            ("Qwen/Qwen2.5-7B-Instruct", (292.36, 4168.09))])
def test_llama_runner_buffers_are_scored_as_llama_cpp_buffers(model, buffers):
    # The llama runner's CPU_Mapped buffer is the token table (the input lookup), which Ollama's weights.total leaves
    # out; Qwen2.5-1.5B ties it, and the Metal buffer holds it again as the output: 151936 x 1536 values at Q6_K,
    # 210 bytes a 256, is the printed 182.57 MiB. So the sum is the file plus the tied copy, which bench_llm compares
    # with kv's device + host weights as for llama.cpp (within 1 %; weights.total alone is 7-17 % under it).
    from support.pack import load_benchmark
    assert round(151936 * 1536 // 256 * 210 / MiB, 2) == 182.57
    s = load_benchmark("bench_llm").score(_alagamai(model, buffers))
    kv_w, printed = s["weights_gib"]
    assert printed == pytest.approx(sum(buffers) / 1024, abs=1e-4)
    assert abs(kv_w / printed - 1) < 0.01
