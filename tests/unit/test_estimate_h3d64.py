"""h3d64: Hunyuan3D 2.x sampling read from ComfyUI 0.8.0's code (hunyuan3d.sample_bytes): 2.1's U-shaped DiT holds its
skip outputs at the first skip block's MLP, 2.0's single blocks hold the joint sequence and, per context token, the
sampler's fp32 context, its cast and the text stream. Expected values by hand; the traced rows are
benchmarks/results/hunyuan3d_trace.json (benchmarks/trace_hunyuan3d.py)."""
import json
from pathlib import Path

from gpu_garden.memory.estimate import families, formula, layouts

TRACE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "hunyuan3d_trace.json"
SAMPLER_STATE_3072 = 64 * 3072 * 4 * 6 + 64 * 3072 * 2 * 4 * 2  # phases.sampler_state_bytes: 7,864,320


def _traced():
    return json.loads(TRACE.read_text(encoding="utf-8"))


def _sample(layout, resolution, batch=1):
    comps = [c for c in families.split_components(layouts.table(layout), layout) if c["role"] == "diffusion_model"]
    e = formula.estimate(comps, resolution, 1, 1, batch, cfg=True, policy={"_no_knobs": True})
    return e["breakdown"]["sample"]["activations"]


def test_v21_sample_peak_by_hand():
    """2.1 at 3072 tokens, cond + uncond (2 samples), fp16: per sample, 3073 sequence tokens (the time token and the
    latent's) x (10 skip outputs + 6 hidden-wide tensors + fc1's and the GELU's 2 x 4) x 2048, x_embedded 3072 x 2048,
    the context's swap 1370 x 1024, two bytes each; the sampler's fp32 context and its cast 1370 x 1024 x (4 + 2):
    2 x ((151,044,096 + 6,291,456 + 1,402,880) x 2 + 8,417,280) + 7,864,320 = 659,652,608. The old figure (20 units a
    token over 3072 + 1370 joint tokens, with rotary tables) was 744,738,816."""
    assert _sample("hunyuan3d_hunyuan_3d_v2.1", 3072) == 2 * ((3073 * 24 * 2048 + 3072 * 2048 + 1370 * 1024) * 2
                                                              + 1370 * 1024 * 6) + SAMPLER_STATE_3072 == 659_652_608


def test_v20_sample_peak_by_hand():
    """2.0 at 3072 tokens: per sample 4442 joint tokens x (input, attention output, linear1's 3 x 1024 + 4096, the GELU's
    4096 = 13 x 1024), the text stream 1370 x 1024, two bytes each; the context 1370 x 1536 x (4 + 2):
    2 x ((59,131,904 + 1,402,880) x 2 + 12,625,920) + 7,864,320 = 275,255,296 (old: 268,226,641, FLUX.1's fitted units)."""
    assert _sample("hunyuan3d_hunyuan3d-dit-v2_fp16", 3072) == 2 * ((4442 * 13 * 1024 + 1370 * 1024) * 2
                                                                    + 1370 * 1536 * 6) + SAMPLER_STATE_3072 == 275_255_296


def test_every_traced_sample_row_within_3_percent():
    """Every traced row (3072 and 4096 tokens: seen when the formula was read, a regression set; 2048, 5120 and batch 2:
    scored first at h3d63's rules, first_sight.added) within 3 %: the old 2.1 figure was +13.8 % at 3072 and +29.0 % at
    2048; the estimate keeps the sampler's state, which one traced call does not hold (+0.8 % for 2.1, +2.0 % for 2.0)."""
    r = _traced()
    assert r["first_sight"]["error_pct"]["2_1_2048"] == 29.0 and "error_pct.2_1_2048" in r["first_sight"]["added"]
    n = 0
    for v in r["variants"].values():
        for run in v["runs"]:
            ours = _sample(v["layout"], run["resolution"], run["batch"])
            assert abs(ours / run["activations"] - 1) <= 0.03, (v["variant"], run["resolution"], run["batch"], ours)
            n += 1
    assert n == 15


