"""Task ellm67 (kv-accuracy round 89, batch 93 after its first sight).

Ollama 0.30 and later start llama.cpp's llama-server (llm/llama_server.go at v0.32.14: "-c" NumCtx x numParallel,
"-np" numParallel; the tree has no model/models or kvcache/ any more, and ml/device.go BackendMemory.Log, which printed
Ollama's own 'kv cache' summary, is not called). So the 'KV buffer size' line an Ollama 0.32 row quotes is llama.cpp's
llama_kv_cache print (src/llama-kv-cache.cpp), which holds the attention layers' cells only; a hybrid model's
recurrent state is llama_memory_recurrent's own 'RS buffer size' line (src/llama-memory-recurrent.cpp), sized for
max(1, n_seq_max) sequences (src/llama-model.cpp recurrent_rs_size), read in TheTom/llama-cpp-turboquant 69d8e4be.

Qwen3.8-27B by hand (64 layers, every 4th full attention: 16 full, 48 Gated DeltaNet):
  KV buffer: 16 layers x 4 KV heads x 256 x (K + V) x 2 B = 65,536 B a cell; x 262,144 cells = 17,179,869,184 B
             = 16384.00 MiB, the printed figure of both batch-93 MI355X starts.
  RS buffer (not in that line): a DeltaNet layer's conv state (kernel 4 - 1) x (2 x 16 x 128 + 48 x 128) x 4 B
             = 3 x 10,240 x 4 = 122,880 B and its delta state 48 heads x 128 x 128 x 4 B = 3,145,728 B;
             48 x 3,268,608 = 156,893,184 B = 149.625 MiB for the one sequence of -np 1: the +0.91 % first sight
             showed (16533.625 against 16384.00).
"""
import json

EXACT_KV = 17_179_869_184           # 16 x 4 x 256 x 2 x 2 x 262,144
STATE = 48 * (3 * 10_240 * 4 + 48 * 128 * 128 * 4)   # 156,893,184
ONE = "ollama-otel-qwen38-27b-q80-mi355x-rocm-262k"
TWO = "ollama-otel-qwen38-27b-q80-2xmi355x-rocm-262k-split"
H100 = "ollama-otel-qwen3-06b-q80-h100-40k"


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_hand_figures():
    assert EXACT_KV == 16384 * 2**20
    assert STATE == 156_893_184 and STATE / 2**20 == 149.625


def test_plan_keeps_the_state_in_its_total():
    # kv's own figure is the memory the start takes: KV buffer plus RS buffer
    b, rows = _rows()
    from llm_score import _plan
    _, res = _plan(rows[ONE])
    assert res["kv_detail"]["full_layers"] == EXACT_KV
    assert res["kv_detail"]["recurrent_state"] == STATE
    assert res["kv_total"] == EXACT_KV + STATE


def test_ollama_llama_server_kv_line_is_llamacpps():
    b, rows = _rows()
    for rid in (ONE, TWO):
        s = b.score(rows[rid])
        assert s["kv"] == (16384.0, 16384.0, "MiB")   # without the state: exact
        assert s["kv_exact"] is True


def test_only_releases_that_start_llama_server():
    from llm_score import ollama_llama_server
    b, rows = _rows()
    row = rows[ONE]
    assert ollama_llama_server(row)                              # 0.32.14
    assert ollama_llama_server(dict(row, version="0.30.0"))
    assert not ollama_llama_server(dict(row, version="0.29.9"))  # its own engine: its 'kv cache' line holds the state
    assert not ollama_llama_server(dict(row, runtime="llama.cpp"))
    # a non-hybrid model loses nothing: the H100 Qwen3-0.6B start, 28 x 8 x 128 x 2 x 2 B x 40,960 = 4480 MiB
    s = b.score(rows[H100])
    assert s["kv"] == (4480.0, 4480.0, "MiB")


def test_ollama_llama_server_weights_are_the_files():
    """Ollama >= 0.30 prints no memory.weights.total (Ollama's own-engine figure, blocks + output: plan's
    ollama_weights_total); a weights_mib / weights_gib such a row quotes is llama-server's (its model buffers summed, or
    print_info's file size), so the bench compares the whole file, as for a llama.cpp row.
    The two-MI355X start by hand: token table 248,320 x 5,120 x 34/32 B (Q8_0) = 1,350,860,800 B (the printed
    CPU_Mapped 1288.28 MiB), the untied output the same, blocks 25,910,300,785 B (kv's Q8_0 estimate): 28,612,022,385 B
    = 26.647 GiB against 27260.57 MiB = 26.6217 GiB printed (+0.1 %); blocks + output alone were 25.389 GiB (-4.6 %)."""
    b, rows = _rows()
    assert 248_320 * 5_120 * 34 // 32 == 1_350_860_800
    assert round((2 * 1_350_860_800 + 25_910_300_785) / 2**30, 3) == 26.647
    assert b.score(rows[TWO])["weights_gib"] == (26.647, 26.6217)
    # gpt-oss:120b on Ollama 0.30.7 (batch 48): its weights_gib is print_info's file size, 60.87 GiB
    s = b.score(rows["ollama-kgbench-gptoss120b-mxfp4-h100l94c-16k-fit"])
    assert s["weights_gib"] == (60.693, 60.87)


