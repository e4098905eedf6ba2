"""Task ellm19 (session 19): batch 46 after its first sight (benchmarks/data/llm_measured.json, batch 46). The Ollama tag
gemma4:latest, the W4A8 weights dtype (compressed-tensors int4 weights x int8 activations), and the Granite 3.0
models built in from their config.json. Expected values are numbers the runtimes printed or sums by hand."""
import pytest

GiB, MiB = 1 << 30, 1 << 20


def _llm():
    from gpu_garden.memory.llm import kv
    return kv


# ---------------------------------------------------------------- gemma4:latest is gemma4:e4b
@pytest.mark.parametrize("tag", ["gemma4:latest", "gemma4", "GEMMA4:latest"])
def test_gemma4_latest_is_e4b(tag):
    # public `ollama list` output names gemma4:latest with ID c6eb396dbd59 and modelfile blob sha256-4c27e0f5...;
    # a gemma4:e4b report prints the same digest and blob (Q4_K_M, 8.0B)
    from gpu_garden.memory.llm.ollama_tags import ollama_tag
    built, quant, note = ollama_tag(tag)
    assert (built, quant) == ("Gemma-4-E4B", "Q4_K_M") and "default build" in note


def test_gemma4_latest_kv_is_the_printed_e4b_cache():
    # codata/ollama ollama.log (batch 46): 'kv cache' Metal 692.0 MiB at KvSize 32768, 1 slot; 6.6 GiB at 10 slots
    llm = _llm()
    s = llm.describe(model="gemma4:latest")
    one = llm.plan(s, "ollama", ctx=32768, weights_dtype="Q4_K_M", runtime_version="0.21.0")
    assert one["kv_total"] == 692 * MiB
    ten = llm.plan(s, "ollama", ctx=32768, parallel=10, weights_dtype="Q4_K_M", runtime_version="0.21.0")
    assert ten["kv_total"] / GiB == pytest.approx(6.6, abs=0.05)


# ---------------------------------------------------------------- W4A8
def test_w4a8_bits_are_int4_plus_a_16_bit_scale_per_group():
    # CompressedTensorsW4A8Int: symmetric (zero_points=False), a params-dtype scale per group; 4 + 16/128 = 4.125,
    # 4 + 16/32 = 4.5; a zero point stated or not changes nothing (the XPU kernel packs int4 with a fixed zero of 8)
    from gpu_garden.memory.llm import weights as W
    assert W.linear_bits("w4a8") == 4.125
    assert W.linear_bits("w4a8", 32) == 4.5
    assert W.linear_bits("w4a8", 128, sym=True) == 4.125


def test_w4a8_sqgptq_tp2_weights_are_the_printed_figure():
    # hotschmoe/b70_ai_things b70_vllm_qwen36-27b-w4a8-sqgptq.log (vLLM 0.23.0, 2x Arc Pro B70, TP 2): TP0 'Model
    # loading took 12.25 GiB'. The checkpoint leaves lm_head and the Gated-DeltaNet layers in BF16 (its recipe's
    # ignore list). All matmuls at 4 bits would be 8.6 GiB (-30 %): the skip list is what makes the figure.
    llm = _llm()
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    kw = dict(ctx=8192, weights_dtype="w4a8", tensor_parallel_size=2, gpu_memory_utilization=0.9, vram=32 * GiB,
              runtime_version="0.23.0", gpu_name="Intel Arc Pro B70", enforce_eager=True)
    r = llm.plan(s, "vllm", quant_skip=["lm_head", "re:.*linear_attn.*"], **kw)
    assert r["weights"] / GiB == pytest.approx(12.25, rel=0.03)
    plain = llm.plan(s, "vllm", **kw)
    assert plain["weights"] / GiB < 12.25 * 0.75


def test_unknown_dtype_error_names_w4a8():
    from gpu_garden.memory.errors import UserError
    llm = _llm()
    with pytest.raises(UserError, match="w4a8"):
        llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=8192, weights_dtype="w4a4")


# ---------------------------------------------------------------- a runtime's own layer split, compared at its count
def _bench():
    from support.pack import load_benchmark
    return load_benchmark("bench_llm")


def test_a_self_placed_row_is_compared_at_the_printed_layer_count():
    # BlazeFiresong18/Doraeon ollama_serve.log (Ollama 0.32.5's llama-server over Vulkan, 4 GB RTX 3050 Laptop):
    # 'offloaded 2/29 layers to GPU', Vulkan0 model buffer 369.23 MiB at -c 131072; 22/29 and 1518.53 MiB at 8192.
    # The plan as asked puts every layer on the GPU (its placed buffer a byte off the full one from rounding): the
    # bench re-plans at the printed count. Compared at all 29 layers it read 1922.8 MiB (+420.8 %, +26.6 %).
    import json
    from pathlib import Path
    b = _bench()
    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/data/llm_measured.json").read_text())["rows"]
    for rid, printed in (("ollama-doraeon-llama32-3b-q4km-3050laptop-vulkan-131k-2of29", 369.23),
                         ("ollama-doraeon-llama32-3b-q4km-3050laptop-vulkan-8k-22of29", 1518.53)):
        row = next(r for r in rows if r["id"] == rid)
        got, want = b.score(row)["weights_gpu_mib"]
        assert want == printed and got == pytest.approx(printed, rel=0.02)


# ---------------------------------------------------------------- Granite 3.0 8B built in
def test_granite30_8b_is_built_in_from_its_config():
    # the config.json copy (Meng0329/skills4s models/granite-3.0-8b-instruct): 40 layers x (4096 x (4096 + 2 x 1024
    # + 4096) + 3 x 4096 x 12800 + 2 x 4096) + 49155 x 4096 (tied) + 4096 = 8,170,848,256 ('model params = 8.17 B');
    # KV: 40 x 8 x 128 x 2 (K, V) x 2 B x 4096 cells = 640 MiB ('SYCL0 KV buffer size = 640.00 MiB',
    # thebiss/llama-cpp-mkl-docker, granite-3.0-8b-instruct-Q4_K_M.gguf, -c 4096)
    llm = _llm()
    s = llm.describe(model="ibm-granite/granite-3.0-8b-instruct")
    assert (s.n_layers, s.n_kv_heads, s.head_dim_k, s.vocab, s.max_ctx, s.tied) == (40, 8, 128, 49155, 4096, True)
    assert s.params == 40 * (4096 * (4096 + 2 * 1024 + 4096) + 3 * 4096 * 12800 + 2 * 4096) + 49155 * 4096 + 4096
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", ngl=99)
    assert r["kv_total"] == 40 * 8 * 128 * 2 * 2 * 4096 == 640 * MiB
    # 'CPU_Mapped model buffer size = 157.51 MiB': the tied token table at Q6_K (49155 x 4096 x 6.5625 bits)
    assert r["host_weights"] / MiB == pytest.approx(157.51, abs=0.01)
