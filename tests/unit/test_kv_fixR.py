"""fixR: the parameter check of a --config folder's safetensors (ux50 S8) on a vision-language checkpoint: the file
holds the vision tower, the config's count (spec.params) is the decoder's alone."""
import json
import math

from support.safetensors_files import sparse_safetensors


def _smolvlm_256m(folder):
    """HuggingFaceTB/SmolVLM-256M-Instruct as its folder holds it, written by hand from its architecture (Idefics3: a
    SmolLM2-135M-wide llama decoder of 30 layers x 576, 9 query and 3 KV heads, MLP 1536, 49280-row token table and an
    untied head; a SigLIP tower of 12 layers x 768, MLP 3072, 16 px patches of 512 px images; a 576 x 12288 connector):
    one model.safetensors of 256,484,928 parameters, the model card's 256 M."""
    text = {"model_type": "llama", "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
            "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49280, "max_position_embeddings": 8192,
            "tie_word_embeddings": False}
    vision = {"model_type": "idefics3_vision", "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
              "num_attention_heads": 12, "patch_size": 16, "image_size": 512}
    (folder / "config.json").write_text(json.dumps({"architectures": ["Idefics3ForConditionalGeneration"],
                                                    "model_type": "idefics3", "text_config": text,
                                                    "vision_config": vision, "torch_dtype": "bfloat16"}))
    d, ff, hd, vd, vf = 576, 1536, 64, 768, 3072
    t = {"model.text_model.embed_tokens.weight": (49280, d), "model.text_model.norm.weight": (d,),
         "lm_head.weight": (49280, d), "model.vision_model.embeddings.patch_embedding.weight": (vd, 3, 16, 16),
         "model.vision_model.embeddings.patch_embedding.bias": (vd,),
         "model.vision_model.embeddings.position_embedding.weight": (1024, vd),
         "model.vision_model.post_layernorm.weight": (vd,), "model.vision_model.post_layernorm.bias": (vd,),
         "model.connector.modality_projection.proj.weight": (d, vd * 16)}
    for i in range(30):
        a, m = f"model.text_model.layers.{i}.", f"model.text_model.layers.{i}.mlp."
        t.update({a + "self_attn.q_proj.weight": (9 * hd, d), a + "self_attn.k_proj.weight": (3 * hd, d),
                  a + "self_attn.v_proj.weight": (3 * hd, d), a + "self_attn.o_proj.weight": (d, 9 * hd),
                  m + "gate_proj.weight": (ff, d), m + "up_proj.weight": (ff, d), m + "down_proj.weight": (d, ff),
                  a + "input_layernorm.weight": (d,), a + "post_attention_layernorm.weight": (d,)})
    for i in range(12):
        b = f"model.vision_model.encoder.layers.{i}."
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t[b + f"self_attn.{p}.weight"], t[b + f"self_attn.{p}.bias"] = (vd, vd), (vd,)
        t.update({b + "mlp.fc1.weight": (vf, vd), b + "mlp.fc1.bias": (vf,), b + "mlp.fc2.weight": (vd, vf),
                  b + "mlp.fc2.bias": (vd,), b + "layer_norm1.weight": (vd,), b + "layer_norm1.bias": (vd,),
                  b + "layer_norm2.weight": (vd,), b + "layer_norm2.bias": (vd,)})
    sparse_safetensors(folder / "model.safetensors", {k: ("BF16", v) for k, v in t.items()})
    return sum(math.prod(s) for s in t.values())


# Breaking it: load_config back on spec.params alone (the file's 0.26 B is 1.57x the decoder's 0.16 B: skipped as
# another model, the weights then figured from the config without the tower)
def test_a_vision_language_checkpoint_counts_its_tower(tmp_path):
    from gpu_garden.memory.llm import kv as K
    held = _smolvlm_256m(tmp_path)
    assert held == 256484928
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.vision and held / s.params > 1.5  # the case: the decoder alone is 0.16 B
    assert s.weights_bytes == 2 * held and K.weights(s)[1] == "exact, model.safetensors", s.notes
    assert not any("not counted" in n for n in s.notes)


def test_the_span_still_refuses_another_model():
    from gpu_garden.memory.llm.files import _params_mismatch
    n, tower = 162974016, 93000000
    assert _params_mismatch({"w": ("BF16", (n + tower,))}, (n, n + tower), {}) is None
    assert _params_mismatch({"w": ("BF16", (2 * (n + tower),))}, (n, n + tower), {}) is not None
    assert _params_mismatch({"w": ("BF16", (n // 2,))}, (n, n + tower), {}) is not None
    why = _params_mismatch({"w": ("BF16", (4 * n,))}, (n, n + tower), {})
    assert why == "0.65 B parameters, not the config's 0.16 B (0.26 B with its vision tower and MTP layers)"
