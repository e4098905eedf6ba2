"""kv correctness fixes found in review: what a config folder's weights are read from, an unknown model_type said
to be sized as a generic decoder, contexts a release changed, honest runtime versions, the -ngl words."""
import json

import pytest

from gpu_garden.memory import cli
from support.safetensors_files import sparse_safetensors
from gpu_garden.memory.llm import kv as K

# stabilityai/stablelm-2-1_6b config.json (model_type stablelm: no layer rules in kv)
STABLELM = {"architectures": ["StableLmForCausalLM"], "model_type": "stablelm", "hidden_size": 2048,
            "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32,
            "vocab_size": 100352, "max_position_embeddings": 4096, "partial_rotary_factor": 0.25,
            "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def _kv_json(argv, capsys):
    rc = cli.main(["kv"] + argv + ["--json"])
    return rc, json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- an unknown model_type is said to be generic

def test_unknown_model_type_is_said_to_use_generic_decoder_rules(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps(STABLELM))
    rc, r = _kv_json(["--config", str(tmp_path / "config.json"), "--ctx", "4096"], capsys)
    assert r["model"]["layer_rules"] == "generic decoder"
    assert any("'stablelm'" in n and "generic decoder" in n for n in r["notes"])
    cli.main(["kv", "--config", str(tmp_path / "config.json"), "--ctx", "4096"])
    assert "note: model_type 'stablelm' has no layer rules in kv" in capsys.readouterr().out


def test_known_model_types_carry_no_generic_note():
    for name in ("Qwen3-8B", "Gemma-3-12B", "Qwen3-VL-30B-A3B", "Llama-3.2-11B-Vision", "Qwen3-Omni-30B-A3B"):
        s = K.describe(model=name)
        assert not s.generic and s.summary()["layer_rules"] == s.arch
        assert not any("generic decoder" in n for n in s.notes)


# ---------------------------------------------------------------- a config folder: only the model's own files count

def _safetensors(path, tensors):
    """A sparse .safetensors file: the header, then a hole as long as the data (F32 4 bytes, others 2)."""
    sparse_safetensors(path, tensors)


def _qwen05_config(folder):
    from gpu_garden.memory.llm.names import MODELS_DIR
    cfg = json.loads((MODELS_DIR / "Qwen2.5-0.5B.json").read_text())
    cfg.pop("_source", None)
    (folder / "config.json").write_text(json.dumps(cfg))


def _qwen05_tensors():
    """Qwen/Qwen2.5-0.5B's own tensors (24 layers, width 896, 14 query and 2 KV heads of 64, MLP 4864, tied 151936-row
    table): 494,032,768 parameters, the model card's 0.49 B (ux50 S8: a file beside a config must hold its parameters)"""
    t = {"model.embed_tokens.weight": (151936, 896), "model.norm.weight": (896,)}
    for i in range(24):
        a, m = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
        t.update({a + "q_proj.weight": (896, 896), a + "q_proj.bias": (896,), a + "k_proj.weight": (128, 896),
                  a + "k_proj.bias": (128,), a + "v_proj.weight": (128, 896), a + "v_proj.bias": (128,),
                  a + "o_proj.weight": (896, 896), m + "gate_proj.weight": (4864, 896), m + "up_proj.weight": (4864, 896),
                  m + "down_proj.weight": (896, 4864), f"model.layers.{i}.input_layernorm.weight": (896,),
                  f"model.layers.{i}.post_attention_layernorm.weight": (896,)})
    return {k: ("BF16", v) for k, v in t.items()}


QWEN_TENSORS = _qwen05_tensors()
QWEN_BYTES = 494032768 * 2
# two of its tensors, one a shard, as an index names them (embed 151936 x 896, one layer's q_proj 896 x 896)
SHARD_BYTES = (151936 * 896 + 896 * 896) * 2
# sd_xl_base_1.0.safetensors tensor names (Stability's SDXL checkpoint: UNet, both text encoders, VAE)
SDXL_TENSORS = {"model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_k.weight": ("F16", (640, 640)),
                "conditioner.embedders.0.transformer.text_model.encoder.layers.0.self_attn.k_proj.weight": ("F16", (768, 768)),
                "conditioner.embedders.1.model.transformer.resblocks.0.attn.in_proj_weight": ("F16", (3840, 1280)),
                "first_stage_model.decoder.conv_in.weight": ("F32", (512, 4, 3, 3))}


def test_a_diffusion_checkpoint_beside_an_llm_config_is_not_counted(tmp_path):
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "model.safetensors", QWEN_TENSORS)
    _safetensors(tmp_path / "sd_xl_base_1.0.safetensors", SDXL_TENSORS)
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_bytes == QWEN_BYTES
    assert s.weights_source == "model.safetensors"
    assert any("sd_xl_base_1.0.safetensors" in n and "not counted" in n for n in s.notes)
    assert K.weights(s)[1] == "exact, model.safetensors"
    # a PEFT LoRA adapter beside it (its tensor names: base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight)
    _safetensors(tmp_path / "adapter_model.safetensors",
                 {"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": ("F32", (16, 896)),
                  "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": ("F32", (896, 16))})
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_bytes == QWEN_BYTES
    assert any("adapter_model.safetensors" in n and "sd_xl_base_1.0.safetensors" in n for n in s.notes)


