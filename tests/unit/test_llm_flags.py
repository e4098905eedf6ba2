"""The printed advice reads as the verdict does: vLLM keeps the user's --gpu-memory-utilization when it holds the
plan, and Ollama's printed total is the figure its placement verdict is based on."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB, fmt_bytes


def _util_flag(r):
    return next(f for f in r["flags"] if f["name"] == "--gpu-memory-utilization")


def test_the_users_gpu_memory_utilization_is_kept_when_it_fits():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, gpu_memory_utilization=0.95)
    assert r["fits_as_requested"]
    f = _util_flag(r)
    assert f["value"] == "0.95" and f["reason"].startswith("yours, kept")
    assert "--gpu-memory-utilization 0.95" in r["command"]
    assert "--gpu-memory-utilization 0.95: yours, kept" in llm.format_plan(r)
    # a share between the least that holds the plan and the default is kept too (not raised to 0.90)
    least = float(f["reason"].split("the least that does is ")[1][:4])
    mid = round(least + 0.02, 2)
    assert mid < 0.90
    assert _util_flag(llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, gpu_memory_utilization=mid))["value"] == f"{mid:.2f}"


def test_without_a_share_the_default_is_proposed():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB)
    f = _util_flag(r)
    # vLLM's own default: 0.92 from 0.20.0 (vllm#38284, with the CUDA-graph estimate inside the share; round 64 read
    # PyPI's 0.20.0 source), 0.90 before
    assert f["value"] == "0.92" and not f["reason"].startswith("yours")
    assert "yours, kept" not in llm.format_plan(r)
    old = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, runtime_version="0.19.1")
    assert _util_flag(old)["value"] == "0.90"
    first = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, runtime_version="0.20.0")
    assert _util_flag(first)["value"] == "0.92"


def test_no_negative_kv_cache_memory_is_offered():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, gpu_memory_utilization=0.6, runtime_version="0.11.0")
    assert not r["fits"]
    assert not any(a["flag"].startswith("--kv-cache-memory") for a in r["autofit"])


def test_ollama_total_is_the_figure_its_verdict_checks():
    spec = llm.describe(model="gemma3:27b")
    kw = dict(runtime="ollama", ctx=8192, runtime_version="0.6.5")
    need = llm.plan(spec, vram=40 * GiB, **kw)["placement_need"]
    loaded = llm.plan(spec, vram=40 * GiB, **kw)["total"]
    # the scheduler sizes the graph for a partial offload: larger than the loaded total by Gemma's partial graph less
    # its full graph (fs/ggml GraphSize case "gemma3": 1.60 GiB - 0.56 GiB at 8192 cells, not the output tensor)
    from gpu_garden.memory.llm.runtimes import ollama as O
    full, partial = O.gemma_graph(spec, 8192)
    assert need - loaded == partial - full and partial - full > 1 * GiB
    assert llm.plan(spec, vram=need + 4 * MiB, **kw)["fits_as_requested"] is True
    assert llm.plan(spec, vram=need - 4 * MiB, **kw)["fits_as_requested"] is False
    text = llm.format_plan(llm.plan(spec, vram=need + 4 * MiB, **kw))
    # the total is the sum of the lines (the loaded allocation); the placement check under it is the verdict's figure
    total_line = next(line for line in text.splitlines() if line.strip().startswith("total on GPU"))
    assert fmt_bytes(loaded) in total_line
    check = next(line for line in text.splitlines() if line.strip().startswith("placement check"))
    assert fmt_bytes(need) in check and "verdict" in check


def test_a_share_too_small_is_named_not_the_weights():
    # 0.60 of 24 GiB (14.4 GiB) cannot hold Qwen2.5-7B's 14.19 GiB of weights plus its profile run; the card can:
    # the note names the share that holds 8192 tokens instead of calling for a quantized checkpoint
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, gpu_memory_utilization=0.6)
    assert not r["fits"]
    note = next(n for n in r["notes"] if "too small" in n)
    need = float(note.rsplit("--gpu-memory-utilization ", 1)[1].split()[0])
    assert 0.6 < need <= 0.95
    assert llm.plan(spec, runtime="vllm", ctx=8192, vram=24 * GiB, gpu_memory_utilization=need)["fits_as_requested"]
    assert not any("quantized checkpoint" in n for n in r["notes"])
    # a card the weights cannot fit at any share still says so
    r70 = llm.plan(llm.describe(model="meta-llama/Llama-3.1-70B-Instruct"), runtime="vllm", ctx=8192, vram=24 * GiB,
                   gpu_memory_utilization=0.6)
    assert any("quantized checkpoint" in n for n in r70["notes"]) and not any("too small" in n for n in r70["notes"])