def test_multiview_rows_within_3_percent(tmp_path):
    """Hunyuan3Dv2ConditioningMultiView's 4 x 1370 context tokens cost more than joint tokens: per context token the
    sampler's fp32 c_crossattn (1536 x 4), its fp16 cast (1536 x 2) and the text stream (1024 x 2); counted, the three
    traced multi-view rows are within 3 % (old: -12.4 %, -10.2 %, -12.4 %)."""
    import sys
    sys.path.insert(0, str(TRACE.parents[1]))
    import trace_hunyuan3d as T
    r = _traced()
    for m in [r["multiview"]] + r["multiview_more"]:
        ours = T.ours(m["layout"], m["resolution"], 1, graph=True)
        assert abs(ours / m["activations"] - 1) <= 0.03, (m["layout"], m["resolution"], ours, m["activations"])


def _decode_est(tmp_path, widgets, batch=1):
    """A graph like the 3d_hunyuan3d-v2.1 template (4096 tokens; as test_estimate_h3d63._graph_v21) on the bundled 2.1
    layout, with VAEDecodeHunyuan3D's widgets."""
    from gpu_garden.memory.estimate import workflow
    layouts.write_sparse("hunyuan3d_hunyuan_3d_v2.1", tmp_path / "checkpoints" / "hunyuan_3d_v2.1.safetensors")
    g = {"nodes": [{"id": 1, "type": "ImageOnlyCheckpointLoader", "widgets_values": ["hunyuan_3d_v2.1.safetensors"]},
                   {"id": 2, "type": "CLIPVisionEncode", "widgets_values": ["center"]},
                   {"id": 3, "type": "Hunyuan3Dv2Conditioning", "widgets_values": []},
                   {"id": 4, "type": "EmptyLatentHunyuan3Dv2", "widgets_values": [4096, batch]},
                   {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 30, 5, "euler", "normal", 1]},
                   {"id": 6, "type": "VAEDecodeHunyuan3D", "widgets_values": widgets}], "links": []}
    return workflow.estimate_workflow(g, tmp_path)


def test_decode_counts_the_nodes_num_chunks_and_octree_resolution(tmp_path):
    """VAEDecodeHunyuan3D at num_chunks 16000, octree_resolution 384 (what ComfyUI runs: nodes_hunyuan3d.py:118 hands them
    to VAE.decode): 22,532 x 16000 + 2,176 x 4096 + 8 x 385^3 = 360,512,000 + 8,912,896 + 456,533,000 = 825,957,896
    bytes in fp16 (h3d63 counted the defaults' 324,965,640 and named the values)."""
    est = _decode_est(tmp_path, [16000, 384])
    assert est["breakdown"]["vae_decode"]["activations"] == 22532 * 16000 + 2176 * 4096 + 8 * 385 ** 3 == 825_957_896
    assert "octree_resolution 384" in est["vae"]["how"] and "16,000 at a time" in est["vae"]["how"]
    # a value the node does not take (min 1000 / 16) is counted at the defaults, and named
    est = _decode_est(tmp_path, [10, 9999])
    assert est["breakdown"]["vae_decode"]["activations"] == 324_965_640
    assert any("are not values the node takes; counted at 8000, 256" in a for a in est["assumptions"])


def test_shape_vae_decode_has_no_pixel_tile_figure(tmp_path):
    """The ShapeVAE decodes in num_chunks query points, not pixel tiles: no "tiled (node)" row, no tiled fallback in the
    decode line or the verdict's knobs (h3d63 showed a VAE Decode (Tiled) figure of 128-px tiles of the 1-D latent)."""
    from gpu_garden.memory.estimate import report
    est = _decode_est(tmp_path, [8000, 256], batch=2)
    assert "vae_decode_tiled" not in est["phases"] and "vae_decode_tiled" not in est["breakdown"]
    assert est["vae"]["tiled_bytes"] is None and est["vae"]["fallback_bytes"] is None
    assert est["breakdown"]["vae_decode"]["activations"] == 2 * 324_965_640  # both samples at once (no budget)
    text = report.format_text(est)
    assert "tiled fallback" not in text and "tiled (node)" not in text
    # on a card the decode does not fit (1 GiB), nothing is counted or offered tiled
    formula.judge(est, 2 ** 30)
    assert "vae_decode" not in (est.get("tiled_retry") or {})
    assert not any(k["id"] == "tiled_vae" for k in est["knobs"])