def test_the_index_names_the_files_read(tmp_path):
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "model-00001-of-00002.safetensors", {"model.embed_tokens.weight": ("BF16", (151936, 896))})
    _safetensors(tmp_path / "model-00002-of-00002.safetensors",
                 {"model.layers.0.self_attn.q_proj.weight": ("BF16", (896, 896))})
    _safetensors(tmp_path / "sd_xl_base_1.0.safetensors", SDXL_TENSORS)
    wmap = {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "model.layers.0.self_attn.q_proj.weight": "model-00002-of-00002.safetensors"}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wmap}))
    s = K.describe(config=str(tmp_path))
    assert s.weights_bytes == SHARD_BYTES
    assert "2 file(s) it names" in s.weights_source
    assert any("sd_xl_base_1.0.safetensors" in n and "not named by the index" in n for n in s.notes)
    # the index's own total_size wins when it states one; the stray file is still named
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 988097536}, "weight_map": wmap}))
    s = K.describe(config=str(tmp_path))
    assert s.weights_bytes == 988097536
    assert any("sd_xl_base_1.0.safetensors" in n for n in s.notes)


def test_only_a_foreign_checkpoint_gives_no_exact_weights(tmp_path):
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "sd_xl_base_1.0.safetensors", SDXL_TENSORS)
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_bytes is None
    assert any("sd_xl_base_1.0.safetensors" in n and "no decoder tensors" in n for n in s.notes)
    assert not K.weights(s)[1].startswith("exact")


# ---------------------------------------------------------------- runtime versions: a commit is none, an rc precedes

def test_a_commit_hash_is_no_version_and_is_said_so():
    from gpu_garden.memory.llm.runtimes import parse_version
    # ggml-org/llama.cpp#14740 prints "version: ... (086cf81)": a commit, not build 86 or release 86.81.2025
    assert parse_version("086cf81 (July 2025)") is None
    assert parse_version("f470bc36bed") is None
    assert parse_version("b5400 (May 2025)") == (5400,)
    r = K.plan(K.describe(model="Phi-4-mini"), "llama.cpp", ctx=4096, runtime_version="086cf81 (July 2025)")
    assert any("'086cf81 (July 2025)' names a commit, not a release" in n for n in r["notes"])
    r = K.plan(K.describe(model="Phi-4-mini"), "llama.cpp", ctx=4096, runtime_version="b5400")
    assert not any("names a commit" in n for n in r["notes"])


@pytest.mark.parametrize("rc, release, before", [("0.4.0-rc6", "0.4.0", "0.3.14"), ("0.6.3-rc0", "0.6.3", "0.6.2"),
                                                 ("0.29.1rc1.dev17", "0.29.1", "0.29.0")])
