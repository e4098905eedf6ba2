"""Task fix4: review rev4's findings on vLLM's ROCm FP8 row padding (runtimes/vllm_rocm_fp8.py) and Ollama 0.30.0's
release candidates, with hand-worked figures for the deliberate errors rev4 found uncaught.

The rule (fp8_utils._maybe_pad_fp8_weight, vllm#13231): an FP8 linear weight [rows, width] of one GPU whose row
(width x 1 byte) is a multiple of 512 bytes keeps 256 bytes more a row. Only an FP8 checkpoint pads (vLLM's online
--quantization fp8 does not: Fp8OnlineLinearMethod), compressed-tensors FP8 only from vLLM 0.11.0 (vllm#21404).
"""
import json

MIB = 2**20


def _kv():
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    from gpu_garden.memory.llm.runtimes import vllm_rocm_fp8 as R
    return K, R


# --- widths that are not multiples of 512 (catches ROW_ALIGN 512 -> 256 and testing rows instead of width) -------
# Gemma-3-27B (google/gemma-3-27b-it's config): hidden 5376 = 10.5 x 512, 32 query heads and 16 KV heads of 128,
# MLP 21504, 62 layers, at TP 1 as an FP8 checkpoint:
#   qkv     rows (32 + 2 x 16) x 128 = 8192, width 5376: 5376 % 512 = 256, no padding (8192 rows would pad if the
#           rows were tested)
#   o_proj  rows 5376, width 32 x 128 = 4096 = 8 x 512: pads 5376 rows
#   gate_up rows 2 x 21504 = 43008, width 5376: no padding (5376 = 21 x 256 would pad with a 256-byte alignment)
#   down    rows 5376, width 21504 = 42 x 512: pads 5376 rows
#   62 x (5376 + 5376) = 666,624 rows x 256 B = 170,655,744 B
GEMMA3_PAD = 62 * (5376 + 5376) * 256


def test_widths_that_are_not_multiples_of_512():
    from dataclasses import replace
    K, R = _kv()
    assert GEMMA3_PAD == 170_655_744 and 5376 % 512 == 256 and 4096 % 512 == 0 and 21504 % 512 == 0
    g = replace(K.describe(model="google/gemma-3-27b-it"), quant="fp8")   # as an FP8 checkpoint
    assert (g.hidden, g.n_heads, g.n_kv_heads, g.head_dim_k, g.intermediate, g.n_layers) == (5376, 32, 16, 128, 21504, 62)
    assert R.padding_bytes(g, "fp8", 1, True, None) == GEMMA3_PAD


# --- TP above the KV heads (catches kvp = kv // tp without max(1, .), o_proj / out_proj widths not split by tp) ----
# Qwen3.8-27B-FP8 at TP 8 (hidden 5120, 24 query heads doubled by the output gate, 4 KV heads of 256, MLP 17408;
# 16 full-attention layers (every 4th) and 48 DeltaNet layers of 16 x 128 keys and 48 x 128 values):
#   full      qkv rows 24 / 8 x 2 x 256 + max(1, 4 // 8) x (256 + 256) = 1536 + 512 = 2048, width 5120: pads
#             o_proj width 24 x 256 / 8 = 768 (1.5 x 512): no padding
#             gate_up rows 2 x 17408 / 8 = 4352, width 5120: pads;  down width 17408 / 8 = 2176 (4.25 x 512): no
#             -> 2048 + 4352 = 6400 rows
#   DeltaNet  in_proj_qkvz rows (2 x 16 x 128 + 2 x 48 x 128) / 8 = 2048, width 5120: pads
#             out_proj width 48 x 128 / 8 = 768: no padding;  gate_up 4352 pads;  down no
#             -> 2048 + 4352 = 6400 rows
#   64 x 6400 = 409,600 rows x 256 B = 104,857,600 B (100 MiB)
QWEN_TP8 = 64 * 6400 * 256


