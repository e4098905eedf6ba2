"""Task fix20b: review20's kv findings. Each test fails when its rule is broken on purpose (the commit says how)."""
import json
import sys
from pathlib import Path

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB

REPO = Path(__file__).resolve().parents[2]


def _bench():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_llm
    return bench_llm


# 1. kv's --vram for Ollama is the free memory a user reads before llama-server exists (nvidia-smi's free, the help
# says; the default is this machine's free memory): from 0.30 llama-server's CUDA context is charged against it, as
# for llama.cpp. Only a figure llama-server printed itself (its fit step's "vs. N MiB of free device memory") is read
# after that context: a bench row with such a figure says so ("vram_reading": "llamacpp_free") and gets it added back.
def test_cli_ollama_030_charges_llama_servers_context_against_the_free_memory_passed(capsys):
    argv = ["kv", "--model", "qwen3:4b", "--runtime", "ollama", "--runtime-version", "0.30.7", "--vram", "3.71",
            "--ctx", "4096", "--kv-dtype", "q8_0", "--flash-attn", "on", "--json"]
    assert cli.main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["overhead"]["cuda_context"] == 384 * MiB and r["overhead"]["margin"] == GiB
    # 2.33 weights + 306 KV + 384 + 66 + 1024 MiB; the compute buffer (Qwen3-4B: hidden 2560, intermediate 9728, -ub 512):
    # 4 x 512 x (3 x 9728 + 2560) + 2 x 4096 x 512 = 69,206,016 B = 66 MiB (round 59; 39 MiB before)
    assert r["overhead"]["compute_buffer"] == 69_206_016
    assert r["total"] == pytest.approx(4.07 * GiB, abs=0.01 * GiB)
    assert r["fits_as_requested"] is False  # 4.07 GiB does not fit the 3.71 GiB a user read before the start
    # the text names the term for what it is
    assert cli.main([a for a in argv if a != "--json"]) == 0
    assert "llama-server's CUDA context (Ollama >= 0.30 starts llama-server)" in capsys.readouterr().out
    # Ollama before 0.30 keeps its own 457 MiB minimum, its rule
    old = llm.plan(llm.describe(model="qwen3:4b"), "ollama", ctx=4096, kv_dtype="q8_0", flash_attn=True,
                   runtime_version="0.29.0", vram=3.71 * GiB)
    assert old["overhead"]["cuda_context"] == 457 * MiB


def test_bench_llamacpp_free_reading_on_ollama_030_adds_the_context_back():
    B = _bench()
    row = {"id": "hand-made", "runtime": "ollama", "version": "0.34.0", "vram_gib": 3.22, "vram_reading": "llamacpp_free",
           "input": {"model": "qwen3:4b", "ctx": 4096, "kv_dtype": "q8_0", "flash_attn": "on"}, "gpu": "NVIDIA GeForce GTX 1650"}
    assert B.free_reading(row)
    _, res = B._plan(row)
    _, plain = B._plan({k: v for k, v in row.items() if k != "vram_reading"})
    assert res["overhead"]["cuda_context"] == 384 * MiB == plain["overhead"]["cuda_context"]
    # the same load; only the card it is judged against is 384 MiB larger
    assert res["total"] == plain["total"] and res["budget"] - plain["budget"] == 384 * MiB
    # a llama-server reading exists from Ollama 0.30 only; before it the 'gpu memory' line is ollama_available's
    with pytest.raises(ValueError, match="0.30 or later"):
        B.vram_reading(dict(row, version="0.29.0"))


