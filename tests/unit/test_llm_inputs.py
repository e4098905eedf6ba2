"""LLM memory calculator, its inputs: a model's config.json (bad ones refused with a clear error), safetensors
headers beside it or alone, GGUF metadata and tensor bytes read without the optional gguf package, and a
config's quantization_config (the calculator's numbers and runtime logs: test_llm.py; its CLI: test_llm_cli.py)."""
import json
import math
import struct

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.units import GiB, KiB


def spec(name):
    return llm_spec.load_builtin(name)


# ---------------------------------------------------------------- inputs

def _write(tmp_path, cfg, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(cfg))
    return p


LLAMA_CFG = json.loads((llm_spec.MODELS_DIR / "Llama-3-8B.json").read_text())


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c.pop("num_hidden_layers"), "num_hidden_layers"),
    (lambda c: c.update(num_attention_heads=0), "num_attention_heads"),
    (lambda c: c.update(num_key_value_heads=0), "num_key_value_heads"),
    (lambda c: c.update(num_key_value_heads=64), "num_key_value_heads"),
    (lambda c: c.update(num_key_value_heads=7), "multiple"),
    (lambda c: c.update(num_hidden_layers=100000), "plausible"),
    (lambda c: c.update(hidden_size=10 ** 9), "plausible"),
    (lambda c: c.update(vocab_size="many"), "whole number"),
])
def test_bad_configs_get_a_clear_error(tmp_path, mutate, message):
    cfg = dict(LLAMA_CFG)
    mutate(cfg)
    with pytest.raises(UserError, match=message):
        llm_spec.load_config(str(_write(tmp_path, cfg)))


def test_unreadable_files(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="JSON"):
        llm_spec.load_config(str(bad))
    with pytest.raises(UserError, match="no such file"):
        llm_spec.load_config(str(tmp_path / "missing.json"))
    with pytest.raises(UserError, match="unknown model"):
        llm_spec.load_builtin("Llama-9-1T")


def test_config_beside_safetensors_gives_exact_weights(tmp_path):
    _write(tmp_path, LLAMA_CFG)
    # Llama-3-8B's 8,030,261,248 parameters (Meta's figure): the token table, the rest as one tensor of 4096 columns
    # (ux50 S8: a file beside a config counts only when it holds the config's parameters)
    table, rest = 128256 * 4096 * 2, (8030261248 - 128256 * 4096) * 2
    header = {"model.embed_tokens.weight": {"dtype": "BF16", "shape": [128256, 4096], "data_offsets": [0, table]},
              "model.layers.0.mlp.up_proj.weight": {"dtype": "BF16", "shape": [(8030261248 - 128256 * 4096) // 4096, 4096],
                                                    "data_offsets": [table, table + rest]},
              "__metadata__": {"format": "pt"}}
    raw = json.dumps(header).encode()
    with open(tmp_path / "model.safetensors", "wb") as f:  # sparse: the header, then a hole as long as the data
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + table + rest)
    s = llm_spec.load_config(str(tmp_path / "config.json"))
    assert s.weights_bytes == 8030261248 * 2
    assert llm.weights(s)[1].startswith("exact")
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 16060522496}}))
    assert llm_spec.load_config(str(tmp_path)).weights_bytes == 16060522496


def test_bad_safetensors_header(tmp_path):
    # ux50 S8: an unreadable file beside a config is skipped and named, not an error (the config alone sizes the model)
    _write(tmp_path, LLAMA_CFG)
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    s = llm_spec.load_config(str(tmp_path / "config.json"))
    assert s.weights_bytes is None
    assert any("model.safetensors (unreadable" in n and "safetensors" in n for n in s.notes)


def test_vision_language_config_uses_the_text_decoder():
    s = spec("Qwen2.5-VL-7B")
    assert (s.n_layers, s.n_kv_heads, s.head_dim_k) == (28, 4, 128)
    assert any("vision" in n for n in s.notes)
    g3 = spec("Gemma-3-27B")
    assert g3.n_layers == 62 and g3.layer_kinds.count("full") == 10


