"""fix68g: audit aud68a's proven findings on the video / new image estimates (issue 15), each checked against ComfyUI
0.8.0's source.

F1: HunyuanVideo 1.5's VAE decode was ComfyUI's memory_used_decode formula (comfy/sd.py:502, frame-independent): 24.72
GiB per sample at 1280x720x121 where the project's tracer gives 13.74 (benchmarks/results/hv15_decode_trace.json), so
the estimate claimed the tiled retry on 24 GB. Now traced (vae.HV15_*); VAEs still on the formula say so and the retry
is not claimed from the formula alone (vae_untraced.py)."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import spec, vae

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
GiB = 2 ** 30


def _hv15_rows():
    return json.loads((RESULTS / "hv15_decode_trace.json").read_text())["rows"]


@pytest.mark.parametrize("row", _hv15_rows(), ids=lambda r: f"{r['set']}-{r['size']}")
def test_hv15_decode_is_the_trace(row):
    """Every traced size, FIT and CHECK, within 1 % of the tracer's activations (old code: +80 .. +2127 %)."""
    w, h, f = map(int, row["size"].split("x"))
    ours = vae.vae_decode_bytes("hunyuan-video-15", [1, 32, 1 + (f - 1) // 4, h // 16, w // 16], "bf16")
    assert abs(ours / row["activations_peak_bytes"] - 1) < 0.01, (ours, row)


def test_hv15_720p_121_fits_24gb_untiled(capsys):
    """aud68a F_hv15_decode_heuristic.txt: the estimate said RUNS TILED on 24 GB (untiled 29.14 GiB); the traced decode
    (13.74 GiB + 2.35 GiB of weights) runs untiled there."""
    from support.cli_run import estimate
    _, js, _ = estimate(capsys, "hunyuanvideo1.5", "--width", "1280", "--height", "720", "--frames", "121",
                        "--vram", "24", "--json")
    d = json.loads(js)
    assert d["vae"]["fallback"] is False and d["vae"]["tiled"] is False
    assert 13.6 * GiB < d["vae"]["per_sample"] < 13.9 * GiB
    assert d["verdict"] == "fits"


@pytest.mark.parametrize("kind,shape", [("mochi", [1, 12, 19, 60, 106]), ("cosmos", [1, 16, 16, 88, 160]),
                                        ("kl-64ch", [1, 64, 64, 64])])
def test_formula_only_vae_claims_no_tiled_retry(kind, shape):
    """A VAE still sized by ComfyUI's formula: a budget under that figure no longer makes the estimate claim VAE
    Decode's out-of-memory retry (old code: fallback True), and the line says the figure is the formula."""
    per = vae.vae_decode_bytes(kind, shape, "bf16")
    assert per == int(spec.VAE[kind]["comfy"]([1] + shape[1:]) * 2)  # the formula, as the line says
    out = vae.phase(kind, shape, "bf16", free_bytes=per // 2, mode="auto", device=None)
    assert out["fallback"] is False and out["tiled"] is False
    assert "memory_used_decode formula (not traced" in out["how"]


def test_traced_vae_still_retries_tiled():
    """The retry stays where the figure is traced: HunyuanVideo 1.5 at 1280x720x121 with 8 GiB free."""
    out = vae.phase("hunyuan-video-15", [1, 32, 31, 45, 80], "fp16", free_bytes=8 * GiB, mode="auto", device=None)
    assert out["fallback"] is True and "formula" not in out["how"]


def test_formula_only_table_matches_the_decoder():
    """vae_untraced.TRACED_DECODE names exactly the kinds vae._decode_acts does not size by ComfyUI's formula."""
    from gpu_garden.memory.estimate import vae_untraced
    shape3, shape2 = [1, 16, 9, 60, 104], [1, 16, 128, 128]
    for kind, v in spec.VAE.items():
        sh = shape3 if v["t"] else shape2
        sh = [1, 64, 1, 512] if kind == "hunyuan3d-shape" else sh
        formula = vae.vae_decode_bytes(kind, sh, "bf16") == int(v["comfy"]([1] + sh[1:]) * 2)
        assert vae_untraced.formula_only(kind) == formula, kind


# F2: Wan 2.2 5B at 1280x704x121 on 12-13 GiB: the estimate decoded untiled ("1 of 1 sample(s) at once", its tests at
# 1.05x the activations) where Fit to Card's plan tiles (plan.py step 3: the measured 1.26x room, CAPPED_ROOM). One
# figure now: decode_room.margin, read by the plan, vae.phase's batch test and verdict.as_run's row test (room_extra).
WAN22_121 = ["wan2.2", "--width", "1280", "--height", "704", "--frames", "121"]


@pytest.mark.parametrize("vram,tiled", [("12.5", True), ("13", True), ("13.5", False), ("14", False)])
def test_wan22_decode_retries_tiled_where_the_plan_tiles(capsys, vram, tiled):
    """aud68a F_wan22_5b_cli_budgets.txt / F_fit_wan22.txt. The plan's room on 13.5 GiB: 13.5 - 0.44 (context) - 1.31
    (VAE) - 0.39 (reserve) = 11.36 GiB >= 8.81 x 1.26 = 11.10: untiled; on 13: 10.86, tiled."""
    from support.cli_run import estimate
    _, js, _ = estimate(capsys, *WAN22_121, "--vram", vram, "--json")
    d = json.loads(js)
    retried = d["vae"]["fallback"] or "vae_decode" in (d["tiled_retry"] or {})
    assert retried is tiled, (d["vae"]["how"], d["tiled_retry"])
    if vram == "13":
        assert d["outcome"]["status"] == "runs tiled"
        assert d["tiled_retry"]["vae_decode"]["untiled"] > 13 * GiB  # the room, not the 11.40 GiB row


def test_batch_test_is_the_plans_room():
    """VAE.decode's batch over the free memory (vae.phase) by Fit to Card's plan.decode_room: 1 MiB under the room the
    plan needs, the estimate retries tiled; 1 MiB over, it decodes untiled (old code: untiled at both)."""
    from gpu_garden.memory.fit import plan as P
    shape, MiB = [1, 48, 31, 44, 80], 2 ** 20
    need = P.decode_room("wan22", shape, "bf16", "cuda")
    per = vae.vae_decode_bytes("wan22", shape, "bf16", device="cuda")
    assert need > 1.2 * per  # the measured room, not the 1.05 margin
    tight = vae.phase("wan22", shape, "bf16", free_bytes=need - MiB, device="cuda")
    room = vae.phase("wan22", shape, "bf16", free_bytes=need + MiB, device="cuda")
    assert tight["fallback"] is True and room["fallback"] is False


# F3: reference latents (FLUX.1 Kontext, FLUX.2, Qwen-Image-Edit) were not counted: ComfyUI concatenates each to the image
# tokens (comfy/ldm/flux/model.py:314-345, qwen_image/model.py:437-462). aud68a F_kontext_ref_tokens.txt: the Kontext
# template at 1024^2 counted 4352 tokens; with its reference (FluxKontextImageScale -> VAEEncode -> ReferenceLatent) 8448.
@pytest.fixture(scope="module")
def edit_models(tmp_path_factory):
    from gpu_garden.memory.estimate import layouts
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-kontext-dev.safetensors")
    layouts.write_sparse("qwen_image_qwen_image_bf16", d / "diffusion_models" / "qwen_image_edit.safetensors")
    layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors")
    return d


def _kontext(ref=True):
    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-kontext-dev.safetensors", "weight_dtype": "default"}},
          "2": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
          "3": {"class_type": "LoadImage", "inputs": {"image": "in.png"}},
          "4": {"class_type": "FluxKontextImageScale", "inputs": {"image": ["3", 0]}},
          "5": {"class_type": "VAEEncode", "inputs": {"pixels": ["4", 0], "vae": ["2", 0]}},
          "6": {"class_type": "ReferenceLatent", "inputs": {"conditioning": ["7", 0], "latent": ["5", 0]}},
          "7": {"class_type": "ConditioningZeroOut", "inputs": {}},
          "8": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "9": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": ["6", 0] if ref else ["7", 0],
                                                     "negative": ["7", 0], "latent_image": ["8", 0], "cfg": 1.0}},
          "10": {"class_type": "VAEDecode", "inputs": {"samples": ["9", 0], "vae": ["2", 0]}},
          "11": {"class_type": "SaveImage", "inputs": {"images": ["10", 0]}}}
    return wf if ref else {k: n for k, n in wf.items() if k != "6"}  # an unused ReferenceLatent would be an output


