"""Ollama's buffer layer (runtimes/ollama.py MAX_LAYER_BUFFER): the estimate holds one layer back on every GPU; blk.0
in every release but 0.7.0, whose llm/memory.go took the largest tensor group (ollama 0478d440f, first tagged
v0.7.0-rc1; reverted by 3fe74fba4, first tagged v0.7.1-rc0). Expected values are the figures Ollama printed in
ollama/ollama#10823 (gemma3:27b-it-qat, 0.7.0, --ctx-size 4096 --parallel 1, Windows)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes.ollama import MAX_LAYER_BUFFER

GiB = 1 << 30


def _plan(vram_gib, version="0.7.0"):
    return llm.plan(llm.describe(model="gemma3:27b-it-qat"), "ollama", ctx=4096, vram=vram_gib * GiB,
                    runtime_version=version)


@pytest.mark.parametrize("vram", [17.8, 21.7])
def test_ollama_070_holds_the_token_table_back_as_its_buffer(vram):
    # printed at 17.8 and at 21.7 GiB available: memory.required.full 23.4 GiB; with blk.0 as the buffer it is
    # 21.0 / 20.0 GiB, with the token table (F16, 262144 x 5376) 23.44
    r = _plan(vram)
    assert r["ollama_required_full"] / GiB == pytest.approx(23.4, abs=0.05)


def test_ollama_070_leaves_the_output_layer_off_at_21_7_gib():
    # printed: layers.model=63 layers.offload=62 memory.available [21.7 GiB]: every block, not the output layer
    r = _plan(21.7)
    assert not r["fits_as_requested"]
    assert r["gpu_layers_used"] == 62
    assert any("all 62 repeating layers but not the output layer fit" in n for n in r["notes"])


@pytest.mark.parametrize("version", ["0.6.8", "0.7.1-rc0", "0.7.1", "0.9.0"])
def test_other_releases_hold_blk0_back(version):
    # the same load outside the 0.7.0 window: the buffer is one block (0.22 GiB) and its cache, not the 2.6 GiB table
    r = _plan(21.7, version)
    assert r["overhead"]["layer_buffer"] / GiB < 0.3
    assert r["ollama_required_full"] / GiB < 22.0


def test_the_window_is_the_070_release_candidates_and_release():
    lo, hi = MAX_LAYER_BUFFER
    assert lo == parse_version("0.7.0-rc1") and hi == parse_version("0.7.1-rc0")
    assert _plan(21.7, "0.7.0-rc1")["overhead"]["layer_buffer"] / GiB > 2.6
    assert _plan(21.7, "0.7.0-rc0")["overhead"]["layer_buffer"] / GiB < 0.3


# --- Ollama's own engine places from measured memory (MEASURED_LAYOUT): no buffer layer, one graph ----------------
# Structural tests read from llm/server.go (createLayout / assignLayers, v0.11.11-rc0 to v0.29) and fs/ggml
# OllamaEngineRequired per tag; no log with both the free memory and a layer count of such a run was read.

@pytest.mark.parametrize("model, version, measured", [
    ("qwen3:8b", "0.12.6", True),          # qwen3 on Ollama's engine from 0.12.0
    ("qwen3:8b", "0.11.11", False),        # not yet in OllamaEngineRequired: the llama runner's estimate
    ("qwen3:30b", "0.12.1", False),        # qwen3moe joins in 0.12.2
    ("qwen3:30b", "0.12.2", True),
    ("gemma3:27b", "0.11.10", False),      # new estimates opt-in (OLLAMA_NEW_ESTIMATES) before 0.11.11
    ("gemma3:27b", "0.11.11", True),
    ("llama3.1:8b", "0.12.6", False),      # the llama runner keeps the estimate and its blk.0 buffer
])
def test_measured_layout_by_version_and_engine(model, version, measured):
    r = llm.plan(llm.describe(model=model), "ollama", ctx=4096, vram=80 * GiB, runtime_version=version)
    assert ("layer_buffer" not in r["overhead"]) is measured


def test_measured_layout_needs_one_graph_and_no_buffer():
    s = llm.describe(model="gemma3:27b")
    old = llm.plan(s, "ollama", ctx=4096, vram=80 * GiB, runtime_version="0.11.10")
    new = llm.plan(s, "ollama", ctx=4096, vram=80 * GiB, runtime_version="0.11.11")
    # the estimate holds blk.0 + its cache back and sizes the placement for the partial graph (graph + output tensor)
    assert old["placement_need"] - new["placement_need"] > old["overhead"]["layer_buffer"]


def test_ollama_030_is_llama_server_with_fit():
    # llm/llama_server.go (v0.30.0): -c num_ctx x parallel, -np parallel, no -ngl: llama.cpp's own figures and --fit
    s = llm.describe(model="qwen3:8b")
    ol = llm.plan(s, "ollama", ctx=8192, parallel=2, vram=12 * GiB, runtime_version="0.30.0")
    # -b/-ub: the scheduler's automatic 1024 for 16384 tokens of context (server/sched.go, test_kv_ellm19c)
    lc = llm.plan(s, "llama.cpp", ctx=16384, parallel=2, vram=12 * GiB, weights_dtype="Q4_K_M", ubatch=1024)
    assert ol["total"] == lc["total"] and ol["kv_total"] == lc["kv_total"]
    assert ol["total"] > llm.plan(s, "llama.cpp", ctx=16384, parallel=2, vram=12 * GiB, weights_dtype="Q4_K_M")["total"]
    assert "layer_buffer" not in ol["overhead"] and ol["overhead"]["margin"] == 1 << 30
    assert any("llama-server" in n for n in ol["notes"])
    old = llm.plan(s, "ollama", ctx=8192, parallel=2, vram=12 * GiB, runtime_version="0.29.0")
    assert "margin" not in old["overhead"]


def test_the_cuda_context_line_names_what_the_release_reserves():
    from gpu_garden.memory.llm import report
    s = llm.describe(model="qwen3:8b")
    line = lambda v: next(l for l in report.format_plan(llm.plan(s, "ollama", ctx=8192, vram=12 * GiB, runtime_version=v))
                          .splitlines() if l.strip().startswith("cuda context"))
    assert line("0.30.0").endswith("llama-server's CUDA context (Ollama >= 0.30 starts llama-server)")
    assert line("0.29.0").endswith("Ollama's per-GPU minimum reserve")