def _row(rid):
    return next(r for r in json.loads((REPO / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
                if r["id"] == rid)


def test_ollama_rows_with_llama_servers_own_free_figure_are_judged_on_it():
    B = _bench()
    # AccessFlow's GTX 1650, Ollama 0.34.0: 'projected to use 2760 MiB of device memory vs. 3296 MiB of free device
    # memory', 'cannot meet free memory target of 1024 MiB, need to reduce device memory by 488 MiB', 29/37 placed
    row = _row("ollama-accessflow-qwen3-4b-1650-3296free-4k-q8kv-fa-29of37")
    assert B.free_reading(row)
    _, res = B._plan(row)
    assert res["vram"] == round(3.22 * GiB) + 384 * MiB
    short = (res["total"] - res["vram"]) / MiB  # what kv would take off to fit, the context out of both sides
    assert abs(short - 488) < 48 and B.score(row)["fits_agree"]
    # kgbench's H100L-94C, Ollama 0.30.7: 'projected to use 62052 MiB ... vs. 92549 MiB of free device memory', 37/37
    row = _row("ollama-kgbench-gptoss120b-mxfp4-h100l94c-16k-fit")
    assert B.free_reading(row) and B._plan(row)[1]["vram"] == round(90.38 * GiB) + 384 * MiB
    assert B.score(row)["fits_agree"]


# 2. ggml-metal holds no CUDA context: its device is an MTLDevice, a queue, the shader library and residency sets, its
# only MTLBuffers the ggml buffers; llama.cpp's Metal breakdown prints 'unaccounted 0' (MTL0 total 18186 = free 3139 +
# self 15046 + unaccounted 0, the rabbitholes gpt-oss-20b row). --vram on Metal is the working set
# (recommendedMaxWorkingSetSize, what the build prints as MTL0's total and, at start, its free).
@pytest.mark.parametrize("rid,projected", [("llamacpp-on1659-qwen25-3b-q4km-m4-4k-np4-fit", 2279),
                                           ("llamacpp-rabbitholes-gpt-oss-20b-unsloth-q4km-m5-131k-np4-fit", 14210)])
def test_metal_rows_match_the_fit_steps_projection_with_no_context(rid, projected):
    # the fit step's 'projected to use N MiB of device memory' is the ggml buffers alone; kv's total less --fit's
    # 1 GiB target is within a few MiB of it (384 MiB over with a CUDA context charged)
    _, res = _bench()._plan(_row(rid))
    assert "cuda_context" not in res["overhead"]
    assert abs((res["total"] - res["overhead"]["margin"]) / MiB - projected) < 8


@pytest.mark.parametrize("runtime,version", [("llama.cpp", "b8054"), ("ollama", "0.32.1")])
def test_the_context_follows_the_backend_the_card_name_says(runtime, version):
    s = llm.describe(model="qwen3:4b")
    kw = dict(ctx=4096, runtime_version=version, vram=10 * GiB,
              **({"weights_dtype": "Q4_K_M"} if runtime == "llama.cpp" else {}))
    ctx = {name: llm.plan(s, runtime, gpu_name=name, **kw)["overhead"].get("cuda_context")
           for name in ("Apple M4", "Vulkan0 (NVIDIA GeForce RTX 3050 Laptop GPU)", "NVIDIA GeForce RTX 4090")}
    # Ollama >= 0.30 is llama-server: the card's name reaches llama.cpp's backend rules
    assert ctx == {"Apple M4": None, "Vulkan0 (NVIDIA GeForce RTX 3050 Laptop GPU)": None,
                   "NVIDIA GeForce RTX 4090": 384 * MiB}


# 3. Q4_K_M_QKV16 / Q4_K_M_MISTRAL3 are kv's own names for an Ollama library build's variant (weights.LIBRARY_VARIANTS),
# picked from the Ollama tag; no GGUF file has that type, so a user's --weights-dtype or a repo tag naming one is
# refused, while the tag that picks it still sizes so.
@pytest.mark.parametrize("dtype", ["Q4_K_M_QKV16", "q5_k_m_qkv16", "Q4_K_M_MISTRAL3"])
def test_a_library_variant_is_no_weights_dtype(dtype, capsys):
    from gpu_garden.memory.errors import UserError
    s = llm.describe(model="microsoft/Phi-4-reasoning")
    with pytest.raises(UserError, match="internal name for an Ollama library build"):
        llm.plan(s, "llama.cpp", ctx=4096, weights_dtype=dtype, vram=24 * GiB)
    assert cli.main(["kv", "--model", "microsoft/Phi-4-reasoning", "--runtime", "llama.cpp", "--weights-dtype", dtype,
                     "--ctx", "4096", "--vram", "24"]) == 2
    assert "give the file's type" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["bartowski/Phi-4-GGUF:Q4_K_M_QKV16", "hf.co/bartowski/Phi-4-GGUF:Q4_K_M_MISTRAL3"])
def test_a_library_variant_is_no_gguf_tag(name):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import gguf_repo
    assert gguf_repo.tag_type(name.rsplit(":", 1)[1]) is None and gguf_repo.tag_type("Q4_K_M") == "Q4_K_M"
    with pytest.raises(UserError, match="names no GGUF quantization"):
        llm.describe(model=name)


def test_the_ollama_tag_still_picks_its_variant():
    s = llm.describe(model="phi4-reasoning:14b")
    kw = dict(ctx=4096, runtime_version="0.13.5", vram=24 * GiB)
    tag, asked = llm.plan(s, "ollama", **kw), llm.plan(s, "ollama", weights_dtype="Q4_K_M", **kw)
    # the 40 attn_qkv tensors (5120 x (5120 + 2 x 10 x 128) each) in F16 instead of Q4_K_M's Q5_K (5.5 bits)
    qkv = 40 * 5120 * (5120 + 2 * 10 * 128)
    assert tag["weights"] - asked["weights"] == pytest.approx(qkv * (16 - 5.5) / 8, abs=64)
