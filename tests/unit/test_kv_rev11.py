"""rev11 S2, S4, S5 and D1-D5 (session 46, fix12): the kv items of review rev11, each test failing with its change reverted."""
import pytest

from gpu_garden.memory.errors import UserError
from support.gguf_files import close_written, quantized_writer

ATTN = r"blk\.[0-9]+\.attn_.*=CPU"


# S4. -ot attention tensors of a --gguf FILE of any arch: the file's own table (attn_file_bytes) is exact for every arch,
# so it is read before the qwen35 gate (ATTN_ARCHS now gates the --gguf-types estimate only). Before the change a llama
# file's attention pattern was refused ('also matches blk.0.attn_norm.weight') and cpu_attn_bytes gave zeros.
# The file (general.architecture llama): 2 layers, hidden 256, 4 heads, 2 KV heads x 64; matrices Q8_0 (34 B a 32-value
# block), norms F32:
#   attn_q 256 x 256 = 65,536 values -> 2,048 blocks -> 69,632 B; attn_k = attn_v 128 x 256 = 32,768 -> 34,816 B each;
#   attn_output 256 x 256 -> 69,632 B; attn_norm 256 x 4 B = 1,024 B; a layer 69,632 + 2 x 34,816 + 69,632 + 1,024 =
#   209,920 B; both layers 419,840 B
def _llama_gguf(path):
    pytest.importorskip("gguf")
    w, put = quantized_writer(path, "llama", (
        ("add_block_count", 2), ("add_context_length", 4096), ("add_embedding_length", 256),
        ("add_feed_forward_length", 512), ("add_head_count", 4), ("add_head_count_kv", 2),
        ("add_key_length", 64), ("add_value_length", 64), ("add_vocab_size", 1000), ("add_file_type", 7)))
    put("token_embd.weight", "Q8_0", (1000, 256))
    put("output_norm.weight", "F32", (256,))
    put("output.weight", "Q8_0", (1000, 256))
    for i in range(2):
        put(f"blk.{i}.attn_norm.weight", "F32", (256,))
        for n, rows in (("q", 256), ("k", 128), ("v", 128), ("output", 256)):
            put(f"blk.{i}.attn_{n}.weight", "Q8_0", (rows, 256))
        put(f"blk.{i}.ffn_norm.weight", "F32", (256,))
        for p in ("gate", "up"):
            put(f"blk.{i}.ffn_{p}.weight", "Q8_0", (512, 256))
        put(f"blk.{i}.ffn_down.weight", "Q8_0", (256, 512))
    close_written(w)
    return str(path)


def test_ot_attention_bytes_of_a_llama_gguf_read_from_its_table(tmp_path):
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm import spec as llm_spec
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import cpu_attn_bytes, override_cpu_layers
    spec = llm_spec.load_gguf(_llama_gguf(tmp_path / "l.gguf"))  # as kv --gguf FILE builds it
    assert spec.arch == "llama" and not spec.n_experts
    assert cpu_attn_bytes(spec, [ATTN]) == (209_920, 209_920)
    assert cpu_attn_bytes(spec, [r"blk\.1\.attn_q\.weight=CPU"]) == (0, 69_632)
    assert override_cpu_layers(spec, [ATTN]) == ((), False)  # accepted (was refused for blk.0.attn_norm.weight)
    with pytest.raises(UserError, match="also matches blk.0.ffn_norm.weight"):  # no attn_ name: still refused
        override_cpu_layers(spec, [r"blk\.0\.ffn_norm=CPU"])
    kw = dict(ctx=4096, parallel=1, vram=8 << 30, ngl=999, runtime_version="b8829")
    one = llm.plan(spec, "llama.cpp", **kw)
    two = llm.plan(spec, "llama.cpp", override_tensor=[ATTN], **kw)
    assert two["host_weights"] - (one["host_weights"] or 0) == 419_840 and one["weights"] == two["weights"]


# S2. A Mamba-2 config.json without a chunk size: vLLM's get_mamba_chunk_size reads the transformers config object, whose
# class fills it in (transformers 5.25.0: NemotronHConfig chunk_size 128, GraniteMoeHybridConfig mamba_chunk_size 256), so
# vLLM starts such a config with prefix caching; kv refused it ("mamba_cache_mode 'all'"). Archs without one stay refused.
def test_a_mamba2_config_without_a_chunk_size_takes_its_class_default():
    from dataclasses import replace
    from test_kv_hybrid_pool import GiB, _nano
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.runtimes.vllm_hybrid import with_cache_mode
    nano = _nano(chunk=None)                                  # Nemotron-3-Nano's config with chunk_size dropped
    assert nano.mamba_chunk == 128                            # was 0
    r = llm.plan(nano, "vllm", ctx=32768, vram=79.2 * GiB, gpu_name="NVIDIA H100 80GB HBM3", runtime_version="0.15.0",
                 prefix_caching=True)
    # the "all" layout of test_kv_hybrid_pool: 2176-token blocks (128 x 17), a request 80 blocks of 6 pages of 2,228,224 B
    assert r["kv_detail"]["mamba_cache_all"] is True and r["kv_request_bytes"] == 80 * 6 * 2228224
    # Granite 4.0-H micro's built-in config has no mamba_chunk_size: 256. Its state page 3 x 4352 x 2 + 64 x 64 x 128 x 4
    # = 2,123,264 B; an attention layer's 2,048 B a token (8 KV heads x 64, K and V, 2 B), 524,288 B a 256-token unit:
    # ceil(2,123,264 / 524,288) = 5 units, a 1,280-token block (the page padded to 1,280 x 2,048 = 2,621,440 B)
    granite = llm.describe(model="ibm-granite/granite-4.0-h-micro")
    assert granite.mamba_chunk == 256
    marked, pages = with_cache_mode(granite, {"prefix_caching": True, "version": (0, 15, 0)})
    assert marked.mamba_cache_all and pages == 1
    from gpu_garden.memory.llm import cache
    assert cache.vllm_layout(marked, "f16")["block"] == {"full": 1280, "mamba": 1280}
    # an arch whose config class has no chunk size (JambaConfig, transformers 5.25.0; rev12 S2: Zamba2Config has 256) is
    # still refused
    with pytest.raises(UserError, match="mamba_cache_mode 'all'"):
        with_cache_mode(replace(nano, arch="jamba", mamba_chunk=0), {"prefix_caching": True, "version": (0, 15, 0)})


