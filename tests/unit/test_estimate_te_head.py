"""ComfyUI's LLM text encoders build no output head (comfy/text_encoders/llama.py: `self.lm_head` is commented out; no
other class under comfy/text_encoders defines one), so a text-encoder file's lm_head.weight is never loaded there;
diffusers / transformers do build it. Expected bytes are counted here from the table's shapes, not by the estimate:
counting the head under ComfyUI (the old figure), or dropping it under diffusers, breaks the test. Found reading the
ComfyUI#11921 QwenImageTEModel_ load size (measured batch 9)."""
import math

from gpu_garden.memory.estimate import families, formula as E

VOCAB, HIDDEN, FFN, LAYERS = 152064, 3584, 18944, 2


def _qwen_te():
    t = {"model.embed_tokens.weight": ("BF16", (VOCAB, HIDDEN)), "model.norm.weight": ("BF16", (HIDDEN,)),
         "lm_head.weight": ("BF16", (VOCAB, HIDDEN)), "visual.patch_embed.proj.weight": ("BF16", (1280, 3, 2, 14, 14))}
    for i in range(LAYERS):
        t[f"model.layers.{i}.input_layernorm.weight"] = ("BF16", (HIDDEN,))
        t[f"model.layers.{i}.mlp.up_proj.weight"] = ("BF16", (FFN, HIDDEN))
    return t


def _te_weights(runner):
    comps = families.split_components(_qwen_te(), "qwen_2.5_vl_7b.safetensors")
    assert [c["role"] for c in comps] == ["text_encoder"] and comps[0]["kind"] == "qwen2.5-vl"
    e = E.estimate(comps, 1024, 1024, 1, 1, cfg=False,
                   policy={"_no_knobs": True, "runner": runner, "text_encoders": "resident", "models": "resident"})
    return e["_ctx"]["w"]["te"], e


def test_comfyui_does_not_load_the_text_encoders_output_head():
    total = sum(2 * math.prod(s) for _, s in _qwen_te().values())
    head = 2 * VOCAB * HIDDEN
    w, e = _te_weights("comfyui")
    assert w == total - head
    assert any("lm_head" in a for a in e["assumptions"])


def test_diffusers_keeps_the_output_head():
    total = sum(2 * math.prod(s) for _, s in _qwen_te().values())
    w, e = _te_weights("diffusers")
    assert w == total
    assert not any("lm_head" in a for a in e["assumptions"])
