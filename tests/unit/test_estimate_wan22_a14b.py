"""Wan 2.2 A14B under Wan's own runner: Wan-Video/Wan2.2's WanModel (wan/modules/model.py at 42bf4cf, l.460-467)
expands the one-per-sample timestep that text2video.py / image2video.py pass (torch.stack([t])) to every token, so
the A14B experts carry the same per-token fp32 modulation as TI2V-5B; Wan-Video/Wan2.1's WanModel does not. Expected
bytes are the code's element sizes per token x hidden, written out here."""
from gpu_garden.memory.estimate import families, formula as E, weights as W

HIDDEN = 5120


def _wan14b(i2v_a14b=False, wan21_i2v=False, blocks=2):
    # the keys families.detect_family reads for Wan, with Wan 2.x 14B shapes (dim 5120, ffn 13824, 40 heads)
    t = {"head.modulation": ("BF16", (1, 2, HIDDEN)), "head.head.weight": ("BF16", (64, HIDDEN)),
         "patch_embedding.weight": ("BF16", (HIDDEN, 36 if (i2v_a14b or wan21_i2v) else 16, 1, 2, 2))}
    for i in range(blocks):
        t[f"blocks.{i}.ffn.0.weight"] = ("BF16", (13824, HIDDEN))
        t[f"blocks.{i}.self_attn.q.weight"] = ("BF16", (HIDDEN, HIDDEN))
    if wan21_i2v:
        t["img_emb.proj.0.bias"] = ("BF16", (1280,))
    return t


def _dm(table, name):
    return [c for c in families.split_components(table, name) if c["role"] == "diffusion_model"]


def _act(comps):
    e = E.estimate(comps, 1280, 720, 81, cfg=False, policy={"_no_knobs": True, "runner": "wan", "i2v": False})
    return e["breakdown"]["sample"]["activations"] - W.largest_cast(comps[0]["table"])


def test_a14b_recognised_by_layout_or_name_and_wan21_not():
    assert _dm(_wan14b(i2v_a14b=True), "x.safetensors")[0]["arch"]["timestep"] == "token"  # 36 ch, no img_emb
    assert "timestep" not in _dm(_wan14b(wan21_i2v=True), "wan2.1_i2v_720p_14B_fp16.safetensors")[0]["arch"]
    t2v = _wan14b()
    assert "timestep" not in _dm(t2v, "wan2.1_t2v_14B_fp16.safetensors")[0]["arch"]
    for name in ("wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors", "Wan2_2-T2V-A14B-LOW_fp8_e4m3fn_scaled_KJ.safetensors"):
        c = _dm(t2v, name)[0]
        assert c["family"] == "wan21" and c["arch"]["timestep"] == "token" and "A14B" in c["variant"]


def test_a14b_adds_wan22_per_token_modulation_under_runner_wan():
    # 1280x720x81: 21 latent frames of 90x160 (Wan 2.1 VAE, 8x), 2x2 patches -> 21 * 45 * 80 tokens
    tokens = 21 * (720 // 16) * (1280 // 16)
    assert tokens == 75600
    wan21 = 4 + 4 + 3 * 2 + 4 + (8 + 8)           # fp32 x and modulated input, q/k/v bf16, rope(q) fp32, rope(k) f64 + c128
    modulation = 6 * 4 + 4 + 6 * 4                 # e0 [B,L,6,C], e [B,L,C], modulation + e0 [B,L,6,C], all fp32
    a21 = _act(_dm(_wan14b(), "wan2.1_t2v_14B_fp16.safetensors"))
    a22 = _act(_dm(_wan14b(), "wan2.2_t2v_low_noise_14B_fp16.safetensors"))
    assert a21 == wan21 * tokens * HIDDEN == 13_160_448_000
    assert a22 == (wan21 + modulation) * tokens * HIDDEN == 33_288_192_000


def test_a14b_unchanged_under_comfyui():
    # ComfyUI's port embeds the timestep per sample for every Wan 2.x model: the name changes nothing there
    pol = {"_no_knobs": True, "i2v": False}
    a = E.estimate(_dm(_wan14b(), "wan2.1_t2v_14B.safetensors"), 1280, 720, 81, cfg=False, policy=pol)
    b = E.estimate(_dm(_wan14b(), "wan2.2_t2v_high_noise_14B.safetensors"), 1280, 720, 81, cfg=False, policy=pol)
    assert a["peak"] == b["peak"]