def test_kontext_reference_latent_adds_its_tokens(edit_models):
    """FLUX.1 at 1024^2: 64 x 64 = 4096 image tokens + 256 T5 tokens; the reference, FluxKontextImageScale's largest
    preferred area (1568 x 672) as a square of 1026 px: 1026 // 8 = 128 latent, 64 x 64 = 4096 more: 8448."""
    from gpu_garden.memory.estimate import workflow
    plain = workflow.estimate_workflow(_kontext(ref=False), edit_models, policy={"budget": None})
    est = workflow.estimate_workflow(_kontext(), edit_models, policy={"budget": None})
    assert plain["latent"]["tokens"] == 4352
    assert est["latent"]["tokens"] == 8448 and est["latent"]["image_tokens"] == 8192
    assert any("1 reference image(s)" in a and "4096 tokens" in a for a in est["assumptions"])
    assert est["phases"]["sample"] > plain["phases"]["sample"]


def test_qwen_edit_plus_images_are_references(edit_models):
    """TextEncodeQwenImageEditPlus with a VAE and two images: each scaled to 1024 x 1024 pixels (nodes_qwen.py:93-104),
    Qwen-Image's 8x VAE and 2x2 patches: 64 x 64 = 4096 tokens each, 8192 beside the 1024^2 output's 4096."""
    from gpu_garden.memory.estimate import workflow
    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_image_edit.safetensors", "weight_dtype": "default"}},
          "2": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
          "3": {"class_type": "LoadImage", "inputs": {"image": "a.png"}},
          "4": {"class_type": "TextEncodeQwenImageEditPlus", "inputs": {"clip": ["12", 0], "vae": ["2", 0], "prompt": "x",
                                                                        "image1": ["3", 0], "image2": ["3", 0]}},
          "8": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "9": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": ["4", 0], "negative": ["4", 0],
                                                     "latent_image": ["8", 0], "cfg": 1.0}},
          "10": {"class_type": "VAEDecode", "inputs": {"samples": ["9", 0], "vae": ["2", 0]}},
          "11": {"class_type": "SaveImage", "inputs": {"images": ["10", 0]}},
          "12": {"class_type": "CLIPLoader", "inputs": {"clip_name": "qwen_2.5_vl_7b.safetensors", "type": "qwen_image"}}}
    est = workflow.estimate_workflow(wf, edit_models, policy={"budget": None})
    assert est["latent"]["image_tokens"] == 4096 + 8192