def test_assumption_lines_name_the_sequence_and_no_tile(tmp_path):
    """The sample line names 2.1's sequence (4097 tokens) apart from its 1370 cross-attended context tokens (h3d63's read
    5466 joint tokens), and the decode line names no VAE Decode (Tiled) tile size."""
    est = _decode_est(tmp_path, [8000, 256])
    assert "sample: 24.0 x hidden 2048 per token, 4097 sequence tokens (the latent's and the time token), 1370 context " \
           "tokens cross-attended" in est["assumptions"]
    line = next(a for a in est["assumptions"] if a.startswith("VAE decode:"))
    assert "VAEDecodeHunyuan3D" in line and "tiled: VAE Decode (Tiled)" not in line


def test_dinov2_image_encode_by_hand_and_against_the_trace():
    """CLIPVisionEncode's DINOv2 runs in fp32 (fp32 pixel values, manual cast): one 518 px image, 1370 tokens. Giant
    (2.0, SwiGLU at weights_out): 4 x (1370 x (6 x 1536 + 3 x 4096) + 4096 x 1536 (weights_out cast to fp32) + 3 x 518^2)
    = 146,227,632; large (2.1, MLP at the GELU): 4 x (1370 x (5 x 1024 + 2 x 4096) + 3 x 518^2) = 76,169,648. The trace
    (image_encode; its live tensors are what the rule reads: a regression set) within 0.01 %; the text encoders' rule read
    +192.4 % and +417.4 %."""
    r = _traced()
    for key, layout, want in (("2_0", "hunyuan3d_hunyuan3d-dit-v2_fp16", 146_227_632),
                              ("2_1", "hunyuan3d_hunyuan_3d_v2.1", 76_169_648)):
        comps = families.split_components(layouts.table(layout), layout)
        e = formula.estimate(comps, 3072, 1, 1, 1, cfg=True, policy={"_no_knobs": True})
        assert e["breakdown"]["text_encode"]["activations"] == want
        assert abs(want / r["image_encode"][key]["activations"] - 1) <= 0.0001
    assert 4 * (1370 * (6 * 1536 + 3 * 4096) + 4096 * 1536 + 3 * 518 ** 2) == 146_227_632
    assert 4 * (1370 * (5 * 1024 + 2 * 4096) + 3 * 518 ** 2) == 76_169_648
    assert r["first_sight"]["image_encode_error_pct"] == {"2_0": 192.4, "2_1": 417.4}


def test_v21_naive_attention_figure_by_hand():
    """With the scores held whole (math SDPA; the sample_naive_attention row), 2.1 at 3072 tokens peaks at blocks.11.attn1's
    softmax: the MLP peak's 659,652,608 less 2 d a sequence token (22 d held there, not 24: 2 x 2 x 3073 x 2048 x 2 =
    50,348,032) plus the scores and their softmax over its own 3073-token sequence (2 x 2 x 2 x 16 x 3073^2 =
    1,208,746,112): 1,818,050,688, +0.3 % on the trace (first sight +61.2 %, scores over 4442 joint tokens)."""
    layout = "hunyuan3d_hunyuan_3d_v2.1"
    comps = [c for c in families.split_components(layouts.table(layout), layout) if c["role"] == "diffusion_model"]
    e = formula.estimate(comps, 3072, 1, 1, 1, cfg=True, policy={"_no_knobs": True})
    want = 659_652_608 - 2 * 2 * 3073 * 2048 * 2 + 2 * 2 * 2 * 16 * 3073 ** 2
    assert e["breakdown"]["sample_naive_attention"]["activations"] == want == 1_818_050_688
    r = _traced()
    assert abs(want / r["math"]["2_1_3072"]["activations"] - 1) <= 0.01
    assert r["first_sight"]["math_error_pct"]["2_1_3072"] == 61.2
    e = formula.estimate(comps, 3072, 1, 1, 1, cfg=True, policy={"_no_knobs": True, "attention": "math"})
    assert e["breakdown"]["sample"]["activations"] == want  # --attention math reads the same figure
