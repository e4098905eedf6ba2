"""Task fix11: mends to review rev10's findings, each test failing with its change reverted."""
import pytest

from gpu_garden.memory.errors import UserError
from support.gguf_files import close_written, quantized_writer

ATTN = r"blk\.([0-9]|[1-4][0-9])\.attn_.*\.weight=CPU"


# B1 / B2. -ot attention tensors with --gguf FILE: the bytes come from the file's own tensor table (gguf.py records each
# layer's blk.N.attn_* tensors as it records expert_file_bytes), not the type-average estimate, which took a GGUF spec's
# params (experts included, expert_params 0) against bytes without the experts; a dense qwen35 file is read the same.
# Before the change a --gguf spec (arch qwen35moe / qwen35, as the file names it) was not read at all: the attention
# pattern was refused ('also matches blk.0.attn_norm.weight') and cpu_attn_bytes gave zeros.
# The file: 4 layers, hidden 256, layers 0-2 DeltaNet (head_count_kv 0), layer 3 attention (4 heads, 2 KV heads x 64);
# matrices Q8_0 (34 B a 32-value block), norms F32:
#   DeltaNet layer: attn_qkv 384 x 256 = 98,304 values -> 104,448 B; attn_gate 256 x 256 = 65,536 -> 69,632 B;
#     attn_norm 256 x 4 = 1,024 B; sum 175,104 B
#   attention layer: attn_q 512 x 256 = 131,072 -> 139,264 B; attn_k = attn_v 128 x 256 = 32,768 -> 34,816 B each;
#     attn_output 256 x 256 -> 69,632 B; attn_norm 1,024 B, attn_q_norm / attn_k_norm 64 x 4 = 256 B each; sum 280,064 B
#   all four: 3 x 175,104 + 280,064 = 805,376 B
def _qwen35_gguf(path, moe=True):
    pytest.importorskip("gguf")
    w, put = quantized_writer(path, "qwen35moe" if moe else "qwen35", (
        ("add_block_count", 4), ("add_context_length", 32768), ("add_embedding_length", 256),
        ("add_feed_forward_length", 512), ("add_head_count", 4), ("add_head_count_kv", [0, 0, 0, 2]),
        ("add_key_length", 64), ("add_value_length", 64), ("add_vocab_size", 1000), ("add_file_type", 7)))
    if moe:
        w.add_expert_count(8)
        w.add_expert_used_count(2)
        w.add_expert_feed_forward_length(128)
    put("token_embd.weight", "Q8_0", (1000, 256))
    put("output.weight", "Q8_0", (1000, 256))
    for i in range(4):
        put(f"blk.{i}.attn_norm.weight", "F32", (256,))
        if i == 3:
            for n, rows in (("q", 512), ("k", 128), ("v", 128), ("output", 256)):
                put(f"blk.{i}.attn_{n}.weight", "Q8_0", (rows, 256))
            put(f"blk.{i}.attn_q_norm.weight", "F32", (64,))
            put(f"blk.{i}.attn_k_norm.weight", "F32", (64,))
        else:
            put(f"blk.{i}.attn_qkv.weight", "Q8_0", (384, 256))
            put(f"blk.{i}.attn_gate.weight", "Q8_0", (256, 256))
            put(f"blk.{i}.ssm_out.weight", "Q8_0", (256, 256))
        if moe:
            for p in ("gate", "up"):
                put(f"blk.{i}.ffn_{p}_exps.weight", "Q8_0", (8, 128, 256))
            put(f"blk.{i}.ffn_down_exps.weight", "Q8_0", (8, 256, 128))
        else:
            for p in ("gate", "up"):
                put(f"blk.{i}.ffn_{p}.weight", "Q8_0", (512, 256))
            put(f"blk.{i}.ffn_down.weight", "Q8_0", (256, 512))
    close_written(w)
    return str(path)


@pytest.mark.parametrize("moe", [True, False])
def test_ot_attention_bytes_from_the_gguf_table(tmp_path, moe):
    from gpu_garden.memory.llm import spec as llm_spec
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import cpu_attn_bytes, override_cpu_layers
    spec = llm_spec.load_gguf(_qwen35_gguf(tmp_path / "q.gguf", moe))  # as kv --gguf FILE builds it
    assert spec.arch == ("qwen35moe" if moe else "qwen35") and bool(spec.n_experts) == moe
    assert cpu_attn_bytes(spec, [ATTN]) == (175_104, 175_104, 175_104, 280_064)
    assert sum(cpu_attn_bytes(spec, [ATTN])) == 805_376
    # one layer's attn_q alone, and the first override deciding (layer 3 kept on the one device)
    assert cpu_attn_bytes(spec, [r"blk\.3\.attn_q\.weight=CPU"]) == (0, 0, 0, 139_264)
    assert cpu_attn_bytes(spec, [r"blk\.3\.=CUDA0", ATTN], True) == (175_104, 175_104, 175_104, 0)
    exps = [r"blk\.[0-3]\.ffn_.*_exps\.weight=CPU"] if moe else []
    layers, _ = override_cpu_layers(spec, exps + [ATTN])  # accepted, not refused for blk.0.attn_norm
    assert layers == ((0, 1, 2, 3) if moe else ())
    with pytest.raises(UserError, match="also matches blk.0.ssm_out.weight"):  # ssm_* are not attn_ names
        override_cpu_layers(spec, [r"blk\.0\.ssm_out\.weight=CPU"])


