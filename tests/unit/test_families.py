"""Component split and family detection: the 14 real layouts, and synthetic tables carrying the keys and shapes
ComfyUI's comfy/model_detection.py looks at for the families not bundled."""
import pytest

from gpu_garden.memory.estimate import families
from gpu_garden.memory.estimate import headers
from gpu_garden.memory.estimate import layouts


table_of = layouts.table


EXPECTED_KIND = {"te_clip_g": "clip-g", "te_clip_l": "clip-l", "te_t5xxl_fp16": "t5-xxl", "te_umt5_xxl_fp16": "umt5-xxl",
                 "vae_flux_ae": "kl-f8-16ch", "vae_sd15_vae-ft-mse-840000-ema-pruned": "kl-f8-4ch", "vae_sdxl_vae": "kl-f8-4ch",
                 "vae_wan_2.1_vae": "wan21", "vae_wan2.2_vae": "wan22", "vae_hunyuan_video_vae_bf16": "hunyuan-video",
                 "vae_ltxv_v0.9": "ltxv", "vae_ltx-2_video_vae": "ltxv", "vae_flux2_vae": "kl-f16-32ch", "vae_hunyuan_video_1.5_vae": "hunyuan-video-15",
                 "te_gemma_3_12b_it": "gemma",  # ltx58: Gemma 3 12B with its vision tower is a text encoder
                 "te_ltx-2_text_connectors": "ltx-2-connectors",  # rev58: LTXAVTEModel's own part
                 "upscale_ltx-2-spatial-upscaler-x2-1.0": "ltx-2 latent upscaler"}  # ltx64: role other, its own phase
EXPECTED_VARIANT = {"flux_flux1-dev": "dev", "sd3_sd3.5_medium": "3.5 medium", "sdxl_sd_xl_base_1.0": "base",
                    "wan_wan2.1_t2v_1.3B_fp16": "t2v 1.3B", "wan_wan2.2_ti2v_5B_fp16": "ti2v 5B",
                    "chroma_chroma-unlocked-v2": "", "hidream_hidream_i1_full_fp16": "i1 (17B)",
                    "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16": "", "ltx-2_ltx-2-19b_bf16": "18.9B",
                    "hunyuan3d_hunyuan3d-dit-v2_fp16": "2.0", "hunyuan3d_hunyuan3d-dit-v2-mini_fp16": "2.0 mini",
                    "hunyuan3d_hunyuan_3d_v2.1": "2.1"}
ROLE = {"unet": "diffusion_model", "diffusion_model": "diffusion_model", "clip_l": "text_encoder", "clip_g": "text_encoder",
        "text_encoder": "text_encoder", "vae": "vae"}


@pytest.mark.parametrize("name", layouts.names())
def test_bundled_layouts(name):
    lay = layouts.load(name)
    comps = families.split_components(table_of(name), name)
    assert sum(c["bytes"] for c in comps) == lay["total_bytes"]
    roles = sorted(c["role"] for c in comps if c["role"] != "other")
    assert roles == sorted(ROLE[c] for c in lay["components"])
    if "family" in lay:
        dm = [c for c in comps if c["role"] == "diffusion_model"]
        assert dm[0]["family"] == lay["family"]
        if name in EXPECTED_VARIANT:
            assert dm[0]["variant"] == EXPECTED_VARIANT[name]
    else:
        assert comps[0]["kind"] == EXPECTED_KIND[name]


def test_checkpoint_split_sdxl():
    comps = families.split_components(table_of("sdxl_sd_xl_base_1.0"))
    kinds = [(c["role"], c["kind"]) for c in comps]
    assert ("text_encoder", "clip-l") in kinds and ("text_encoder", "clip-g") in kinds and ("vae", "kl-f8-4ch") in kinds
    dm = comps[0]
    assert dm["family"] == "sdxl" and dm["arch"]["model_channels"] == 320


def test_unused_buffers_are_other_not_model():
    comps = families.split_components(table_of("sd15_v1-5-pruned-emaonly-fp16"))
    other = [c for c in comps if c["role"] == "other"]
    assert other and all(k in other[0]["table"] for k in ("alphas_cumprod", "betas"))


