"""diffusers' enable_sequential_cpu_offload (offload sequential, runner diffusers) leaves every model's buffers on the
device: it calls accelerate's cpu_offload(model, device, offload_buffers=len(model._parameters) > 0), False for a
pipeline's models, and AlignDevicesHook.init_hook then sets only the parameters to meta and moves each buffer to the
execution device once; pre_forward / post_forward stream parameters only (weights.SEQUENTIAL_RESIDENT_BUFFERS).
SD3 / SD3.5's PatchEmbed registers pos_embed as a persistent buffer (pos_embed_max_size set), so it sits under every
phase and is never the streamed layer. Bytes counted here from the shapes, not taken from the estimate: SD3.5 Medium's
pos_embed 1 x (384 x 384) x 1536 and SD3.5 Large's 1 x (192 x 192) x 2432 in fp16; the largest streamed matrix of the
Medium MMDiT-X the 13824 x 1536 adaLN modulation of a dual-attention block; T5-XXL's 32128 x 4096 token embedding."""
import json
import sys
from pathlib import Path

from gpu_garden.memory.estimate import families, formula as E, layouts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

POS_MEDIUM = 384 * 384 * 1536 * 2
POS_LARGE = 192 * 192 * 2432 * 2
ADALN = 13824 * 1536 * 2  # joint_blocks.N.x_block.adaLN_modulation.1.weight, fp16
T5_EMBED = 32128 * 4096 * 2
VAE_CONV = 512 * 512 * 3 * 3 * 2  # the SD3.5 VAE's largest conv kernel, fp16 in this layout


def _sd35(offload="sequential", runner="diffusers"):
    comps = [c for n, f in (("sd3_sd3.5_medium", "sd3"), ("te_clip_l", "te_clip_l"), ("te_clip_g", "te_clip_g"),
                            ("te_t5xxl_fp16", "te_t5xxl_fp16"))
             for c in families.split_components(layouts.table(n), f)]
    return E.estimate(comps, 512, 512, cfg=True, policy={"_no_knobs": True, "offload": offload, "runner": runner,
                                                         "vae_dtype": "fp16", "vae_decode": "untiled", "text_tokens": 333})


def test_pos_embed_sits_under_every_phase():
    bd = _sd35()["breakdown"]
    assert bd["text_encode"]["weights"] == POS_MEDIUM + T5_EMBED
    assert bd["sample"]["weights"] == POS_MEDIUM
    assert bd["vae_decode"]["weights"] == POS_MEDIUM + VAE_CONV
    assert any("buffers to the device once" in a and "pos_embed" in a for a in _sd35()["assumptions"])


def test_the_streamed_layer_is_a_parameter_not_the_buffer():
    # ComfyUI --novram streams the pos_embed with the rest (no accelerate hooks): its largest layer is the table
    diffusers, comfy = _sd35()["breakdown"]["sample"], _sd35(runner="comfyui")["breakdown"]["sample"]
    assert comfy["weights"] == 0
    assert diffusers["activations"] - comfy["activations"] == ADALN - POS_MEDIUM


def test_only_enable_sequential_cpu_offload_keeps_buffers():
    comfy = _sd35(runner="comfyui")
    assert comfy["breakdown"]["text_encode"]["weights"] == T5_EMBED
    assert not any("buffers" in a for a in comfy["assumptions"])
    # model offload moves the whole transformer, its pos_embed inside: counted once, with the model
    model = _sd35(offload="model")
    dm = next(c for c in model["components"] if c["role"] == "diffusion_model")
    assert model["breakdown"]["sample"]["weights"] == dm["resident"]
    assert not any("buffers" in a for a in model["assumptions"])


def test_a_model_without_buffer_rows_is_as_before():
    comps = [c for n, f in (("flux_flux1-dev", "flux1"), ("te_t5xxl_fp16", "t5"), ("vae_flux_ae", "vae"))
             for c in families.split_components(layouts.table(n), f)]
    e = E.estimate(comps, 1024, 1024, cfg=False, policy={"_no_knobs": True, "offload": "sequential", "runner": "diffusers",
                                                         "vae_dtype": "bf16", "vae_decode": "untiled"})
    assert e["breakdown"]["sample"]["weights"] == 0
    assert e["breakdown"]["text_encode"]["weights"] == T5_EMBED
    assert not any("buffers" in a for a in e["assumptions"])


def test_the_sd35_large_synth_names_its_pos_embed_inside_the_count():
    t = B.synth("synth:sd3.5-large-8B")
    assert t["pos_embed"] == ("BF16", (1, 192 * 192, 2432))
    assert sum(B.math.prod(s) for _, s in t.values()) == 8_146_280_768


def test_batch_30_sequential_rows_differ_by_their_pos_embed():
    # the same text encoders, VAE and 512 x 512 fp16 decode: the two rows' estimates differ by the buffer alone
    # (measured: 1323.0 and 1062.3 MiB, 260.7 apart; the two tables are 261.0 MiB apart)
    ours = {r["id"]: o for r, o, _, _ in B.measured() if r.get("batch_id") == 30 and "sequential" in r["id"]}
    assert len(ours) == 2
    med = ours["gperdrizet-u6-sd35-medium-fp16-sequential-offload-512-p100"]
    large = ours["gperdrizet-u6-sd35-large-turbo-fp16-sequential-offload-512-gtx1070"]
    assert med - large == POS_MEDIUM - POS_LARGE
    rows = {r["id"]: r for r in json.loads(B.MEASURED.read_text())["rows"]}
    assert rows["gperdrizet-u6-sd35-large-turbo-fp16-sequential-offload-512-gtx1070"]["policy"]["offload"] == "sequential"
