"""ComfyUI-GGUF's text-encoder loader (city96/ComfyUI-GGUF loader.py gguf_clip_loader) dequantizes a quantized token
embedding to fp16 on load ('Dequantizing token_embd.weight to prevent runtime OOM.'): for LLM encoders when the
vocabulary has at least 64K rows, for T5 only UMT5-XXL's 256384 x 4096; T5-XXL's 32128 rows stay quantized. Expected
bytes are counted here by hand from the shapes (Q8_0: 34 bytes per 32 weights), not by the estimate: holding the
embedding as stored (the old figure), in fp32, or dequantizing T5-XXL's small one breaks a test. Found reading
measured batch 11's GGUF text-encoder load lines (OrsoEric/HOWTO-ComfyUI's Qwen3-4B Q8_0 4424.19 MB)."""
from gpu_garden.memory.estimate import families, formula as E

VOCAB, HIDDEN, FFN = 151936, 2560, 9728


def _q8(n):
    return n // 32 * 34


def _qwen3_gguf():
    return {"token_embd.weight": ("Q8_0", (HIDDEN, VOCAB)), "output_norm.weight": ("F32", (HIDDEN,)),
            "blk.0.attn_q_norm.weight": ("F32", (128,)), "blk.0.attn_norm.weight": ("F32", (HIDDEN,)),
            "blk.0.ffn_up.weight": ("Q8_0", (HIDDEN, FFN)), "blk.0.ffn_down.weight": ("Q8_0", (FFN, HIDDEN))}


def _te_weights(table, runner="comfyui", name="qwen3-4b-q8_0.gguf"):
    comps = families.split_components(table, name)
    assert [c["role"] for c in comps] == ["text_encoder"]
    e = E.estimate(comps, 1024, 1024, 1, 1, cfg=False,
                   policy={"_no_knobs": True, "runner": runner, "text_encoders": "resident", "models": "resident",
                           "family": "z-image"})
    return e["_ctx"]["w"]["te"], e


def test_comfyui_gguf_holds_a_large_token_embedding_in_fp16():
    w, e = _te_weights(_qwen3_gguf())
    # F32 norms are cast to 16 bits on load like any fp32 weight; the two Q8_0 linears stay as stored
    expected = 2 * VOCAB * HIDDEN + 2 * (HIDDEN + 128 + HIDDEN) + 2 * _q8(HIDDEN * FFN)
    assert w == expected
    assert any("token embedding is held in fp16" in a for a in e["assumptions"])


def test_outside_comfyui_the_embedding_stays_as_stored():
    w, e = _te_weights(_qwen3_gguf(), runner="diffusers")
    assert w == _q8(VOCAB * HIDDEN) + 2 * (HIDDEN + 128 + HIDDEN) + 2 * _q8(HIDDEN * FFN)
    assert not any("token embedding" in a for a in e["assumptions"])


def test_t5_xxl_small_vocabulary_stays_quantized_and_umt5_is_dequantized():
    def t5(vocab):
        return {"shared.weight": ("Q8_0", (vocab, 4096)),
                "encoder.block.0.layer.0.SelfAttention.q.weight": ("Q8_0", (4096, 4096)),
                "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight": ("F16", (32, 64))}
    rest = _q8(4096 * 4096) + 2 * 32 * 64
    w, _ = _te_weights(t5(32128), name="t5xxl-q8_0.gguf")
    assert w == _q8(32128 * 4096) + rest
    w, _ = _te_weights(t5(256384), name="umt5-xxl-q8_0.gguf")
    assert w == 2 * 256384 * 4096 + rest