def test_builtin_descriptions_all_load_and_are_sane():
    names = llm_spec.builtin_names()
    assert {"Llama-3-8B", "Llama-3-70B", "Llama-3.1-8B", "Mistral-7B-v0.1", "Qwen2.5-7B", "Qwen2.5-14B", "Qwen2.5-32B",
            "Qwen2.5-72B", "Qwen2.5-VL-7B", "Gemma-2-9B", "Gemma-2-27B", "Gemma-3-12B", "DeepSeek-V3", "DeepSeek-R1",
            "Mixtral-8x7B", "Phi-3-mini-4k"} <= set(names)
    for n in names:
        s = spec(n)
        assert s.attn_layers > 0 and s.params > 1e8 and s.max_ctx  # Qwen2.5-0.5B: 0.49 B
        assert json.loads((llm_spec.MODELS_DIR / f"{n}.json").read_text())["_source"].startswith("https://huggingface.co/")
    assert spec("llama-3-8b").name == "Llama-3-8B"


def test_config_quantization_config_sets_the_weight_format(tmp_path):
    cfg = dict(LLAMA_CFG, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128})
    s = llm_spec.load_config(str(_write(tmp_path, cfg)))
    assert s.quant == "awq" and llm.weights(s)[0] == llm.weights(spec("Llama-3-8B"), "awq")[0]
    cfg = dict(LLAMA_CFG, quantization_config={"quant_method": "compressed-tensors", "config_groups": {
        "group_0": {"weights": {"num_bits": 8, "type": "float"}}}})
    assert llm_spec.load_config(str(_write(tmp_path, cfg))).quant == "fp8"


# ---------------------------------------------------------------- GGUF

def test_gguf_metadata_and_exact_tensor_bytes(tmp_path):
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    path = tmp_path / "tiny-llama.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(32)
    w.add_context_length(131072)
    w.add_embedding_length(4096)
    w.add_feed_forward_length(14336)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_rope_dimension_count(128)
    w.add_vocab_size(128256)
    w.add_file_type(15)
    w.add_tensor("token_embd.weight", np.zeros((16, 64), dtype=np.float16))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 64), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    s = llm_spec.load_gguf(str(path))
    assert (s.arch, s.n_layers, s.n_kv_heads, s.head_dim_k, s.vocab) == ("llama", 32, 8, 128, 128256)
    assert s.quant == "Q4_K_M" and s.max_ctx == 131072
    assert s.weights_bytes == 16 * 64 * 2 + 64 * 64 * 4
    assert s.embed_bytes == 16 * 64 * 2
    assert llm.kv_cache(s, 1, 1, "f16", "llama.cpp")["per_token"] == 128 * KiB
    r = llm.plan(s, runtime="llama.cpp", ctx=8192, vram=8 * GiB)
    assert r["weights_how"].startswith("exact")


def test_gguf_per_layer_kv_heads_mark_recurrent_layers():
    meta = {"general.architecture": "granitehybrid", "granitehybrid.block_count": 4,
            "granitehybrid.embedding_length": 1024, "granitehybrid.attention.head_count": 8,
            "granitehybrid.attention.head_count_kv": [0, 0, 0, 4], "granitehybrid.ssm.state_size": 64,
            "granitehybrid.ssm.inner_size": 2048, "tokenizer.ggml.tokens": ["a"] * 100}
    s = llm_spec.from_gguf_metadata(meta, {"blk.0.x.weight": (100, "F16", 50)}, name="hybrid.gguf")
    assert s.attn_layers == 1 and s.layer_kinds[:3] == ["mamba"] * 3
    assert s.recurrent_state_per_seq > 0
    with pytest.raises(UserError, match="attention.head_count"):
        llm_spec.from_gguf_metadata({"general.architecture": "llama", "llama.block_count": 2}, None)