def test_comfy_saved_checkpoint_with_text_encoders_prefix():
    t = {"model.diffusion_model." + k: v for k, v in table_of("flux_flux1-dev").items()}
    t.update({"text_encoders.clip_l.transformer." + k: v for k, v in table_of("te_clip_l").items()})
    t.update({"text_encoders.t5xxl.transformer." + k: v for k, v in table_of("te_t5xxl_fp16").items()})
    t.update({"vae." + k: v for k, v in table_of("vae_flux_ae").items()})
    comps = families.split_components(t)
    assert [(c["role"], c.get("family") or c["kind"]) for c in comps] == [
        ("diffusion_model", "flux1"), ("text_encoder", "clip-l"), ("text_encoder", "t5-xxl"), ("vae", "kl-f8-16ch")]


# -- families not bundled: keys and shapes from ComfyUI's model_detection.py --------------------------

B = "BF16"


def blocks(fmt, n, shape=(64,)):
    return {fmt.format(i): (B, shape) for i in range(n)}


SYNTH = {
    "sd2": ({"input_blocks.0.0.weight": (B, (320, 4, 3, 3)), "input_blocks.1.1.proj_in.weight": (B, (320, 320)),
             "input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight": (B, (320, 1024))}, ""),
    "sd1": ({"input_blocks.0.0.weight": (B, (320, 4, 3, 3)), "input_blocks.1.1.proj_in.weight": (B, (320, 320, 1, 1)),
             "input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight": (B, (320, 768))}, ""),
    "flux2": ({"double_blocks.0.img_attn.norm.key_norm.scale": (B, (128,)), "img_in.weight": (B, (6144, 128)),
               "double_stream_modulation_img.lin.weight": (B, (36864, 6144)), **blocks("double_blocks.{}.x", 8),
               **blocks("single_blocks.{}.x", 48)}, "dev (32B)"),
    "chroma": ({"double_blocks.0.img_attn.norm.key_norm.scale": (B, (128,)), "img_in.weight": (B, (3072, 64)),
                "distilled_guidance_layer.norms.0.scale": (B, (5120,))}, ""),
    "qwen-image": ({"txt_norm.weight": (B, (3584,)), "img_in.weight": (B, (3072, 64)), **blocks("transformer_blocks.{}.x", 60)}, "20B"),
    "hidream": ({"caption_projection.0.linear.weight": (B, (2560, 4096))}, "i1 (17B)"),
    "lumina2": ({"cap_embedder.1.weight": (B, (2304, 2304)), **blocks("layers.{}.x", 26)}, "2B"),
    "z-image": ({"cap_embedder.1.weight": (B, (3840, 2560)), **blocks("layers.{}.x", 30)}, "6B"),
    "wan21": ({"head.modulation": (B, (1, 2, 5120)), "head.head.weight": (B, (64, 5120)), "blocks.0.ffn.0.weight": (B, (13824, 5120)),
               "patch_embedding.weight": (B, (5120, 36, 1, 2, 2)), "img_emb.proj.0.bias": (B, (1280,)), **blocks("blocks.{}.x", 40)}, "i2v 14B"),
    "hunyuan-video": ({"txt_in.individual_token_refiner.blocks.0.norm1.weight": (B, (3072,)), "img_in.proj.weight": (B, (3072, 16, 1, 2, 2)),
                       "final_layer.linear.weight": (B, (64, 3072)), "txt_in.input_embedder.weight": (B, (3072, 4096)),
                       **blocks("double_blocks.{}.x", 20), **blocks("single_blocks.{}.x", 40)}, "t2v"),
    "ltxv": ({"adaln_single.emb.timestep_embedder.linear_1.bias": (B, (2048,)),
              "transformer_blocks.0.attn2.to_k.weight": (B, (2048, 2048)), **blocks("transformer_blocks.{}.x", 28)}, None),
    "mochi": ({"t5_yproj.weight": (B, (1536, 4096))}, "preview 10B"),
    "cosmos": ({"blocks.block0.blocks.0.block.attn.to_q.0.weight": (B, (4096, 4096))}, None),
    "sd3": ({"joint_blocks.0.context_block.attn.qkv.weight": (B, (7296, 2432)), "x_embedder.proj.weight": (B, (2432, 16, 2, 2)),
             **blocks("joint_blocks.{}.x", 38)}, "3.5 large"),
    "pixart": ({"t_block.1.weight": (B, (6912, 1152)), "x_embedder.proj.weight": (B, (1152, 4, 2, 2))}, ""),
}


@pytest.mark.parametrize("family", sorted(SYNTH))
def test_family_from_comfyui_detection_keys(family):
    table, variant = SYNTH[family]
    got = families.detect_family(table)
    assert got["family"] == family
    if variant is not None:
        assert got["variant"] == variant
    assert got["arch"]["hidden"] > 0