def test_tp_above_the_kv_heads():
    K, R = _kv()
    assert QWEN_TP8 == 104_857_600 == 100 * MIB
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    assert R.padding_bytes(s, "fp8", 8, True, None) == QWEN_TP8


# --- MLA, the indexer, shared experts and an MoE model's dense first layers (GLM-5-FP8 at TP 8) -------------------
# zai-org/GLM-5-FP8: hidden 6144, 64 heads, q_lora 2048, kv_lora 512, rope 64, qk_nope 192, v_head 256, indexer
# 32 heads x 128 on every layer, 78 layers of which the first 3 dense (MLP 12288) and 75 MoE (shared expert 2048):
#   attention, every layer:
#     fused q_a + kv_a (replicated)  rows 2048 + 512 + 64 = 2624, width 6144 = 12 x 512: pads
#     q_b_proj   rows 64 x (192 + 64) / 8 = 2048, width 2048: pads
#     kv_b_proj  rows 64 x (192 + 256) / 8 = 3584, width 512: pads
#     o_proj     rows 6144, width 64 x 256 / 8 = 2048: pads
#     indexer wq_b (replicated) rows 32 x 128 = 4096, width 2048: pads
#     -> 2624 + 2048 + 3584 + 6144 + 4096 = 18,496 rows
#   dense MLP (layers 0-2): gate_up rows 2 x 12288 / 8 = 3072, width 6144: pads; down rows 6144, width 1536: pads
#     -> 9216 rows
#   shared expert (75 MoE layers): gate_up rows 2 x 2048 / 8 = 512, width 6144: pads; down width 2048 / 8 = 256: no
#     -> 512 rows (the routed experts never pad)
#   78 x 18,496 + 3 x 9216 + 75 x 512 = 1,442,688 + 27,648 + 38,400 = 1,508,736 rows x 256 B = 386,236,416 B
GLM5_ROWS = 78 * 18_496 + 3 * 9216 + 75 * 512


def test_mla_indexer_shared_experts_dense_layers():
    K, R = _kv()
    assert 2624 + 2048 + 3584 + 6144 + 4096 == 18_496 and GLM5_ROWS == 1_508_736
    s = K.describe(model="zai-org/GLM-5-FP8")
    assert (s.hidden, s.n_heads, s.mla_q_lora, s.kv_lora_rank, s.qk_rope_head_dim) == (6144, 64, 2048, 512, 64)
    assert sum(1 for m in s.moe_layers if not m) == 3 and s.shared_intermediate == 2048 and s.intermediate == 12288
    assert R.padding_bytes(s, "fp8", 8, True, None) == GLM5_ROWS * 256 == 386_236_416


def test_glm5_row_through_the_score():
    # vllm-tritonex-glm5-fp8-tp8-mi300x-128k-weights-only: kv's weights with the padding above in them (kept as
    # the bench scored them when the padding was added, 89.123 GiB; the row prints 'Model loading took')
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    rows = {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}
    kv = b.score(rows["vllm-tritonex-glm5-fp8-tp8-mi300x-128k-weights-only"])["weights_gib"][0]
    assert kv == 89.123


# --- a partial quant_skip on a fused module (catches `not all(...)` -> `not any(...)`) ----------------------------
def test_partial_skip_of_a_fused_module_still_pads():
    # vLLM refuses a fused module some of whose shards are skipped and others not (is_layer_skipped); kv keeps the
    # fused qkv padded unless every shard is skipped. Qwen3.8-27B-FP8 at TP 1 pads 3,899,392 rows (test_kv_ellm67):
    # skipping q_proj alone leaves it; skipping q, k and v takes off 16 layers x 14,336 qkv rows x 256 B.
    from dataclasses import replace
    K, R = _kv()
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    full = 3_899_392 * 256
    assert R.padding_bytes(replace(s, quant_skip=("self_attn.q_proj",)), "fp8", 1, True, None) == full
    every = replace(s, quant_skip=("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"))
    assert R.padding_bytes(every, "fp8", 1, True, None) == full - 16 * 14_336 * 256


