"""Task ellm29: LLM batch 42 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("repo, builtin", [
    ("mistralai/Mistral-Nemo-Base-2407", "Mistral-Nemo-12B"),   # Mistral-Nemo-12B.json's _source
    ("CohereForAI/c4ai-command-r-v01", "Command-R-v01"),        # Command-R-v01.json's _source
])
def test_a_builtins_own_repo_resolves(repo, builtin):
    # suggestions() offers these repo ids; before, both were refused as unknown
    assert llm.describe(model=repo).name == builtin


def test_mistral_nemo_instruct_2407():
    # deepyes02/yeti-ai llama_server.log (b6050): the Instruct-2407 GGUF, 'Metal KV buffer size = 640.00 MiB' at 4096
    # cells, f16: 40 layers x 2 x 8 KV heads x 128 x 2 bytes = 163,840 B a cell
    s = llm.describe(model="mistralai/Mistral-Nemo-Instruct-2407")
    assert s.name == "Mistral-Nemo-12B"
    assert s.max_ctx == 131072  # the Instruct config's max_position_embeddings (the Base says 1,024,000)
    assert llm.describe(model="mistralai/Mistral-Nemo-Base-2407").max_ctx == 1024000
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q5_K_M")
    assert r["kv_per_token"] == 40 * 2 * 8 * 128 * 2 == 163_840
    assert r["kv_total"] == 4096 * 163_840 == 640 * MiB
    # untied: 2 x 131072 x 5120 + 40 x (5120 x 4096 x 2 + 5120 x 1024 x 2 + 3 x 5120 x 14336 + 2 x 5120) + 5120
    assert s.params == 1_342_177_280 + 40 * 272_640_000 + 5120 == 12_247_782_400


def test_other_nemo_models_are_not_read_as_it():
    with pytest.raises(UserError, match="unknown model"):
        llm.describe(model="nvidia/Mistral-NeMo-Minitron-8B-Base")


# umbc-research/Ticket-LLM ollama_server.log (0.13.5, L40S): load request KvSize:90000 with flash attention; the llama
# runner prints 'llama_context: n_ctx = 90112' and its KV buffer 11264.00 MiB (llama.cpp pads n_ctx to 256 cells with
# flash attention); device.go's estimate 'kv cache 11.0 GiB' is num_ctx's 11250 MiB
TICKET = {"id": "t", "runtime": "ollama", "version": "0.13.5", "vram_gib": 43.9, "gpu": "NVIDIA L40S 48 GB",
          "input": {"model": "llama3.1:8b", "ctx": 90000, "parallel": 1, "flash_attn": "on"},
          "measured": {"kv_mib": 11264.0},
          "notes": ["runner: 'offloaded 33/33 layers'; KV 11264.00 MiB (90112 cells, 32 layers, f16)"]}


def test_an_ollama_runner_kv_quote_is_scored_against_the_allocation():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    assert b.quotes_runner_kv(TICKET)
    res = b._plan(TICKET)[1]
    assert res["ollama_kv_allocated"] == 90112 * 32 * 2 * 8 * 128 * 2 == 11264 * MiB
    assert res["kv_total"] == 90000 * 32 * 2 * 8 * 128 * 2 == 11250 * MiB  # the estimate's figure
    # another figure than the row's kv_mib (the estimate quoted beside the runner line) keeps the estimate
    assert not b.quotes_runner_kv(dict(TICKET, measured={"kv_mib": 11250.0}))
    assert not b.quotes_runner_kv(dict(TICKET, notes=["device.go: kv cache CUDA0 11.0 GiB"]))


@pytest.mark.parametrize("version, gpu, engine, total", [
    # 0.9.0: get_kv_cache_config calls unify_hybrid_kv_cache_specs always: 48 layers x 32768 x 8192 B
    ("0.9.0", "NVIDIA H100 80GB HBM3", None, 48 * 32768 * 8192),
    # 0.9.1: the hybrid manager is on on CUDA (unify only when disabled): 8 full layers x 32768 x 8192 B and 40 sliding
    # ones x (cdiv(1023 + 2048, 16) + 1) x 16 = 3088 tokens x 8192 B
    ("0.9.1", "NVIDIA H100 80GB HBM3", None, 8 * 32768 * 8192 + 40 * 3088 * 8192),
    ("0.9.2", "NVIDIA H100 80GB HBM3", None, 3_159_359_488),
    # off CUDA/ROCm VllmConfig.__post_init__ disables it; V0 has no hybrid manager
    ("0.9.1", "Intel Arc Pro B70", None, 48 * 32768 * 8192),
    ("0.9.1", "NVIDIA H100 80GB HBM3", "v0", 48 * 32768 * 8192),
])
def test_vllm_hybrid_manager_from_091(version, gpu, engine, total):
    # Gemma-3-12B: 48 layers, 5 of 6 sliding (window 1024), 8 KV heads x 256: 2 x 8 x 256 x 2 = 8192 B a token a layer
    s = llm.describe(model="google/gemma-3-12b-it")
    r = llm.plan(s, "vllm", ctx=32768, runtime_version=version, vram=80 * GiB, gpu_name=gpu,
                 max_num_batched_tokens=2048, vllm_engine=engine)
    assert r["kv_total"] == total


def test_codestral_22b_is_built_in():
    # the GGUF fields of manuelGarciaAcha/Agentic_MalGen ollama-server.log (a Codestral-22B-v0.1 fine-tune, vocab 32771,
    # 'model params = 22.25 B'); untied: 2 x vocab x 6144 + 56 x (2 x 6144^2 + 2 x 6144 x 1024 + 3 x 6144 x 16384
    # + 2 x 6144) + 6144
    s = llm.describe(model="mistralai/Codestral-22B-v0.1")
    assert s.name == "Codestral-22B"
    layer = 2 * 6144 ** 2 + 2 * 6144 * 1024 + 3 * 6144 * 16384 + 2 * 6144
    assert s.params == 2 * 32768 * 6144 + 56 * layer + 6144 == 22_247_282_688
    assert round((s.params + 2 * 3 * 6144) / 1e9, 2) == 22.25  # the log's figure with the fine-tune's 3 added tokens
    # device.go 'kv cache 7.0 GiB' at KvSize 32768, f16: 56 x 2 x 8 x 128 x 2 B a token
    r = llm.plan(s, "ollama", ctx=32768, weights_dtype="Q4_K_M")
    assert r["kv_per_token"] == 229_376 and r["kv_total"] == 7 * GiB
