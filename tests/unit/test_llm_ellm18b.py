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
    # 14 until batch 51, whose three llama.cpp b7772/b8193 rows on a T4 (ghghang2) print CUDA free memory
    # + 2 (task fix20b): Ollama >= 0.30 rows whose figure is llama-server's fit step's "vs. N MiB of free device memory"
    # + 1: batch 53's nira row (llama.cpp b8133, RTX 5070 on Windows: the fit step's "vs. 11018 MiB of free device memory")
    # + 4: batch 54's ghghangmy rows (llama.cpp b7772 on a T4, the fit step's free device memory)
    # + 2: batch 55's tfg rows (Ollama 0.30.10 on an A40: llama-server's fit step's free device memory)
    # + 2: batch 57's ghghangmy rows (llama.cpp b7772 on a T4); its two krzyszsz Vulkan rows are left unmarked (below)
    # + 3: batch 59's sergeykit rows (Ollama 0.32.14 on a GTX 1650 SUPER: the fit step's "vs. 3278 MiB of free device memory")
    # + 1: batch 67's ghghangv13 row (llama.cpp b7772 on a T4, the fit step's free device memory)
    # + 1: batch 77's KlimtechRAG row (llama.cpp b7972 on a Radeon Pro VII with ROCm: "vs. 16202 MiB of free device memory")
    # + 3: batch 93's OTel rows (Ollama 0.32.14/0.32.15 on MI355X and H100: the fit step's free device memory)
    assert len(marked) == 36 and all(_bench().free_reading(r) for r in marked)
    # Vulkan's heap budget and Metal's working-set figure hold no CUDA context: such rows are never marked
    assert not any("vulkan" in f"{r['id']} {r.get('gpu') or ''}".lower() or "apple" in (r.get("gpu") or "").lower()
                   for r in marked)


# ---------------------------------------------------------------- LLaVA 1.6 Mistral 7B and its Ollama tag
def _llm():
    from gpu_garden.memory.llm import kv
    return kv


def test_llava16_mistral_is_mistral_7b_v02_with_the_llava_vocab():
    # by hand from the config (copies of llava-hf/llava-v1.6-mistral-7b-hf): 32 layers x 8 KV heads x 128 x 2 (K, V)
    # x 2 B = 131,072 B a token, 512 MiB at 4096 cells (the Ollama 0.17.0 log's llama_kv_cache size = 512.00 MiB);
    # params: 32 x (4096 x (4096 + 2 x 1024 + 4096) + 3 x 4096 x 14336 + 2 x 4096) + 2 x 32064 x 4096 + 4096
    s = _llm().describe(model="LLaVA-1.6-Mistral-7B")
    assert (s.vocab, s.intermediate, s.n_kv_heads, s.max_ctx) == (32064, 14336, 8, 32768)
    assert s.params == 32 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 14336 + 2 * 4096) + 2 * 32064 * 4096 + 4096
    res = _llm().plan(s, "ollama", ctx=4096, weights_dtype="Q4_0", runtime_version="0.17.0")
    assert res["kv_total"] == 32 * 8 * 128 * 2 * 2 * 4096 == 512 * MiB


@pytest.mark.parametrize("tag,quant", [("llava:7b-v1.6-mistral-q4_0", "Q4_0"), ("llava:7b-v1.6-mistral-q8_0", "Q8_0"),
                                       ("LLaVA:7b-v1.6-mistral-fp16", "F16")])
def test_the_mistral_llava_tag_resolves(tag, quant):
    from gpu_garden.memory.llm.ollama_tags import ollama_tag
    built, q, _ = ollama_tag(tag)
    assert (built, q) == ("LLaVA-1.6-Mistral-7B", quant)


@pytest.mark.parametrize("tag,says", [("llava:7b", "only llava:7b-v1.6-mistral"), ("llava", "only"),
                                      ("llava:13b-v1.6-q4_0", "only"), ("llava:7b-v1.6-mistralx-q4_0", "only"),
                                      ("llava:7b-v1.6-mistral", "default build was not read")])
def test_other_llava_tags_are_a_clear_error(tag, says):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.ollama_tags import ollama_tag
    with pytest.raises(UserError, match=says):
        ollama_tag(tag)