# --- B1: online FP8 does not pad; an FP8 checkpoint (or MiniMax's FP8-only release) does --------------------------
def test_online_fp8_does_not_pad():
    K, R = _kv()
    base = K.describe(model="Qwen/Qwen3.8-27B")                 # 16-bit checkpoint + --weights-dtype fp8: online
    assert base.quant is None and R.padding_bytes(base, "fp8", 1, True, None) == 0
    assert "online --quantization fp8" in R.unpadded_note(base, "fp8", True, None)
    # MiniMax-M2.x is released only as FP8 (FP8_RELEASED): the base name with fp8 pads its attention at TP 4,
    # 62 x 5120 rows x 256 B (test_kv_ellm67)
    m = K.describe(model="MiniMaxAI/MiniMax-M2.5")
    assert m.quant is None and R.padding_bytes(m, "fp8", 4, True, None) == 62 * 5120 * 256


def test_online_fp8_in_the_plan():
    K, R = _kv()
    kw = dict(runtime="vllm", ctx=8192, vram=191.98 * 2**30, weights_dtype="fp8", runtime_version="0.19.0")
    cuda = K.plan(K.describe(model="Qwen/Qwen3.8-27B"), **kw)
    online = K.plan(K.describe(model="Qwen/Qwen3.8-27B"), gpu_name="AMD Instinct MI300X", **kw)
    ckpt = K.plan(K.describe(model="Qwen/Qwen3.8-27B-FP8"), gpu_name="AMD Instinct MI300X", **kw)
    assert online["weights"] == cuda["weights"]                       # 28.31 GiB, nothing added
    assert ckpt["weights"] - cuda["weights"] == 3_899_392 * 256       # + 952 MiB
    assert any("Fp8OnlineLinearMethod" in n for n in online["notes"])


# --- B2: compressed-tensors FP8 pads from vLLM 0.11.0 (vllm#21404); from_config sets fp8_ct and fp8_channel --------
# Llama-3.1-8B at TP 1: qkv 4096 + 2 x 1024 = 6144 rows, o 4096, gate_up 28672 (width 4096), down 4096 (width
# 14336 = 28 x 512): 43,008 rows a layer x 32 layers = 1,376,256 rows x 256 B = 352,321,536 B = 336 MiB
LLAMA8_PAD = 32 * (6144 + 4096 + 28672 + 4096) * 256


def _ct_config(tmp_path, strategy):
    from pathlib import Path
    cfg = json.loads((Path(__file__).resolve().parents[2] / "memory/llm/models/Llama-3.1-8B.json").read_text())
    cfg["quantization_config"] = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {
        "group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": strategy,
                                                       "symmetric": True, "dynamic": False}}}, "ignore": ["lm_head"]}
    p = tmp_path / f"ct_{strategy}.json"
    p.write_text(json.dumps(cfg))
    return str(p)


def test_compressed_tensors_fp8_pads_from_0_11(tmp_path):
    K, R = _kv()
    assert LLAMA8_PAD == 336 * MIB
    s = K.describe(config=_ct_config(tmp_path, "tensor"))
    assert s.quant == "fp8" and s.fp8_ct and not s.fp8_channel
    assert R.padding_bytes(s, "fp8", 1, True, (0, 9, 2)) == 0          # before vllm#21404
    assert R.padding_bytes(s, "fp8", 1, True, (0, 10, 2)) == 0
    assert R.padding_bytes(s, "fp8", 1, True, (0, 11, 0)) == LLAMA8_PAD
    assert R.padding_bytes(s, "fp8", 1, True, None) == LLAMA8_PAD
    # the same from an llm-compressor repo name, and fp8.py's own FP8 checkpoints from 0.8.0
    n = K.describe(model="RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8")
    assert n.fp8_ct and R.padding_bytes(n, "fp8", 1, True, (0, 9, 2)) == 0
    assert R.padding_bytes(n, "fp8", 1, True, (0, 11, 0)) == LLAMA8_PAD
    q = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    assert not q.fp8_ct and R.padding_bytes(q, "fp8", 1, True, (0, 9, 2)) == 3_899_392 * 256