def test_ot_attention_moves_a_gguf_files_bytes_to_the_host(tmp_path):
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm import spec as llm_spec
    spec = llm_spec.load_gguf(_qwen35_gguf(tmp_path / "q.gguf", moe=False))
    kw = dict(ctx=4096, parallel=1, vram=8 << 30, ngl=999, runtime_version="b8829")
    one = llm.plan(spec, "llama.cpp", **kw)
    two = llm.plan(spec, "llama.cpp", override_tensor=[ATTN], **kw)
    assert two["host_weights"] - (one["host_weights"] or 0) == 805_376 and one["weights"] == two["weights"]


# S3. SGLang's --free-gib floor: free0 = free - CUDA context (512 MiB) - NCCL's buffers (0.13 GiB at TP above 1), so
# --free-gib at or below 512 MiB + 0.13 GiB left free0 <= 0 at TP 2: a negative --mem-fraction-static (free0 below 0)
# or a ZeroDivisionError (free0 exactly 0, mfs_needed = need / free0). Now a clear error naming NCCL; at TP 1 the
# floor is the context alone. The plan says the pool was sized from --free-gib: free0 = 17 GiB - 512 MiB = 16.5 GiB.
def test_sglang_free_gib_floor_counts_nccl_and_the_plan_says_so():
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.runtimes.sglang import CUDA_CONTEXT, NCCL
    from gpu_garden.memory.units import fmt_bytes
    spec = llm.describe(model="Qwen/Qwen2.5-1.5B-Instruct")
    kw = dict(ctx=8192, weights_dtype="bf16", vram=80 << 30, mem_fraction_static=0.5)
    assert CUDA_CONTEXT == 512 << 20 and NCCL == int(0.13 * (1 << 30))
    for free in (CUDA_CONTEXT + NCCL, CUDA_CONTEXT + NCCL // 2):
        with pytest.raises(UserError, match=r"SGLang needs more than .* for its own CUDA context and NCCL"):
            llm.plan(spec, "sglang", free_memory=free, tensor_parallel_size=2, **kw)
    one = llm.plan(spec, "sglang", free_memory=CUDA_CONTEXT + NCCL // 2, **kw)  # TP 1: above the context alone
    assert one["sglang_max_total_tokens"] == 0
    r = llm.plan(spec, "sglang", free_memory=17 << 30, **kw)
    (note,) = [n for n in r["notes"] if "--free-gib" in n]
    assert "sized from --free-gib 17, not the 80.00 GiB card" in note and fmt_bytes(int(16.5 * (1 << 30))) in note
    assert fmt_bytes(int(0.5 * 16.5 * (1 << 30))) in note


# S2. Type id 36 in a header that names neither fork: bitnet.cpp's Llama 3 / Falcon3 i2_s files are general.architecture
# llama (microsoft/BitNet at 16da220a: setup_env.py converts them with utils/convert-hf-to-gguf-bitnet.py, whose LlamaModel
# has model_arch LLAMA, to f32, then llama-quantize ... I2_S), refused as ambiguous after rev9 S6. The offsets decide now
# (tensor_bytes: I2_S n / 4 + 32, IQ4_NL_4_4 18 n / 32; alignment 32):
#   512 values (128 x 4): I2_S 160 B, IQ4_NL_4_4 288 B. The next tensor 160 bytes on: I2_S alone fits.
#   64 values (64 x 1): I2_S 48 B, IQ4_NL_4_4 36 B, both padded to 64: a 64-byte span fits both by size, but one row
#     is no IQ4_NL_4_4 (4 rows interleaved; rev11 D4): I2_S. Both fit 128 values (32 x 4, I2_S 64 B, IQ4_NL_4_4 72 B)
#     last in the file, its span to the file's end 80 B (16 and 8 to spare): refused.
#   512 values in a 400-byte span: 400 - 160 and 400 - 288 are both 32 or more: neither fits: refused.
# Before the change each of these was refused.
def test_id_36_in_a_llama_header_read_from_the_offsets(tmp_path):
    from gpu_garden.memory.estimate import headers
    from test_kv_fix10 import _gguf
    i2s = ("blk.0.attn_q.weight", 36, (128, 4), 160)
    p = _gguf(tmp_path / "m.gguf", [i2s, ("output_norm.weight", 0, (128,), 512),
                                    ("token_embd.weight", 12, (256, 2), 288)], arch="llama")
    table = headers.read_tensors(p)
    assert table["blk.0.attn_q.weight"] == ("I2_S", (4, 128)) and headers.table_bytes(table) == 160 + 512 + 288
    # the id-36 tensor last: its span runs to the file's end
    assert headers.read_tensors(_gguf(tmp_path / "l.gguf", [("output_norm.weight", 0, (128,), 512), i2s],
                                      arch="llama"))["blk.0.attn_q.weight"] == ("I2_S", (4, 128))
    one_row = headers.read_tensors(_gguf(tmp_path / "b.gguf", [("blk.0.attn_q.weight", 36, (64, 1), 64),
                                                               ("output_norm.weight", 0, (128,), 512)], arch="llama"))
    assert one_row["blk.0.attn_q.weight"] == ("I2_S", (1, 64))
    with pytest.raises(UserError, match="ambiguous type id 36.*fit both readings"):
        headers.read_tensors(_gguf(tmp_path / "b4.gguf", [("output_norm.weight", 0, (128,), 512),
                                                          ("blk.0.attn_q.weight", 36, (32, 4), 80)], arch="llama"))
    with pytest.raises(UserError, match="ambiguous type id 36.*fit neither reading"):
        headers.read_tensors(_gguf(tmp_path / "x.gguf", [("blk.0.attn_q.weight", 36, (128, 4), 400),
                                                         ("output_norm.weight", 0, (128,), 512)], arch="llama"))
