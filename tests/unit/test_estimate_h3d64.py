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