# S5. The hybrid prefix-caching notes worded from vLLM's mamba_cache_mode (runtimes/vllm_hybrid.prefix_note): "two with it"
# only in "align" mode; "all" mode a state page per block of the context; and a note where vLLM itself turns the flag
# off (0.11.0 for every hybrid; Qwen3-Next / Qwen 3.5+ before 0.15.0). Before, every hybrid read "(two with it)" and a
# flag vLLM drops was not noted.
def test_the_prefix_caching_notes_follow_the_cache_mode():
    from test_kv_hybrid_pool import GiB
    from gpu_garden.memory.llm import kv as llm

    def notes(model, v, **kw):
        r = llm.plan(llm.describe(model=model), "vllm", ctx=32768, vram=79.2 * GiB, gpu_name="NVIDIA H100 80GB HBM3",
                     runtime_version=v, **kw)
        return [n for n in r["notes"] if "prefix caching" in n]
    qwen, nano = "Qwen/Qwen3.6-27B", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B"
    (n,) = notes(qwen, "0.15.0")                                    # "align": as before
    assert n.endswith("one state page a request in each state group (two with it)")
    (n,) = notes(nano, "0.15.0")                                    # "all": a page per block
    assert n.endswith("(with it a state page per block of the context, mamba_cache_mode 'all')")
    (n,) = notes(qwen, "0.14.1")                                    # not given, and vLLM would turn it off anyway
    assert "(one with it too: vLLM 0.14.1 turns prefix caching off for qwen3_5_text" in n
    (n,) = notes(qwen, "0.14.1", prefix_caching=True)               # given: vLLM turns it off
    assert n.startswith("--enable-prefix-caching given, but vLLM 0.14.1 turns prefix caching off for qwen3_5_text")
    (n,) = notes(nano, "0.11.0", prefix_caching=True)               # 0.11.0: every hybrid
    assert n.startswith("--enable-prefix-caching given, but vLLM 0.11.0 turns prefix caching off for every hybrid model")
    assert notes(nano, "0.15.0", prefix_caching=True) == notes(qwen, "0.15.0", prefix_caching=True) == []


# D4. Type id 36 decided from the offsets (headers._check_id_36): IQ4_NL_4_4 interleaves 4 rows, so a tensor whose rows
# are not a multiple of 4 is no IQ4_NL_4_4; and a refusal says when the last tensor has bytes after it to the file's end.
def test_id_36_iq4_nl_4_4_needs_rows_by_four_and_trailing_bytes_are_named(tmp_path):
    from gpu_garden.memory.estimate import headers
    from test_kv_fix10 import _gguf
    # 256 x 2 = 512 values: I2_S 512 / 4 + 32 = 160 B, IQ4_NL_4_4 18 x 512 / 32 = 288 B. A 288-byte span holds
    # IQ4_NL_4_4's size exactly (read as it before the change) and I2_S's with 128 >= 32 to spare; 2 rows: neither
    norm = ("output_norm.weight", 0, (128,), 512)
    with pytest.raises(UserError, match="ambiguous type id 36.*fit neither reading, so"):
        headers.read_tensors(_gguf(tmp_path / "r.gguf", [("blk.0.attn_q.weight", 36, (256, 2), 288), norm], arch="llama"))
    # 4 rows of 128 in the same 288 bytes: IQ4_NL_4_4 as before (test_kv_fix10)
    ok = headers.read_tensors(_gguf(tmp_path / "o.gguf", [("blk.0.attn_q.weight", 36, (128, 4), 288), norm], arch="llama"))
    assert ok["blk.0.attn_q.weight"] == ("IQ4_NL_4_4", (4, 128))
    # 128 x 4 last, its span to the file's end 400 B: 400 - 160 = 240 and 400 - 288 = 112 left, both 32 or more
    with pytest.raises(UserError, match=r"fit neither reading; the file has 112 bytes or more after its last tensor "
                                        r"\('blk\.0\.attn_q\.weight', whose span runs to the file's end\)"):
        headers.read_tensors(_gguf(tmp_path / "t.gguf", [norm, ("blk.0.attn_q.weight", 36, (128, 4), 400)], arch="llama"))