def test_from_config_reads_a_channel_strategy(tmp_path):
    K, R = _kv()
    s = K.describe(config=_ct_config(tmp_path, "channel"))
    assert s.fp8_channel and s.fp8_ct                                  # set by spec.from_config
    assert R.padding_bytes(s, "fp8", 1, True, None) == 0
    assert "channel-wise FP8" in R.unpadded_note(s, "fp8", True, None)


# --- B3: under pipeline parallelism the note and the weights line give stage 0's own layers' padding ---------------
# Qwen3.8-27B-FP8 at TP 1, PP 2: full attention on layers 3, 7, 11, ... (every 4th). Stage 0 holds layers 0-31:
# 8 full x 59,392 + 24 DeltaNet x 61,440 rows = 1,949,696 rows x 256 B = 499,122,176 B (476 MiB). An uneven
# --pp-layer-partition 31,33: layers 0-30, 7 full + 24 DeltaNet = 415,744 + 1,474,560 = 1,890,304 rows = 483,917,824 B.
def test_pp_note_gives_the_stage_figure():
    K, R = _kv()
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    kw = dict(runtime="vllm", ctx=32768, vram=287.98 * 2**30, weights_dtype="fp8", gpu_memory_utilization=0.45,
              pipeline_parallel_size=2)
    # rev5 D3 (task fix5): stage 0's figure, "on each of stage 0's GPUs", not "a GPU"
    stage0 = " on each of stage 0's GPUs"
    for extra, pad, text in (({}, (8 * 59_392 + 24 * 61_440) * 256, "476.00 MiB" + stage0),
                             ({"pp_layer_partition": "31,33"}, (7 * 59_392 + 24 * 61_440) * 256, "461.50 MiB" + stage0)):
        cuda = K.plan(s, **kw, **extra)
        rocm = K.plan(s, gpu_name="AMD Instinct MI355X", **kw, **extra)
        assert rocm["weights"] - cuda["weights"] == pad
        note = next(n for n in rocm["notes"] if "_maybe_pad_fp8_weight" in n)
        assert text in note and "952.00 MiB over all 2 stages" in note


# --- the "not enumerated" note (pad None) ---------------------------------------------------------------------------
def test_not_enumerated_note():
    from dataclasses import replace
    K, R = _kv()
    g = replace(K.describe(model="google/gemma-4-31b-it"), quant="fp8")
    assert R.padding_bytes(g, "fp8", 1, True, None) is None
    p = K.plan(g, runtime="vllm", ctx=8192, vram=191.98 * 2**30, weights_dtype="fp8", gpu_name="AMD Instinct MI300X")
    assert any("not enumerated" in n for n in p["notes"])


# --- B4: Ollama 0.30.0's release candidates start llama-server; no version is Ollama's own engine, and says so -----
def test_ollama_release_candidates_run_llama_server():
    K, R = _kv()
    from gpu_garden.memory.llm.runtimes import ollama as OL
    from gpu_garden.memory.llm.runtimes import parse_version
    assert OL.llama_server(parse_version("0.30.0-rc0")) and OL.llama_server(parse_version("0.30.0-rc5"))
    assert OL.llama_server(parse_version("0.30.0")) and not OL.llama_server(parse_version("0.24.0"))
    assert not OL.llama_server(None)
    from support.pack import load_benchmark
    load_benchmark("bench_llm")
    from llm_score import ollama_llama_server
    row = {"runtime": "ollama", "version": "0.30.0-rc5", "measured": {}, "notes": []}
    assert ollama_llama_server(row)
    assert not ollama_llama_server(dict(row, version=None))
    assert not ollama_llama_server(dict(row, version="0.24.0"))