def test_cli_ref_images(capsys):
    """--ref-images N: N references at the output size; a typed count out of range is refused."""
    from support.cli_run import estimate
    _, js, _ = estimate(capsys, "flux1-dev", "--ref-images", "2", "--json")
    assert json.loads(js)["latent"]["tokens"] == 4352 + 2 * 4096
    rc, _, err = estimate(capsys, "flux1-dev", "--ref-images", "17")
    assert rc == 2 and "--ref-images needs 0 to 16" in err


# F5: the tiled retry's row left out the models ComfyUI leaves loaded beside the VAE (aud68a F_ltxv_template.txt: row
# weights 0.00 while dm_kept 2.01 and te_kept 8.87 GiB); VAE.decode's retry (comfy/sd.py:807-824) unloads nothing.
@pytest.mark.parametrize("vram", ["12", "18.5"])
def test_tiled_retry_row_counts_the_models_left_loaded(capsys, vram):
    from support.cli_run import estimate
    _, js, _ = estimate(capsys, "ltxv", "--batch", "3", "--vram", vram, "--json")
    d = json.loads(js)
    b = d["breakdown"]["vae_decode"]
    kept = b["dm_kept"] + b["te_kept"]
    assert d["vae"]["fallback"] is True and kept > GiB
    assert b["weights"] >= kept  # the VAE's weights and what stays loaded
    assert d["phases"]["vae_decode"] == b["weights"] + b["activations"] + b["allocator_margin"] + b["fixed"]
    if d["peak_torch_phase"] == "vae_decode":  # counted once in max_memory_allocated, not again as "left loaded"
        assert d["peak_torch"] == b["weights"] + b["activations"]


