"""hv17: HunyuanVideo 1.5 has only double-stream blocks (ComfyUI 0.8.0 hunyuan_video/model.py:237-254, the 720p t2v
file: 54 double_blocks, no single_blocks), so its sampling peak is a double block's image MLP (phases block "dual"),
not FLUX.1's single-stream block ("flux", which the 13B's 40 single blocks keep). Expected values are hand-computed
from the source lines, not from the code under test.
Deliberate errors checked to fail: families.detect_family giving 1.5 "block": "flux" again (both tests: the layout's
arch and the estimate, 664,354,406 B); spec.DEFAULT_ARCH "hunyuan-video-15" back to "flux" (the family-only figure);
DUAL_TEXT 1.0 (the sum misses 40,960 B); "dual" chosen by counting no single_blocks keys (the synthetic 13B table,
which names none, turns "dual": a first try did that and moved nine measured HunyuanVideo 13B rows)."""
from gpu_garden.memory.estimate import families, layouts, phases

HV15 = "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16"
HV13 = "hunyuan_video_hunyuan_video_t2v_720p_bf16"


def _arch(name):
    c = next(c for c in families.split_components(layouts.table(name), name) if c["role"] == "diffusion_model")
    return c["arch"]


def test_the_15_layout_has_no_single_block_and_the_13b_keeps_flux():
    a = _arch(HV15)
    assert (a["block"], a["hidden"], a["depth"], a["ffn"]) == ("dual", 2048, 54, 8192)
    assert _arch(HV13)["block"] == "flux"   # 20 double + 40 single blocks: FLUX.1's single-stream peak
    # benchmarks/estimate_synth_layouts.py's synth:hunyuan-video-13B names only the refiner and img_in: still the 13B
    synth = {"txt_in.individual_token_refiner.blocks.0.norm1.weight": ("BF16", (3072,)),
             "img_in.proj.weight": ("BF16", (3072, 16, 1, 2, 2))}
    assert families.detect_family(synth)["family"] == "hunyuan-video"
    assert families.detect_family(synth)["arch"]["block"] == "flux"


def test_sampling_step_at_848x480x25_by_hand():
    # latent [1, 32, 7, 30, 53] (nodes_hunyuan.py:75), patch 1: 7 x 30 x 53 = 11130 image tokens, 10 text tokens
    # (the tracer's "a photo of a garden"), d 2048, f 4 x 2048 = 8192 (mlp_ratio 4.0), fp16 (2 bytes).
    # At flux/layers.py:257's GELU, per image token: img + joint attention output + MLP input (3 d) + Linear out and
    # GELU out (2 f) = 3 x 2048 + 2 x 8192 = 22528 elements: 11130 x 22528 x 2 = 501,473,280
    # per text token txt + its attention rows (2 d): 10 x 4096 x 2 = 81,920
    # rotary tables fp32 (pe [1, N, 64, 2, 2]): 11140 tokens x 128 x 8 = 11,407,360
    # sampler state: 32 x 11130 = 356,160 latent elements x 4 B x 6 = 8,547,840, model in/out 356,160 x 2 B x 4 = 2,849,280
    want = 501_473_280 + 81_920 + 11_407_360 + 8_547_840 + 2_849_280
    assert want == 524_359_680
    # the family's default arch (spec.DEFAULT_ARCH) and the layout's detected arch give the same figure
    assert phases.sample_activation_bytes("hunyuan-video-15", [1, 32, 7, 30, 53], "fp16", text_tokens=10) == want
    assert phases.sample_activation_bytes("hunyuan-video-15", [1, 32, 7, 30, 53], "fp16", arch=_arch(HV15),
                                          text_tokens=10) == want
