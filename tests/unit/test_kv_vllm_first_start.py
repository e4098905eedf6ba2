"""Which vLLM start kv's pool is (task card53): V1 compiles the model with torch.compile in its first forward, the
profile run inside memory_profiling (vLLM 0.20.2 gpu_worker.determine_available_memory), and loads the compiled graphs
from ~/.cache/vllm/torch_compile_cache on later starts (compilation/backends.py), so a first start leaves less for the
cache. kv sizes the later start and says so in a note wherever it sizes a pool that torch.compile's profile decides;
--enforce-eager (no torch.compile), a fixed --kv-cache-memory pool and the V0 engine get no note."""
from gpu_garden.memory.llm import kv as K
from gpu_garden.memory.llm.report import format_plan

GiB = 2 ** 30
MODEL = "Qwen/Qwen2.5-7B-Instruct"
SAYS = "the KV pool is a later start's: a first start of this configuration compiles the model"


def _text(vram_gib=23.55, **knobs):
    r = K.plan(K.describe(model=MODEL), runtime="vllm", ctx=32768, vram=vram_gib * GiB, **knobs)
    return r, format_plan(r)


def test_v1_pool_is_named_a_later_starts_with_the_cache_folder():
    r, text = _text()
    assert any(n.startswith(SAYS) for n in r["notes"])
    assert "note: " + SAYS in text
    assert "~/.cache/vllm/torch_compile_cache" in text


def test_enforce_eager_compiles_nothing_so_no_note():
    # config/vllm.py: "Enforce eager set, disabling torch.compile and CUDAGraphs"
    r, _ = _text(enforce_eager=True)
    assert not any(n.startswith(SAYS) for n in r["notes"])


def test_fixed_pool_and_v0_get_no_note():
    r, _ = _text(kv_cache_memory=4 * GiB)  # --kv-cache-memory: the pool is the bytes given, not what the profile leaves
    assert not any(n.startswith(SAYS) for n in r["notes"])
    r, _ = _text(runtime_version="0.7.3", vllm_engine="v0")
    assert not any(n.startswith(SAYS) for n in r["notes"])


def test_no_pool_no_note():
    # Qwen2.5-7B's 14.19 GiB of weights do not fit 12 GiB: no pool, nothing to say about it
    r, _ = _text(vram_gib=12)
    assert r["kv_capacity_bytes"] <= 0
    assert not any(n.startswith(SAYS) for n in r["notes"])