# F4: the workflow_templates benchmark's stand-ins were of the wrong size class and dtype (every Wan 2.2 14B template
# from the 1.3B layout, every fp8 file as bf16, SD3.5 Large from the Medium checkpoint): benchmarks/template_standins.py
def _standins():
    import sys
    bench = str(Path(__file__).resolve().parents[2] / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import template_standins
    return template_standins


def _params_and_bytes(layout):
    import math
    b = {"F8_E4M3": 1, "BF16": 2, "F16": 2, "F32": 4}
    t = layout["tensors"]
    return (sum(math.prod(v["shape"]) for k, v in t.items() if not k.endswith("scale_weight") and k != "scaled_fp8"),
            sum(math.prod(v["shape"]) * b[v["dtype"]] for v in t.values()))


def test_wan22_14b_fp8_standin_is_14b_in_fp8():
    """wan2.2_i2v_high_noise_14B_fp8_scaled: Wan 2.1 i2v 14B's 16,394,878,784 parameters (comfy/ldm/wan/model.py i2v),
    its block matrices in F8_E4M3 with a scale each: about 1 byte a parameter, not 2 (old: the 1.3B bf16 layout)."""
    from gpu_garden.memory.estimate import layouts
    S = _standins()
    lay, how, differs = S.standin("wan2.2_i2v_high_noise_14B_fp8_scaled.safetensors", "diffusion_models",
                                  "wan_wan2.1_t2v_1.3B_fp16", "", layouts, ("diffusion_models",))
    params, size = _params_and_bytes(lay)
    assert differs is None and params == 16_394_878_784
    assert 1.0 * params < size < 1.1 * params
    assert lay["tensors"]["blocks.0.ffn.0.weight"]["dtype"] == "F8_E4M3" and "blocks.0.ffn.0.scale_weight" in lay["tensors"]


def test_fp8_text_encoder_and_sd35_large_standins():
    from gpu_garden.memory.estimate import layouts
    S = _standins()
    lay, _, differs = S.standin("umt5_xxl_fp8_e4m3fn_scaled.safetensors", "text_encoders", "te_umt5_xxl_fp16", "",
                                layouts, ("diffusion_models",))
    params, size = _params_and_bytes(lay)
    assert differs is None and size < 0.6 * 2 * params  # the block matrices in one byte; embeddings and norms in 16 bits
    _, _, differs = S.standin("sd3.5_large_fp8_scaled.safetensors", "checkpoints", "sd3_sd3.5_medium", "", layouts,
                              ("checkpoints",))
    assert differs and "SD3.5 Large" in differs


# F6: on a run that fits, the knobs offered a partial offload of the diffusion model (aud68a F_wan22_5b_cli_budgets.txt,
# 16 GiB: "saves 544.38 MiB  partial offload ... fits"); each knob's own phase saving is shown beside the peak's.
def test_no_partial_offload_offer_when_it_fits(capsys):
    from support.cli_run import estimate
    _, out, _ = estimate(capsys, *WAN22_121, "--vram", "16", "--dynamic-vram", "off", "--ram", "64")
    assert "verdict: FITS" in out
    assert "partial offload of the diffusion model" not in out
    assert "less in sample; then text encode is the peak" in " ".join(out.split())