def test_a_release_candidate_sorts_before_its_release(rc, release, before):
    from gpu_garden.memory.llm.runtimes import at_least, parse_version
    v = parse_version(rc)
    assert v < parse_version(release) and v > parse_version(before)
    assert not at_least(v, *parse_version(release))
    assert at_least(v, *parse_version(before))
    assert not at_least(parse_version("0.4.0-rc6"), 0, 4)          # a two-number gate is the .0 release
    assert parse_version("0.4.0-rc7") > parse_version("0.4.0-rc6")
    assert parse_version("0.11") == parse_version("0.11.0")


def test_an_unreadable_version_is_a_clear_error():
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.runtimes import parse_version
    for bad in ("July 2025", "x.y", "latest-ish"):
        with pytest.raises(UserError, match="cannot read a version"):
            parse_version(bad)


# ---------------------------------------------------------------- -ngl in words: the output layer first from #18148

def _ngl_reason(r):
    return next(f["reason"] for f in r["flags"] if f["name"] == "-ngl")


def test_ngl_words_follow_the_build():
    # LM Studio's January 2026 engine (output-first) with -ngl 20 of DeepSeek-R1-Distill-Qwen-14B prints "offloading
    # output layer and 19 repeating layers to GPU, offloaded 20/49"; Ollama 0.5.7's vendored llama.cpp (b4400 here)
    # prints "offloading 5 repeating layers to GPU" for -ngl 5 (the output stays on the CPU)
    s = K.describe(model="DeepSeek-R1-Distill-Qwen-14B")
    new = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", ngl=20)
    assert _ngl_reason(new).startswith("the output layer and 19 of 48 repeating layers on the GPU")
    old = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", ngl=5, runtime_version="b4400")
    assert _ngl_reason(old).startswith("5 of 48 repeating layers (not the output layer) on the GPU")
    one = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", ngl=1)
    assert _ngl_reason(one).startswith("the output layer and no repeating layer on the GPU")


def test_partial_offload_note_and_report_say_the_output_layer(capsys):
    s = K.describe(model="DeepSeek-R1-Distill-Qwen-14B")
    r = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=6 * 2 ** 30)
    n = r["gpu_layers_used"]
    assert n is not None and n < 48
    assert f"only the output layer and {n - 1} of 48 repeating layers fit on the GPU" in "\n".join(r["notes"])
    text = K.format_plan(r)
    assert f"with only the output layer and {n - 1} of 48 repeating layers on the GPU (partial offload)" in text
    assert f"only {n} of 48 layers" not in text
    r = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=6 * 2 ** 30, runtime_version="b4400")
    n = r["gpu_layers_used"]
    assert f"only {n} of 48 repeating layers (not the output layer) fit on the GPU" in "\n".join(r["notes"])


# ---------------------------------------------------------------- releases that changed a built-in's context

@pytest.mark.parametrize("name, builtin", [
    # config.json max_position_embeddings of each release: 262144 (Qwen/Qwen3-30B-A3B-Instruct-2507, -4B-Instruct-2507
    # with rope_theta 5000000, -235B-A22B-Instruct-2507, Qwen/Qwen3-Coder-30B-A3B-Instruct)
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B"), ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "Qwen3-30B-A3B"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B"), ("Qwen/Qwen3-4B-Thinking-2507", "Qwen3-4B"),
    ("unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", "Qwen3-4B"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-30B-A3B"), ("qwen3-coder:30b", "Qwen3-30B-A3B"),
    ("qwen3:30b-a3b-thinking-2507-q8_0", "Qwen3-30B-A3B")])
def test_qwen3_2507_and_coder_carry_their_own_context(name, builtin):
    s = K.describe(model=name)
    assert s.name == builtin and s.max_ctx == 262144
    assert any("262,144" in n and "40,960" in n for n in s.notes)


def test_vllm_default_max_model_len_follows_the_release():
    r = K.plan(K.describe(model="Qwen/Qwen3-30B-A3B-Instruct-2507"), "vllm")
    assert r["ctx"] == 262144                                  # vLLM's default: the config's max_position_embeddings
    base = K.describe(model="Qwen/Qwen3-30B-A3B")              # Qwen/Qwen3-30B-A3B config.json (April 2025): 40960
    assert base.max_ctx == 40960 and K.plan(base, "vllm")["ctx"] == 40960
    assert not any("max_position_embeddings" in n for n in base.notes)