def test_gguf_needs_no_optional_package_and_refuses_truncation(monkeypatch, tmp_path):
    gguf = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    path = tmp_path / "g.gguf"
    w = gguf.GGUFWriter(str(path), "gemma3")
    for add, v in ((w.add_block_count, 48), (w.add_embedding_length, 3840), (w.add_head_count, 16),
                   (w.add_head_count_kv, 8), (w.add_key_length, 256), (w.add_value_length, 256),
                   (w.add_sliding_window, 1024), (w.add_context_length, 131072)):
        add(v)
    w.add_token_list([f"t{i}" for i in range(5000)])
    w.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    import builtins
    real = builtins.__import__

    def no_gguf(name, *a, **k):
        if name == "gguf" or name.startswith("gguf."):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_gguf)
    s = llm_spec.load_gguf(str(path))
    assert s.vocab == 5000 and s.layer_kinds.count("sliding") == 40 and s.weights_bytes == 64 * 32 * 2
    assert s.tied  # no output.weight: llama.cpp reuses the embedding
    data = path.read_bytes()
    path.write_bytes(data[:-1000])
    with pytest.raises(UserError, match="truncated"):
        llm_spec.load_gguf(str(path))


def test_gguf_not_a_gguf(tmp_path):
    pytest.importorskip("gguf")
    p = tmp_path / "junk.gguf"
    p.write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(UserError, match="GGUF"):
        llm_spec.load_gguf(str(p))


# ---------------------------------------------------------------- safetensors headers alone

def _llama_table(L=32, d=4096, kv=1024, ff=14336, V=128256, dtype="BF16"):
    t = {"model.embed_tokens.weight": (dtype, (V, d)), "lm_head.weight": (dtype, (V, d)), "model.norm.weight": (dtype, (d,))}
    for i in range(L):
        p = f"model.layers.{i}."
        t.update({p + "self_attn.q_proj.weight": (dtype, (d, d)), p + "self_attn.k_proj.weight": (dtype, (kv, d)),
                  p + "self_attn.v_proj.weight": (dtype, (kv, d)), p + "self_attn.o_proj.weight": (dtype, (d, d)),
                  p + "mlp.gate_proj.weight": (dtype, (ff, d)), p + "mlp.up_proj.weight": (dtype, (ff, d)),
                  p + "mlp.down_proj.weight": (dtype, (d, ff)), p + "input_layernorm.weight": (dtype, (d,)),
                  p + "post_attention_layernorm.weight": (dtype, (d,))})
    return t


def test_description_from_safetensors_headers_alone():
    s = llm_spec.from_tensor_table(_llama_table(), name="Meta-Llama-3-8B")
    assert (s.n_layers, s.attn_layers, s.n_kv_heads, s.head_dim_k, s.vocab) == (32, 32, 8, 128, 128256)
    assert s.params == 8_030_261_248 and s.weights_bytes == 16_060_522_496 and not s.tied
    assert llm.kv_cache(s, 1, 1, "f16", "vllm")["per_token"] == 128 * KiB
    r = llm.plan(s, runtime="vllm", ctx=8192, vram=24 * GiB)
    assert r["fits"] and r["weights_how"].startswith("exact")
    # MLA: the latent width is kv_a_proj_with_mqa's output, kv_lora_rank its layernorm
    mla = {"model.embed_tokens.weight": ("BF16", (129280, 7168)),
           "model.layers.0.self_attn.kv_a_proj_with_mqa.weight": ("BF16", (576, 7168)),
           "model.layers.0.self_attn.kv_a_layernorm.weight": ("BF16", (512,))}
    m = llm_spec.from_tensor_table(mla)
    assert m.mla and (m.kv_lora_rank, m.qk_rope_head_dim) == (512, 64)
    with pytest.raises(UserError, match="config.json"):
        llm_spec.from_tensor_table({"model.layers.0.self_attn.qkv_proj.weight": ("BF16", (9216, 3072)),
                                    "model.embed_tokens.weight": ("BF16", (32064, 3072))})


def test_cli_config_accepts_a_safetensors_file(tmp_path, capsys):
    table = _llama_table(L=2, d=64, kv=16, ff=128, V=1000)
    header, off = {}, 0
    for name, (dt, shape) in table.items():
        n = math.prod(shape) * 2
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
    assert cli.main(["kv", "--config", str(path), "--ctx", "1024", "--vram", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == off and out["kv_per_token"] == 2 * 32 * 2
    assert cli.main(["kv", "--config", str(tmp_path), "--ctx", "1024", "--json"]) == 0  # the folder, no config.json