# --- session 41's review item (rev3 V8): report.format_plan prints vLLM's refusal (vllm_refusal.py, _refusal_line) only
# when the verdict neither shares the pool in full (share_full: no pool at all) nor depends on the file (an Unsloth
# Dynamic name alone: unsloth.plan_range keeps the upper end's figures, its refusal among them, while the lower end
# fits). Printing "vLLM refuses to start" there would contradict the verdict line above it.

def _ud_plan(**kw):
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    spec = K.describe(model="unsloth/Llama-3.1-8B-Instruct")
    return K.plan(spec, runtime="vllm", ctx=32768, vram=12 * 2**30, weights_dtype="UD-Q4_K_XL", **kw)


def test_refusal_not_printed_when_the_verdict_depends_on_the_file():
    from gpu_garden.memory.llm.report import format_plan
    r = _ud_plan()
    # Llama-3.1-8B: 32 x 8 x 128 x 2 x 2 B = 131,072 B a token; 32,768 tokens = 4 GiB for one request. The upper end
    # (Q8_0 throughout, 8,565,707,008 B) leaves a pool of 2,181,470,854 B < 4 GiB: refused; the lower end (Q4_K, 4.24
    # GiB) leaves about 3.7 GiB more: it fits. So the verdict depends, and the upper end's refusal stays in the answer.
    assert r["weights_range"] == [4_550_576_384, 8_565_707_008]
    assert r["depends"] and r["vllm_refusal"]["needed_bytes"] == 32768 * 131072 == 4 * 2**30
    assert r["vllm_refusal"]["available_bytes"] == r["kv_capacity_bytes"] == 2_181_470_854
    text = format_plan(r)
    assert "depends on the file" in text
    assert "vLLM refuses to start" not in text       # fails with the gate removed (report.py format_plan)


def test_refusal_not_printed_when_there_is_no_pool():
    # no plan today carries a refusal with an empty pool (plan_answer._vllm_kv_refusal returns at ev["pool"] <= 0), so the
    # other half of the gate is checked on a refused plan given an empty pool: its verdict is the weights' line alone
    from gpu_garden.memory.llm.report import format_plan
    r = _ud_plan()
    full = dict(r, depends=None, kv_capacity_bytes=0, weights_range=None)
    text = format_plan(full)
    assert "does NOT fit" in text and "vLLM refuses to start" not in text
    # and the same plan with a pool prints the refusal (the line the gate keeps out)
    text = format_plan(dict(r, depends=None, weights_range=None))
    assert "vLLM refuses to start: one request of 32,768 tokens needs 4.00 GiB of KV cache, more than the " \
           "available 2.03 GiB" in text


# --- vLLM's ROCm FP8 weight padding (runtimes/vllm_rocm_fp8.py; fp8_utils.py _maybe_pad_fp8_weight read in
# 1CatAI/1Cat-vLLM ae13773a, upstream vllm#13231, first in v0.8.0): on ROCm with VLLM_ROCM_FP8_PADDING=1 (default), an
# FP8 linear weight [rows, width] of one GPU whose row (width x 1 byte) is a multiple of 512 bytes keeps 256 bytes more
# a row. Round 88's hand figures for Qwen3.8-27B (hidden 5120, MLP 17408, 16 full-attention layers of 24 query heads
# (doubled by the output gate) and 4 KV heads of 256, 48 DeltaNet layers of 16 x 128 keys and 48 x 128 values):
#   TP 1: full layer  qkv (2 x 24 + 2 x 4) x 256 = 14336, o 5120, gate_up 34816, down 5120       = 59392 rows
#         DeltaNet    in_proj_qkvz 2 x 2048 + 2 x 6144 = 16384, out_proj 5120, gate_up, down      = 61440 rows
#         16 x 59392 + 48 x 61440 = 3,899,392 rows x 256 B = 998,244,352 B = 952 MiB (every width 5120, 6144, 17408
#         is a multiple of 512)
#   TP 2: full 7168 + 5120 + 17408 + 5120 = 34816; DeltaNet 8192 + 5120 + 17408 + 5120 = 35840 (row-split widths
#         3072, 3072, 8704 = 17 x 512 still pad): 16 x 34816 + 48 x 35840 = 2,277,376 rows = 583,008,256 B = 556 MiB
# in_proj_b / in_proj_a (48 rows each) stay unquantized in a block checkpoint (validate_fp8_block_shape) and are not
# counted. The routed experts never pad (no MoE method calls it): MiniMax-M2.5 at TP 4 pads its attention alone,
# 62 layers x (qkv 48 / 4 x 128 + 2 x 8 / 4 x 128 = 2048 rows of width 3072, o_proj 3072 rows of width 1536)
# = 62 x 5120 x 256 = 81,264,640 B.
PAD_TP1, PAD_TP2 = 3_899_392 * 256, 2_277_376 * 256
MI355X_TP1 = "vllm-otel-qwen38-27b-fp8-mi355x-tp1-32k-u045-noaiter"
MI355X_TP2 = "vllm-otel-qwen38-27b-fp8-2xmi355x-tp2-32k-u045-noaiter"