def test_wan_sizes_and_flux_variants():
    assert families.detect_family(table_of("wan_wan2.1_t2v_1.3B_fp16"))["arch"]["hidden"] == 1536
    flux = table_of("flux_flux1-dev")
    assert families.detect_family(flux)["arch"]["depth"] == 19 + 38
    schnell = {k: v for k, v in flux.items() if not k.startswith("guidance_in.")}
    assert families.detect_family(schnell)["variant"] == "schnell"


def test_unknown_is_flagged():
    got = families.detect_family({"foo.weight": (B, (3, 3)), "bar.bias": (B, (3,))})
    assert got["family"] == "unknown"
    comps = families.split_components({"foo.weight": (B, (3, 3))})
    assert comps[0]["role"] == "diffusion_model" and comps[0]["family"] == "unknown"


@pytest.mark.parametrize("table,kind", [
    ({"model.embed_tokens.weight": (B, (128256, 4096)), "model.layers.0.self_attn.q_proj.weight": (B, (4096, 4096))}, "llama"),
    ({"model.embed_tokens.weight": (B, (152064, 3584)), "model.layers.0.self_attn.q_proj.weight": (B, (3584, 3584)),
      "visual.blocks.0.attn.qkv.weight": (B, (3840, 1280))}, "qwen2.5-vl"),
    ({"model.embed_tokens.weight": (B, (262208, 2560)), "model.layers.0.self_attn.q_proj.weight": (B, (2048, 2560))}, "gemma"),
    ({"model.embed_tokens.weight": (B, (151936, 2560)), "model.layers.0.self_attn.q_norm.weight": (B, (128,))}, "qwen3"),
    ({"token_embd.weight": ("Q8_0", (128256, 4096)), "blk.0.attn_q.weight": ("Q8_0", (4096, 4096))}, "llama"),
    ({"enc.blk.0.attn_q.weight": ("Q8_0", (4096, 4096))}, "t5-xxl"),
    ({"encoder.block.0.layer.0.SelfAttention.q.weight": (B, (768, 768)), "shared.weight": (B, (32128, 768))}, "t5"),
])
def test_text_encoder_kinds(table, kind):
    assert families.text_encoder_kind(table) == kind
    assert families.split_components(table)[0]["role"] == "text_encoder"


def test_video_vae_kinds():
    assert families.vae_kind({"decoder.conv_in.conv.weight": (B, (512, 16, 3, 3, 3))}) == "hunyuan-video"
    wan22 = {"conv2.weight": (B, (48, 48, 1, 1, 1)), "decoder.upsamples.0.x": (B, (1,))}
    assert families.vae_kind(wan22) == "wan22"


def test_gguf_diffusion_model_keeps_family(tmp_path):
    table = {k: ("Q8_0" if len(s) == 2 and s[-1] % 32 == 0 else d, s) for k, (d, s) in table_of("flux_flux1-dev").items()}
    comps = families.split_components(table)
    assert comps[0]["family"] == "flux1"
    assert comps[0]["bytes"] == headers.table_bytes(table) < 0.6 * layouts.load("flux_flux1-dev")["total_bytes"]


def test_scaled_fp8_diffusion_model():
    """ComfyUI's "scaled" fp8 files: F8_E4M3 weights, an F32 scale per weight, and a scaled_fp8 marker."""
    t = {}
    for k, (d, s) in table_of("flux_flux1-dev").items():
        if len(s) == 2:
            t[k] = ("F8_E4M3", s)
            t[k.replace(".weight", ".scale_weight")] = ("F32", ())
        else:
            t[k] = (d, s)
    t["scaled_fp8"] = ("F8_E4M3", (0,))
    comps = families.split_components(t)
    assert len(comps) == 1 and comps[0]["family"] == "flux1"
    assert comps[0]["bytes"] == headers.table_bytes(t)


def test_one_config_table_names_every_family():
    """ComfyUI config class -> family id comes from families.CONFIG_FAMILY only, with ids from families.FAMILIES."""
    assert set(families.CONFIG_FAMILY.values()) <= set(families.FAMILIES)
    assert families.family_for_config("WAN22_T2V") == "wan22" and families.family_for_config("HunyuanVideo") == "hunyuan-video"
    assert families.family_for_config("QwenImage") == "qwen-image" and families.family_for_config("SDXLRefiner") == "sdxl"
    assert families.family_for_config("WAN21_Camera") == "wan21"          # a subclass not listed: the longest prefix
    assert families.family_for_config("SomethingElse") is None and families.family_for_config(None) is None
