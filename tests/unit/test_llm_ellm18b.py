"""Task ellm18b: bench_llm reads a llama.cpp row's free-memory reading from its "vram_reading" field
("llamacpp_free", data commit 70807ba), not from a regex over its notes and id."""
import json
from pathlib import Path

import pytest

MiB = 1 << 20


def _bench():
    from support.pack import load_benchmark
    return load_benchmark("bench_llm")


def _rows():
    return json.loads((Path(__file__).resolve().parents[2] / "benchmarks/data/llm_measured.json").read_text())["rows"]


def test_free_reading_is_the_row_field_not_its_wording():
    b = _bench()
    row = {"id": "t", "runtime": "llama.cpp", "version": "b7780", "vram_gib": 9.49,
           "inferred": {"vram_gib": "the fit step's free device memory, 9718 MiB"}}
    assert not b.free_reading(row)                                  # the wording alone decides nothing
    assert b.free_reading(dict(row, vram_reading="llamacpp_free", inferred={}))
    assert not b.available_reading(dict(row, vram_reading="llamacpp_free"))


@pytest.mark.parametrize("bad", [{"runtime": "ollama", "version": "0.17.0"}, {"runtime": "vllm"},
                                 {"vram_reading": "free"}])
def test_free_reading_outside_its_meaning_is_a_clear_error(bad):
    row = dict({"id": "t", "runtime": "llama.cpp", "version": "b7780", "vram_reading": "llamacpp_free"}, **bad)
    with pytest.raises(ValueError, match="t: vram_reading"):
        _bench().free_reading(row)


def test_the_context_is_added_only_for_a_marked_row():
    # the ellm28 rusteze case: a free reading of 9718 MiB is a card of 9718 + 384 MiB (CUDA_CONTEXT) as kv counts it
    b = _bench()
    row = {"id": "t", "runtime": "llama.cpp", "version": "b7780", "vram_gib": 9718 / 1024,
           "vram_reading": "llamacpp_free",
           "input": {"model": "Qwen/Qwen2.5-Coder-7B-Instruct", "weights_dtype": "Q8_0", "ctx": 32768, "parallel": 1,
                     "kv_dtype": "f16", "flash_attn": "on", "ubatch": 512, "ngl": 99}}
    assert b._plan(row)[1]["vram"] == (9718 + 384) * MiB
    assert b._plan({k: v for k, v in row.items() if k != "vram_reading"})[1]["vram"] == 9718 * MiB


def test_the_data_marks_fourteen_free_readings_none_of_them_vulkan_or_apple():
    marked = [r for r in _rows() if r.get("vram_reading") == "llamacpp_free"]
    assert len(marked) == 14 and all(_bench().free_reading(r) for r in marked)
    # Vulkan's heap budget and Metal's working-set figure hold no CUDA context: such rows are never marked
    assert not any("vulkan" in f"{r['id']} {r.get('gpu') or ''}".lower() or "apple" in (r.get("gpu") or "").lower()
                   for r in marked)