def _kv():
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    from gpu_garden.memory.llm.runtimes import vllm_rocm_fp8 as R
    return K, R


def test_rocm_fp8_padding_by_hand():
    K, R = _kv()
    assert 16 * 59392 + 48 * 61440 == 3_899_392 and 16 * 34816 + 48 * 35840 == 2_277_376
    assert PAD_TP1 == 952 * 2**20 and PAD_TP2 == 556 * 2**20
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    assert R.padding_bytes(s, "fp8", 1, True, None) == PAD_TP1
    assert R.padding_bytes(s, "fp8", 2, True, None) == PAD_TP2
    m = K.describe(model="MiniMaxAI/MiniMax-M2.5")
    assert R.padding_bytes(m, "fp8", 4, True, None) == 62 * 5120 * 256


def test_rocm_fp8_padding_gates():
    K, R = _kv()
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    assert R.padding_bytes(s, "fp8", 1, False, None) == 0            # CUDA: no padding
    assert R.padding_bytes(s, "bf16", 1, True, None) == 0            # FP8 weights only
    assert R.padding_bytes(s, "fp8", 1, True, (0, 7, 3)) == 0        # before vllm#13231 (v0.8.0)
    assert R.padding_bytes(s, "fp8", 1, True, (0, 8, 0)) == PAD_TP1
    # channel-wise FP8 (llm-compressor FP8_DYNAMIC: process_fp8_weight_channel_strategy) does not pad
    d = K.describe(model="RedHatAI/DeepSeek-R1-Distill-Qwen-14B-FP8-dynamic")
    assert d.fp8_channel and R.padding_bytes(d, "fp8", 1, True, None) == 0
    assert not K.describe(model="Qwen/Qwen3.8-27B-FP8").fp8_channel
    from gpu_garden.memory.llm.quant_config import _fp8_channel
    assert _fp8_channel({"config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}})
    assert not _fp8_channel({"config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}})
    # a module the checkpoint leaves unquantized does not pad: every layer's MLP kept 16-bit takes off, at TP 1,
    # 64 layers x (34816 + 5120) rows x 256 B
    from dataclasses import replace
    kept = replace(s, quant_skip=("mlp",))
    assert R.padding_bytes(kept, "fp8", 1, True, None) == PAD_TP1 - 64 * (34816 + 5120) * 256


def test_rocm_fp8_padding_in_the_plan():
    K, R = _kv()
    s = K.describe(model="Qwen/Qwen3.8-27B-FP8")
    kw = dict(runtime="vllm", ctx=32768, vram=287.98 * 2**30, weights_dtype="fp8", gpu_memory_utilization=0.45)
    for tp, pad in ((1, PAD_TP1), (2, PAD_TP2)):
        cuda = K.plan(s, tensor_parallel_size=tp, **kw)
        rocm = K.plan(s, tensor_parallel_size=tp, gpu_name="AMD Instinct MI355X", **kw)
        assert rocm["weights"] - cuda["weights"] == pad
        assert any("_maybe_pad_fp8_weight" in n for n in rocm["notes"])


def test_rocm_fp8_padding_rows():
    # printed 'Model loading took' 29.38 GiB (TP 1) and 14.9 GiB a GPU (TP 2); 28.307 + 0.930 and 14.169 + 0.543, and
    # since task kv66/kv67 vLLM's MRotaryEmbedding cos/sin table (Qwen 3.8's rope has an mrope_section), whole on each
    # GPU: 262,144 x 4 positions x 64 rotary values x 2 B = 134,217,728 B instead of 33,554,432, 100,663,296 B =
    # 0.09375 GiB more: 29.237 + 0.094 = 29.331 and 14.712 + 0.094 = 14.806 (both closer to the printed figures)
    b, rows = _rows()
    assert b.score(rows[MI355X_TP1])["weights_gib"] == (29.331, 29.38)
    assert b.score(rows[MI355X_TP2])["weights_gib"] == (14.806, 14.9)