def test_ollama_rc_plan_and_versionless_line():
    K, R = _kv()
    from gpu_garden.memory.llm.report import format_plan
    s = K.describe(model="Qwen3.8-27B")
    rc = format_plan(K.plan(s, runtime="ollama", ctx=262144, vram=288 * 2**30, weights_dtype="Q8_0",
                            runtime_version="0.30.0-rc5"))
    assert "llama-server's CUDA context" in rc and "Ollama's per-GPU minimum reserve" not in rc
    newest = format_plan(K.plan(s, runtime="ollama", ctx=8192, vram=288 * 2**30, weights_dtype="Q8_0"))
    assert "no version: sized as Ollama's own engine" in newest


# --- report.format_plan's other `depends` gates (rev4 M24, M27) -----------------------------------------------------
def _ud_plan():
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    spec = K.describe(model="unsloth/Llama-3.1-8B-Instruct")
    return K.plan(spec, runtime="vllm", ctx=32768, vram=12 * 2**30, weights_dtype="UD-Q4_K_XL")


def test_depends_gates_of_the_pool_lines():
    from gpu_garden.memory.llm.report import format_plan
    r = _ud_plan()
    assert r["depends"] and r["vllm_would_print"]
    text = format_plan(r)
    assert "vLLM would print" not in text                    # the "KV pool ...: vLLM would print" line (M27)
    # V0's refusal: "vLLM prints ..., then refuses to start" (M24), kept out under "depends" as well
    v0 = dict(r, vllm_refusal=dict(r["vllm_refusal"], engine="v0", tokens=16640))
    assert "then refuses to start" not in format_plan(v0)
    assert "then refuses to start" in format_plan(dict(v0, depends=None, weights_range=None))


# --- B5: Ollama's MLX-engine rows (x/mlxrunner) are no llama-server rows ------------------------------------------
def test_ollama_mlx_rows_are_not_llama_server():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    from llm_score import ollama_llama_server
    rows = {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}
    for rid in ("ollama-16586-gemma4-26b-mlx-m5pro-262k-fit", "ollama-16586-qwen36-27b-coding-nvfp4-m5pro-262k-fit",
                "ollama-17246-qwen36-35b-a3b-coding-nvfp4-mac-refused"):
        assert not ollama_llama_server(rows[rid]), rid
    # the same release on a GPU is (0.30.6 >= 0.30.0-rc0)
    assert ollama_llama_server({"runtime": "ollama", "version": "0.30.6", "gpu": "one NVIDIA H100", "input": {}})


# --- D1: a hybrid's KV and RS buffers apart, as llama.cpp's log (and Ollama's from 0.30) prints them --------------
def test_hybrid_kv_and_rs_buffers_apart():
    # Qwen3.8-27B at 262,144: KV buffer 16 x 4 x 256 x 2 x 2 B x 262,144 = 16384.00 MiB; RS buffer 48 DeltaNet layers
    # x (3 x 10,240 x 4 + 48 x 128 x 128 x 4) B = 156,893,184 B = 149.62 MiB (test_kv_ellm67's hand figures)
    K, R = _kv()
    from gpu_garden.memory.llm.report import format_plan
    s = K.describe(model="Qwen3.8-27B")
    kw = dict(ctx=262144, vram=288 * 2**30, weights_dtype="Q8_0")
    for runtime, version in (("ollama", "0.32.14"), ("llama.cpp", None)):
        text = format_plan(K.plan(s, runtime=runtime, runtime_version=version, **kw))
        assert "KV buffer 16.00 GiB + RS buffer 149.62 MiB" in text, runtime
    old = format_plan(K.plan(s, runtime="ollama", runtime_version="0.29.0", **kw))
    assert "RS buffer" not in old and "recurrent state 149.62 MiB" in old     # Ollama's own engine: one figure
