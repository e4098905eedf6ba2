"""Batch 24's unknown models. Expected values are what the runtimes printed: ik_llama.cpp#344 (GLM-4-32B-0414's
KV buffers), llama.cpp#11598 (Qwen2.5-7B-Instruct-1M's KV self size), llama-bench's size and parameter columns
(kyuz0/amd-strix-halo-toolboxes benchmark logs: Ministral-3-14B-Instruct-2512 and GLM-4.7-Flash in BF16)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

MiB, GiB = 1 << 20, 1 << 30


def _kv_mib(model, ctx, kv_dtype=None, **knobs):
    r = llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, kv_dtype=kv_dtype, **knobs)
    return r["kv_total"] / MiB


def test_glm4_32b_0414_kv_buffers():
    # 'CUDA0 KV buffer size = 1952.00 MiB' (f16, -c 32768); 'CPU KV buffer size = 162.03 MiB' (q8_0, -c 5120)
    assert abs(_kv_mib("THUDM/GLM-4-32B-0414", 32768) - 1952.00) <= 0.005
    assert abs(_kv_mib("THUDM/GLM-4-32B-0414", 5120, "q8_0") - 162.03) <= 0.005


def test_qwen25_7b_1m_kv_and_context():
    # 'KV self size = 3937.50 MiB, K (f16): 1968.75 MiB' at -c 72000 (build 4615: the cells not yet padded to 256)
    assert abs(_kv_mib("Qwen/Qwen2.5-7B-Instruct-1M", 72000, runtime_version="b4615") - 3937.50) <= 0.005
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct-1M")
    assert s.name == "Qwen2.5-7B-1M" and s.max_ctx == 1010000   # not Qwen2.5-7B's 32768


@pytest.mark.parametrize("model,params_b,size_gib", [
    ("mistralai/Ministral-3-14B-Instruct-2512", 13.51, 25.16),   # 'mistral3 14B BF16 | 25.16 GiB | 13.51 B'
    ("zai-org/GLM-4.7-Flash", 29.94, 55.79),                     # 'deepseek2 30B.A3B BF16 | 55.79 GiB | 29.94 B'
])
def test_llama_bench_parameters_and_bf16_size(model, params_b, size_gib):
    s = llm.describe(model=model)
    assert abs(s.params / 1e9 - params_b) <= 0.005
    w = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="BF16")["weights"] / GiB
    assert abs(w / size_gib - 1) <= 0.002


@pytest.mark.parametrize("model,family", [
    # sizes of these families without a built-in description (Qwen3.6-35B-A3B, Qwen3.8-27B, Gemma-4-31B and
    # Llama-4-Scout-17B-16E are built in: tests/unit/test_llm_hybrid_families.py; Gemma-4-26B-A4B, Qwen3.5-27B and
    # Qwen3.5-2B since round 11, test_llm_batch28.py) and Ollama tags of sizes not described (qwen3.6:27b and :35b
    # are mapped since round 15, test_llm_batch30.py; Qwen3.5-4B is built in since task arch25, test_llm_arch25.py)
    ("Qwen/Qwen3.5-0.8B", "Qwen 3.5"), ("qwen3.6:9b", "Qwen 3.5"),
    # (Gemma 4 E2B / E4B are built in since round ellm22, test_llm_ellm22.py; gemma4:2b is a size Gemma 4 does not have)
    # (llama4:scout is Llama-4-Scout-17B-16E since fix68e, test_kv_fix68e.py)
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "Llama 4"), ("gemma4:2b", "Gemma 4"),
])
def test_undescribed_families_say_what_is_missing(model, family):
    with pytest.raises(UserError, match="unknown model") as e:
        llm.describe(model=model)
    assert family in str(e.value) and "--config" in str(e.value)


def test_a_known_family_of_unknown_size_is_not_guessed():
    for model in ("qwen3:2b", "Qwen/Qwen3-2B"):
        with pytest.raises(UserError, match="never guessed") as e:
            llm.describe(model=model)
        assert "--config" in str(e.value)


def test_family_patterns_leave_neighbours_alone():
    assert llm.describe(model="meta-llama/Llama-3.1-8B-Instruct").name == "Llama-3.1-8B"
    assert llm.describe(model="gemma3:4b").name == "Gemma-3-4B"
    assert llm.describe(model="Qwen/Qwen3-4B").name == "Qwen3-4B"


@pytest.mark.parametrize("model", ["zai-org/GLM-4.6V-Flash", "THUDM/GLM-4-9B-0414", "mistralai/Ministral-3-3B-Instruct-2512",
                                   "Qwen/Qwen2.5-14B-Instruct-1M"])
def test_siblings_of_the_new_descriptions_are_not_read_as_them(model):
    # GLM-4.6V-Flash (9B; GLM-4.6V itself is read as GLM-4.5-Air's decoder since task ellm20 and GLM-4.6 as GLM-4.7
    # since round 15, their llama.cpp caches checked: test_llm_batch30.py, test_llm_ellm20.py), the 9B GLM-4-0414, the 3B Ministral 3 and the 14B 1M model have other geometries
    # (the 8B Ministral 3 is built in since round 59 with its own fields: test_llm_ellm37.py)
    with pytest.raises(UserError, match="never guessed"):
        llm.describe(model=model)
