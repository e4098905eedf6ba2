"""Task fix18b (review18a): one Metal-device pattern for llama.cpp and Ollama, which takes Apple's M-series names and
not NVIDIA's Maxwell M cards (Tesla M4/M6, GRID M6-8Q, Quadro M4000, Tesla M40)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import llamacpp as LC, ollama as OL

GiB = 1 << 30

APPLE = ["Apple M4 Pro", "M2 Ultra", "M4", "m3 max", "M1", "MacBook Pro M3 Max", "Apple M1 Max (Metal MTL0)"]
NVIDIA = ["Tesla M4", "Tesla M6", "GRID M6-8Q", "Quadro M4000", "Tesla M40", "Tesla M60 (one 8 GiB GPU of the board)",
          "NVIDIA GRID M6-8Q", "M6-8Q"]


@pytest.mark.parametrize("name", APPLE)
def test_apple_m_series_names_are_metal(name):
    assert OL.settings(None, {"gpu_name": name})["metal"]
    assert not LC.offloads_output({"gpu_name": name}, 512)       # ggml_backend_metal_device_offload_op: false


@pytest.mark.parametrize("name", NVIDIA)
def test_nvidia_maxwell_m_cards_are_not_metal(name):
    assert not OL.settings(None, {"gpu_name": name})["metal"]
    assert LC.offloads_output({"gpu_name": name}, 512)           # CUDA takes the op at a batch >= 32


def test_ollama_uses_llama_cpp_s_metal_pattern():
    assert OL.METAL_GPU is LC.METAL_GPU                         # one source for both runtimes


def test_tesla_m4_copies_the_output_matrix_as_cuda_does():
    # the op-offload case of test_llm_ellm26 (Qwen3-0.6B Q4_K_M, -ngl 0, b5489): a CUDA card's compute buffer holds the
    # Q6_K output copy + logits, 127,626,240 + 313,262,080 = 440,888,320 B; Metal holds none of it
    def buf(gpu):
        return llm.plan(llm.describe(model="Qwen/Qwen3-0.6B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", ngl=0,
                        runtime_version="b5489", vram=22 * GiB, gpu_name=gpu)["overhead"]["compute_buffer"]
    assert buf("Tesla M4") == 440_888_320
    assert buf("M2 Ultra") == 0


# ---------------------------------------------------------------- bench_llm: a row's vram reading is a field
def _bench():
    from support.pack import load_benchmark
    return load_benchmark("bench_llm")


def test_bench_available_reading_is_the_row_field_not_its_wording():
    b = _bench()
    row = {"id": "t", "runtime": "ollama", "version": "0.17.7", "vram_gib": 13.9,
           "gpu": "NVIDIA Tesla T4 16 GB (Ollama: total 15.0 GiB; 13.9 GiB available)"}
    assert not b.available_reading(row)                                   # the wording alone decides nothing
    assert b.available_reading(dict(row, vram_reading="ollama_available", gpu="a T4"))


@pytest.mark.parametrize("bad", [{"vram_reading": "available"}, {"version": "0.30.0"}, {"version": "0.12.10"},
                                 {"version": None}, {"runtime": "llama.cpp"}])
def test_bench_vram_reading_outside_its_meaning_is_a_clear_error(bad):
    row = dict({"id": "t", "runtime": "ollama", "version": "0.22.1", "vram_reading": "ollama_available"}, **bad)
    with pytest.raises(ValueError, match="t: vram_reading"):
        _bench().available_reading(row)


def test_bench_marks_the_rows_its_data_says_are_available_readings():
    import json
    from pathlib import Path
    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/data/llm_measured.json").read_text())["rows"]
    marked = [r for r in rows if r.get("vram_reading") == "ollama_available"]
    # 13 rows marked in 3bc792d, and batch 45's Ollama 0.17.0 row (ollama-cs6501-llava7b..., data commit 7e369b7);
    # batch 46's codata (3, read as 0.21.0 in 42252d8) and audiointel 0.21.2 rows; batch 47's two maccare 0.21.0 rows; batch 50's autoiter 0.21.0 row; batch 51's cs6501 0.15.2 row;
    # batch 52's grpounlearn 0.19.0, chatbotprod and mainframeai 0.13.0 rows; batch 54's keverall 0.22.0 row; batch 55's two nexusai 0.15.5 rows;
    # batch 57's nanos 0.24.0 row; batch 65's MEAKCIN Voice_Bot_Web 0.13.5 row; batch 67's two redwizurd 0.15.4 rows (Apple M4 Pro);
        # batch 70's two RX Vega ROCm rows (a gfx900 fork of 0.18.2, and 0.17.6); batch 74's seven (three MI25 0.18.2
        # source builds, four RX Vega 0.17.4 loads under Vulkan and ROCm); batch 77's three (an MI25 0.18.2 tinyllama
        # load, an RX Vega 0.17.4 Vulkan load, Ticket-LLM's L40S 0.13.5 row); batch 95's ecosystem RX 6600 0.18.2 row
    assert len(marked) == 45 and all(_bench().available_reading(r) for r in marked)
    assert sum((r.get("batch") or 0) < 46 for r in marked) == 14
