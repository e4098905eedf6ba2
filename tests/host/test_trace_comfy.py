"""`gpu-garden trace` on ComfyUI's real model classes, run with ComfyUI's interpreter (COMFYUI_PYTHON) against the
checkout in COMFYUI_DIR. No server: the command imports the checkout itself (forced --cpu) and builds each model
on the meta device from the bundled layouts of the families' standard files."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from support.comfy_host import host_unavailable_reason
from support.pack import BOOT, host_json as _host_json

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]


def _run(code, *args, timeout=300):
    p = subprocess.run([os.environ["COMFYUI_PYTHON"], "-c", BOOT + code, *args], capture_output=True, text=True,
                       timeout=timeout, cwd=str(REPO))
    return p


def _cli(*args):
    return _run("from gpu_garden.memory.cli import main; sys.exit(main(sys.argv[1:]))", "trace", "--comfyui",
                os.environ["COMFYUI_DIR"], *args)


def _layout_bytes(name, prefix="", itemsize=None):
    from gpu_garden.memory.estimate import layouts
    sizes = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "F8_E4M3": 1}
    total = 0
    for k, t in layouts.load(name)["tensors"].items():
        if k.startswith(prefix):
            n = 1
            for d in t["shape"]:
                n *= d
            total += n * (itemsize or sizes[t["dtype"]])
    return total


def test_trace_sd1_json_is_complete():
    p = _cli("--family", "sd1", "--width", "512", "--height", "512", "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout)
    for key in ("peak", "weights", "activations_peak", "at", "attention", "allocator", "top", "model"):
        assert key in r
    assert r["model"]["class"] == "UNetModel" and r["model"]["dtype"] == "float16"
    assert r["model"]["latent"] == [2, 4, 64, 64]                      # cond + uncond batched
    # the U-Net's weights, fp16, exactly as the real file holds them, + model_sampling's 1000-step sigma tables
    assert r["weights"] == _layout_bytes("sd15_v1-5-pruned-emaonly-fp16", "model.diffusion_model.", 2) + 2 * 4000
    assert r["peak"] == r["weights"] + r["activations_peak"]
    assert 50 << 20 < r["activations_peak"] < 1 << 30
    assert r["at"]["op"].startswith("aten.") and r["at"]["module"]
    a = r["attention"]
    assert a["calls"] == 32 and a["kernel"] == "flash"                 # 16 transformer blocks x (self, cross)
    assert a["peak"]["math"] > a["peak"]["flash"] == r["peak"]
    # 64x64 tokens, 8 heads, fp16: ComfyUI allows reduced-precision math SDPA (no float32 upcast)
    assert a["largest_scores"] == 2 * 8 * 4096 * 4096 * 2
    assert r["host_attention"]["function"] == "attention_pytorch"
    assert r["allocator"]["allocated_peak"] >= r["peak"]
    assert r["allocator"]["reserved_peak"] >= r["allocator"]["allocated_peak"]


def test_trace_from_checkpoint_header_and_text_output(tmp_path):
    from gpu_garden.memory.estimate import layouts
    ckpt = layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", tmp_path / "sd15.safetensors")
    p = _cli("--family", "sd1", "--checkpoint", str(ckpt), "--width", "256", "--height", "256", "--attention", "math")
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout
    assert "sd1 sample: UNetModel (float16), latent [2, 4, 32, 32]" in out
    assert "traced with math" in out and "CUDA allocator" in out and "largest live at the peak" in out
    bad = _cli("--family", "sd1", "--checkpoint", str(tmp_path / "missing.safetensors"), "--width", "64",
               "--height", "64")
    assert bad.returncode == 2 and "no such file" in bad.stderr
    wrong = _cli("--family", "sdxl", "--checkpoint", str(ckpt), "--width", "64", "--height", "64")
    assert wrong.returncode == 2
    assert "ComfyUI detects this model as SD15 (family sd1), not --family sdxl" in wrong.stderr


def test_fp8_checkpoint_casts_weights_per_layer(tmp_path):
    from gpu_garden.memory.estimate import layouts
    lay = layouts.load("flux_flux1-dev")
    for name, t in lay["tensors"].items():                    # an fp8 (e4m3fn) FLUX.1-dev as commonly shared
        if name.endswith(".weight") and len(t["shape"]) == 2:
            t["dtype"] = "F8_E4M3"
    ckpt = layouts.write_sparse(lay, tmp_path / "flux1-dev-fp8.safetensors")
    p = _cli("--family", "flux1", "--checkpoint", str(ckpt), "--width", "256", "--height", "256", "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout)
    assert r["model"]["dtype"] == "float8_e4m3fn" and r["model"]["manual_cast"] == "bfloat16"
    assert r["weights"] < _layout_bytes("flux_flux1-dev", "", 2) * 0.6
    assert r["live_at_peak"].get("weight cast", 0) > 0        # a bf16 copy of the layer's weight, while it runs
    assert any(t["kind"] == "weight cast" for t in r["top"])


def test_readme_trace_commands_run_as_written(tmp_path):
    """README's `gpu-garden trace` block, each command as printed with /path/to/ComfyUI a checkout whose
    models/checkpoints holds flux1-dev-fp8.safetensors (sparse, the Comfy-Org layout: prefixed, fp8 matrices, the VAE
    inside): the bare --checkpoint name is found there, as ComfyUI's CheckpointLoaderSimple finds it (ux50 S9).
    Breaking it: comfy_checkout.trace_family without find_checkpoint ("no such file", exit 2)."""
    import re
    import shlex
    from gpu_garden.memory.estimate import layouts
    block = re.search(r"### `gpu-garden trace`.*?```\n(.*?)```", (REPO / "README.md").read_text(), re.S).group(1)
    commands = [shlex.split(line) for line in block.splitlines() if line.startswith("gpu-garden trace ")]
    assert len(commands) == 3 and any("--checkpoint" in c for c in commands)
    checkout = tmp_path / "ComfyUI"
    checkout.mkdir()
    for entry in Path(os.environ["COMFYUI_DIR"]).iterdir():
        if entry.name != "models":
            (checkout / entry.name).symlink_to(entry)
    tensors = {}
    for name, t in layouts.load("flux_flux1-dev")["tensors"].items():
        fp8 = name.endswith(".weight") and len(t["shape"]) == 2
        tensors["model.diffusion_model." + name] = dict(t, dtype="F8_E4M3" if fp8 else t["dtype"])
    tensors.update({"vae." + k: t for k, t in layouts.load("vae_flux_ae")["tensors"].items()})
    layouts.write_sparse({"tensors": tensors, "__metadata__": {}},
                         checkout / "models" / "checkpoints" / "flux1-dev-fp8.safetensors")
    for argv in commands:
        argv = [str(checkout) if a == "/path/to/ComfyUI" else a for a in argv[1:]]
        p = _run("from gpu_garden.memory.cli import main; sys.exit(main(sys.argv[1:]))", *argv, timeout=600)
        assert p.returncode == 0, (argv, p.stderr[-3000:])
        if "--json" in argv:
            r = json.loads(p.stdout)
            assert r["model"]["checkpoint"] == "flux1-dev-fp8.safetensors" and r["model"]["dtype"] == "float8_e4m3fn"


FAMILY_RUNS = [
    # family, phase, width, height, frames, weights layout, prefix, itemsize
    ("sdxl", "sample", 512, 512, 1, "sdxl_sd_xl_base_1.0", "model.diffusion_model.", 2),
    ("sd3", "sample", 512, 512, 1, "sd3_sd3.5_medium", "model.diffusion_model.", 2),
    ("flux1", "sample", 256, 256, 1, "flux_flux1-dev", "", 2),
    ("wan21", "sample", 256, 256, 5, "wan_wan2.1_t2v_1.3B_fp16", "", 2),
    ("sd1", "decode", 256, 256, 1, "vae_sd15_vae-ft-mse-840000-ema-pruned", "", 2),
    ("flux1", "decode", 256, 256, 1, "vae_flux_ae", "", 2),
    ("wan21", "decode", 128, 128, 5, "vae_wan_2.1_vae", "", 2),
    ("sdxl", "encode", 256, 256, 1, "vae_sdxl_vae", "", 2),
    ("sd1", "text", 64, 64, 1, "te_clip_l", "", 2),
    ("wan21", "text", 64, 64, 1, "te_umt5_xxl_fp16", "", 2),
]


@pytest.fixture(scope="module")
def family_results():
    runs = [r[:5] for r in FAMILY_RUNS]
    code = ("import json; from gpu_garden.memory.trace.tracer import trace_family\n"
            "out = [trace_family(sys.argv[1], f, w, h, frames=n, phase=ph) for f, ph, w, h, n in json.loads(sys.argv[2])]\n"
            "print(json.dumps(out))")
    return _host_json(code, json.dumps(runs))


@pytest.mark.parametrize("i", range(len(FAMILY_RUNS)), ids=[f"{r[0]}-{r[1]}" for r in FAMILY_RUNS])
def test_family_traces(family_results, i):
    family, phase, w, h, frames, layout, prefix, itemsize = FAMILY_RUNS[i]
    r = family_results[i]
    assert r["model"]["family"] == family and r["model"]["phase"] == phase
    # the file's tensors in the compute dtype, plus what the class makes itself (Wan's RoPE table, CLIP-L's
    # text projection that this file leaves out)
    assert 0 <= r["weights"] - _layout_bytes(layout, prefix, itemsize) < 2 << 20
    assert r["model"]["dtype"] in ("float16", "bfloat16")
    assert r["activations_peak"] > 0 and r["peak"] >= r["weights"]
    assert r["at"]["op"].startswith("aten.")
    a = r["attention"]
    if phase in ("sample", "text") or family != "wan21":
        assert a["calls"] > 0
    if phase == "text":
        assert r["model"]["manual_cast"] == "float32" and r["live_at_peak"].get("weight cast", 0) > 0
    if a["calls"]:
        assert a["peak"]["math"] >= max(v for k, v in a["peak"].items() if k != "math")
    assert r["allocator"]["allocated_peak"] >= r["peak"]


def test_meta_trace_equals_the_real_forward_on_cpu():
    """The same ComfyUI class run for real (zero weights, CPU kernels) under the same tracer allocates exactly
    what the meta trace says, byte for byte and at the same op: meta kernels model the real allocations.
    In float32: CPU bfloat16 convolutions without AVX512-BF16 ran over 5 minutes for one 128 px SD1 decode (2.4 s
    in float32 on the same 2-core AMD EPYC), which timed the test out; the claim does not depend on the dtype."""
    code = r'''
import json, torch
from gpu_garden.memory.trace import comfy_checkout as trace_comfy
from gpu_garden.memory.trace.tracer import trace
out = []
for fam, ph, w, h, fr in (("sd1", "decode", 128, 128, 1), ("wan21", "decode", 64, 64, 5)):
    case = trace_comfy.build_case(sys.argv[1], fam, w, h, frames=fr, phase=ph, dtype="float32")
    meta = trace(case["weights"], *case["args"], call=case["call"], attention="math")
    owner = case["owner"]
    owner.to_empty(device="cpu")
    with torch.no_grad():
        for t in list(owner.parameters()) + list(owner.buffers()):
            t.zero_()
    x = [torch.zeros(a.shape, dtype=a.dtype) for a in case["args"]]
    real = trace(case["weights"], *x, call=case["call"], attention="math", device="cpu")
    out.append([[meta["peak"], meta["at"], meta["allocations"]], [real["peak"], real["at"], real["allocations"]]])
print(json.dumps(out))
'''
    for meta, real in _host_json(code):
        assert meta == real


def test_trace_base_model_of_a_built_model_matches_trace_family():
    """The in-host entry (a BaseModel ComfyUI holds, here with real CPU weights) gives the family trace's peak."""
    code = r'''
import json, torch
from gpu_garden.memory.trace import comfy_checkout as trace_comfy
fam = trace_comfy.trace_family(sys.argv[1], "sd1", 256, 256)
case = trace_comfy.build_case(sys.argv[1], "sd1", 256, 256)
model = case["owner"]
model.to_empty(device="cpu")                        # a loaded model: real weights, untouched by the trace
r = trace_comfy.trace_base_model(model, (2, 4, 32, 32), conds={"c_crossattn": (2, 77, 768)})
low = trace_comfy.trace_base_model(model, (2, 4, 32, 32), conds={"c_crossattn": (2, 77, 768)}, offload="cpu")
print(json.dumps([fam["peak"] - fam["weights"], r["peak"] - r["weights"], r["weights"] - fam["weights"],
                  low["weights"], low["peak"] < fam["peak"], model.diffusion_model.out[2].weight.device.type]))
'''
    fam_act, act, extra_weights, low_weights, low_smaller, device = _host_json(code)
    assert act == fam_act
    assert 0 <= extra_weights < 1 << 20                       # + model_sampling's sigma tables
    assert low_weights == 0 and low_smaller and device == "cpu"


PINS = json.loads((REPO / "tests" / "unit" / "test_estimate_traced_pins.json").read_text())


def test_traced_peaks_are_pinned():
    """The tracer still gives exactly the bytes the estimate was calibrated on. If this fails, the tracer's
    behaviour changed: run benchmarks/bench_estimate.py, recalibrate on its FIT rows, update the pins, and
    commit all of it together (the formula's accuracy test reads the same pins)."""
    cases = [[c[k] for k in ("family", "width", "height", "frames", "phase", "attention", "batch")] for c in PINS["cases"]]
    code = ("import json\nfrom gpu_garden.memory.trace import tracer\nout=[]\n"
            "for f,w,h,n,ph,att,b in json.loads(sys.argv[1]):\n"
            f"    r=tracer.trace_family({os.environ['COMFYUI_DIR']!r}, f, w, h, n, b, att, ph)\n"
            "    out.append({'activations': r['activations_peak'], 'peak': r['peak'], 'weights': r['weights']})\n"
            "print('PINS', json.dumps(out))\n")
    p = _run(code, json.dumps(cases), timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(next(line for line in p.stdout.splitlines() if line.startswith("PINS "))[5:])
    for pin, g in zip(PINS["cases"], got):
        want = {k: pin[k] for k in ("activations", "peak", "weights")}
        assert g == want, (pin["family"], pin["phase"], pin["width"], pin["height"], pin["frames"], g, want)


# Qwen-Image and Z-Image (est18): figures read once off `trace_family` on ComfyUI 0.8.0 (torch 2.14 CPU build, meta
# tensors), bf16 weights from the layouts built from ComfyUI's own classes (memory/estimate/layouts/README.md).
NEW_FAMILY_RUNS = [
    # family, phase, width, height, cfg, latent, activations, weights, class, peak module
    ("qwen-image", "sample", 1024, 1024, None, [1, 16, 1, 128, 128], 280_916_996, 40_860_842_176,
     "QwenImageTransformer2DModel", "diffusion_model.transformer_blocks.0.img_mlp.net.0"),
    ("qwen-image", "sample", 1024, 1024, True, [2, 16, 1, 128, 128], 562_694_152, 40_860_842_176,
     "QwenImageTransformer2DModel", "diffusion_model.transformer_blocks.0.attn.to_out.0"),
    ("qwen-image", "sample", 1328, 1328, None, [1, 16, 1, 166, 166], 472_181_636, 40_860_842_176,
     "QwenImageTransformer2DModel", "diffusion_model.transformer_blocks.0.img_mlp.net.0"),
    ("qwen-image", "decode", 1024, 1024, None, [1, 16, 1, 128, 128], 3_426_486_528, 253_785_062, "WanVAE",
     "decoder.upsamples.14.residual.6"),
    ("z-image", "sample", 1024, 1024, None, [1, 16, 128, 128], 471_640_584, 12_309_821_472, "NextDiT",
     "diffusion_model.layers.1.feed_forward"),
    ("z-image", "decode", 1024, 1024, None, [1, 16, 128, 128], 1_359_478_784, 167_639_366, "AutoencodingEngine",
     "decoder.up.0.block.0.conv1"),
]


@pytest.fixture(scope="module")
def new_family_results():
    runs = [[r[0], r[1], r[2], r[3], r[4]] for r in NEW_FAMILY_RUNS]
    code = ("import json; from gpu_garden.memory.trace.tracer import trace_family\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc\n"
            "from gpu_garden.memory.errors import UserError\n"
            "out = [trace_family(sys.argv[1], f, w, h, phase=ph, cfg=c) for f, ph, w, h, c in json.loads(sys.argv[2])]\n"
            "same = {}\n"
            "from gpu_garden.memory.estimate import layouts\n"
            "for fam, name in (('qwen_image', 'qwen_image_qwen_image_bf16'), ('z-image', 'z_image_z_image_turbo_bf16')):\n"
            "    built = cc.class_layout(sys.argv[1], fam)['tensors']\n"
            "    same[fam] = built == layouts.load(name)['tensors']\n"
            "try:\n"
            "    trace_family(sys.argv[1], 'qwen-image', 64, 64, phase='text'); err = None\n"
            "except UserError as e:\n"
            "    err = str(e)\n"
            "print(json.dumps([out, same, err]))")
    return _host_json(code, json.dumps(runs))


@pytest.mark.parametrize("i", range(len(NEW_FAMILY_RUNS)), ids=[f"{r[0]}-{r[1]}-{r[2]}-{'cfg' if r[4] else 'usual'}"
                                                                 for r in NEW_FAMILY_RUNS])
def test_qwen_image_and_z_image_traces(new_family_results, i):
    family, phase, w, h, cfg, latent, acts, weights, cls, module = NEW_FAMILY_RUNS[i]
    r = new_family_results[0][i]
    assert r["model"]["family"] == family and r["model"]["class"] == cls and r["model"]["dtype"] == "bfloat16"
    assert r["model"]["latent"] == latent
    assert r["activations_peak"] == acts and r["weights"] == weights
    assert r["at"]["module"] == module
    if phase == "sample" and family == "qwen-image":
        # one conditioning per call unless asked: the 10-token prompt and the 5-token empty negative do not concatenate
        assert ("separate passes" in r["model"]["note"]) == (cfg is None)
        assert r["model"]["context"] == [10, 3584] and r["attention"]["calls"] == 60
        # the layout's bf16 tensors + model_sampling's 10000-step fp32 sigma tables
        assert r["weights"] == _layout_bytes("qwen_image_qwen_image_bf16") + 40_000
    if phase == "sample" and family == "z-image":
        assert r["model"]["context"] == [13, 2560] and r["attention"]["calls"] == 34    # 30 layers + 4 refiners
        assert r["weights"] == _layout_bytes("z_image_z_image_turbo_bf16") + 4000
    if phase == "decode":    # Qwen-Image's VAE is the Wan 2.1 VAE's layout, Z-Image's FLUX.1's ae (in bf16)
        assert r["weights"] == _layout_bytes("vae_wan_2.1_vae" if family == "qwen-image" else "vae_flux_ae", "", 2)


def test_new_family_layouts_are_comfyuis_classes_and_text_is_refused(new_family_results):
    _, same, err = new_family_results
    assert same == {"qwen_image": True, "z-image": True}
    assert err and "no bundled text encoder layout for qwen-image" in err


# HunyuanVideo, LTX-Video and FLUX.2 (est18b): figures read once off `trace_family` on ComfyUI 0.8.0 (torch 2.14 CPU
# build, meta tensors), bf16 layouts built from ComfyUI's own diffusion-model and VAE classes
# (comfy_recipes.CLASS_LAYOUTS / VAE_CLASS_LAYOUTS, memory/estimate/layouts/README.md). The latent geometry comes from
# estimate.spec.FAMILY: HunyuanVideo 8x / 4 frames, LTX-Video 32x / 8 frames, FLUX.2 16x with 128 channels.
VIDEO_FAMILY_RUNS = [
    # family, phase, width, height, frames, latent, activations, weights, class, peak module, layout
    ("hunyuan-video", "sample", 848, 480, 25, [1, 16, 7, 60, 106], 973_898_510, 25_642_029_088, "HunyuanVideo",
     "diffusion_model.single_blocks.0", "hunyuan_video_hunyuan_video_t2v_720p_bf16"),
    ("hunyuan-video", "decode", 848, 480, 25, [1, 16, 7, 60, 106], 9_235_947_008, 492_957_606, "AutoencoderKL",
     "decoder.up.1.upsample", "vae_hunyuan_video_vae_bf16"),
    ("ltxv", "sample", 768, 512, 97, [2, 128, 13, 16, 24], 506_329_608, 3_846_810_944, "LTXVModel",
     "diffusion_model.transformer_blocks.0.ff.net.0", "ltxv_ltx_video_2b_v0.9_bf16"),
    ("ltxv", "decode", 768, 512, 97, [1, 128, 13, 16, 24], 3_724_545_024, 838_388_578, "VideoVAE",
     "decoder.up_blocks.9.res_blocks.1.conv1.conv", "vae_ltxv_v0.9"),
    ("flux2", "sample", 1024, 1024, 1, [1, 128, 64, 64], 1_025_179_658, 64_446_602_304, "Flux",
     "diffusion_model.single_blocks.0.mlp_act", "flux2_flux2_dev_bf16"),
    ("flux2", "decode", 1024, 1024, 1, [1, 128, 64, 64], 1_362_100_480, 168_092_750, "AutoencoderKL",
     "decoder.up.0.block.0.conv1", "vae_flux2_vae"),
]


@pytest.fixture(scope="module")
def video_family_results():
    runs = [list(r[:5]) for r in VIDEO_FAMILY_RUNS]
    code = ("import json; from gpu_garden.memory.trace.tracer import trace_family\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc\n"
            "from gpu_garden.memory.estimate import layouts\n"
            "from gpu_garden.memory.errors import UserError\n"
            "out = [trace_family(sys.argv[1], f, w, h, frames=n, phase=ph) for f, ph, w, h, n in json.loads(sys.argv[2])]\n"
            "same = {}\n"
            "for fam, dm, vae in (('hunyuan-video', 'hunyuan_video_hunyuan_video_t2v_720p_bf16', 'vae_hunyuan_video_vae_bf16'),\n"
            "                     ('ltxv', 'ltxv_ltx_video_2b_v0.9_bf16', 'vae_ltxv_v0.9'),\n"
            "                     ('flux2', 'flux2_flux2_dev_bf16', 'vae_flux2_vae')):\n"
            "    same[fam] = [cc.class_layout(sys.argv[1], fam)['tensors'] == layouts.load(dm)['tensors'],\n"
            "                 cc.vae_class_layout(sys.argv[1], fam)['tensors'] == layouts.load(vae)['tensors']]\n"
            "try:\n"
            "    trace_family(sys.argv[1], 'flux2', 256, 256, frames=9); err = None\n"
            "except UserError as e:\n"
            "    err = str(e)\n"
            "print(json.dumps([out, same, err]))")
    return _host_json(code, json.dumps(runs))


@pytest.mark.parametrize("i", range(len(VIDEO_FAMILY_RUNS)), ids=[f"{r[0]}-{r[1]}" for r in VIDEO_FAMILY_RUNS])
def test_hunyuan_video_ltxv_flux2_traces(video_family_results, i):
    family, phase, w, h, frames, latent, acts, weights, cls, module, layout = VIDEO_FAMILY_RUNS[i]
    r = video_family_results[0][i]
    assert r["model"]["family"] == family and r["model"]["class"] == cls and r["model"]["dtype"] == "bfloat16"
    assert r["model"]["latent"] == latent
    assert r["activations_peak"] == acts and r["weights"] == weights
    assert r["at"]["module"] == module
    if phase == "sample":
        # the layout's bf16 tensors + model_sampling's fp32 sigma tables: 1000 steps (HunyuanVideo, ModelType.FLOW),
        # 10000 (LTX-Video and FLUX.2: ModelSamplingFlux)
        assert r["weights"] == _layout_bytes(layout) + (4000 if family == "hunyuan-video" else 40_000)
        calls, ctx, note = {"hunyuan-video": (62, [6, 4096], "single pass"), "ltxv": (56, [128, 4096], "batched"),
                            "flux2": (56, [512, 15360], "single pass")}[family]
        assert r["attention"]["calls"] == calls      # HunyuanVideo: 20 double + 40 single + 2 token-refiner blocks
        assert r["model"]["context"] == ctx and note in r["model"]["note"]
    else:   # FLUX.2's VAE: + BatchNorm's int64 num_batches_tracked, a buffer the layout (floating tensors) leaves out
        assert r["weights"] == _layout_bytes(layout) + (8 if family == "flux2" else 0)


def test_video_family_layouts_are_comfyuis_classes_and_frames_need_video(video_family_results):
    _, same, err = video_family_results
    assert same == {"hunyuan-video": [True, True], "ltxv": [True, True], "flux2": [True, True]}
    assert err and "--frames is for video families" in err and "hunyuan-video, hunyuan-video-15, ltx-2, ltxv" in err


# Chroma, HiDream I1 and HunyuanVideo 1.5 (lay53): the classes still build the exact bundled layouts, and ComfyUI's
# model_detection, handed each layout as a file's state dict, picks the model config the recipe was built with
# (comfy/supported_models.py) and comfy.sd.VAE the branch of HunyuanVideo 1.5's VAE (memory/estimate/layouts/README.md)
def test_lay53_layouts_are_comfyuis_classes():
    code = ("import json, torch\nfrom gpu_garden.memory.trace import comfy_checkout as cc\n"
            "from gpu_garden.memory.estimate import layouts\n"
            "comfy = cc.import_comfy(sys.argv[1])\nfrom comfy import model_detection\nout = {}\n"
            "for rec, name in (('chroma', 'chroma_chroma-unlocked-v2'), ('hidream', 'hidream_hidream_i1_full_fp16'),\n"
            "                  ('hunyuan-video-1.5', 'hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16')):\n"
            "    built = cc.class_layout(sys.argv[1], rec)\n"
            "    mc = model_detection.model_config_from_unet(cc.meta_state_dict(layouts.load(name)['tensors']), '')\n"
            "    out[rec] = [built['tensors'] == layouts.load(name)['tensors'], built['family'], type(mc).__name__]\n"
            "vae = layouts.load('vae_hunyuan_video_1.5_vae')\n"
            "with torch.device('meta'):\n"
            "    v = comfy.sd.VAE(sd=cc.meta_state_dict(vae['tensors']))\n"
            "out['vae'] = [cc.vae_class_layout(sys.argv[1], 'hunyuan-video-1.5')['tensors'] == vae['tensors'],\n"
            "              type(v.first_stage_model.decoder).__module__, v.latent_channels]\n"
            "print(json.dumps(out))")
    assert _host_json(code) == {"chroma": [True, "chroma", "Chroma"], "hidream": [True, "hidream", "HiDream"],
                                "hunyuan-video-1.5": [True, "hunyuan-video-15", "HunyuanVideo15"],
                                "vae": [True, "comfy.ldm.hunyuan_video.vae_refiner", 32]}


# hv16: HunyuanVideo 1.5's sampling step (comfy_recipes.FAMILIES["hunyuan-video-15"]) on its bundled layout. By hand:
# latent [1, 32, (25 - 1) // 4 + 1, 480 // 16, 848 // 16] = [1, 32, 7, 30, 53] (nodes_hunyuan.py:75); img_in takes
# 32 noise + 33 c_concat channels = 65 (the layout's img_in.proj.weight [2048, 65, 1, 1, 1]); 54 double blocks + the
# token refiner's 2 = 56 attention calls; weights = the layout's fp16 tensors + model_sampling's 1000 fp32 sigmas +
# 3 x 2048 x 2 bytes: cond_type_embedding is a plain nn.Embedding (model.py:286, no dtype given), so fp32, not fp16.
# activations_peak is pinned as traced at hv16 (first sight: the estimate read +28.3 % over it; hv17 gave 1.5 the block
# "dual" read from flux/layers.py, +1.3 % since, and the bench rows became regression rows).
# Breaking it: the recipe without "concat" (ComfyUI's img_in convolution raises on 32 channels), or context (6, 4096).
def test_hunyuan_video_15_sampling_trace():
    code = ("import json; from gpu_garden.memory.trace.tracer import trace_family\n"
            "r = trace_family(sys.argv[1], 'hunyuan-video-1.5', 848, 480, frames=25)\n"
            "print(json.dumps({k: r[k] for k in ('weights', 'activations_peak', 'attention', 'model')}))")
    r = _host_json(code)
    m = r["model"]
    assert (m["family"], m["class"], m["config"], m["dtype"]) == ("hunyuan-video-15", "HunyuanVideo", "HunyuanVideo15", "float16")
    assert m["latent"] == [1, 32, 7, 30, 53] and m["context"] == [10, 3584] and "separate passes" in m["note"]
    assert r["attention"]["calls"] == 56
    assert r["weights"] == _layout_bytes("hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16") + 4000 + 3 * 2048 * 2
    assert r["activations_peak"] == 517_787_162


# ltx58: LTX-2's layout is what ComfyUI 0.8.0's LTXAVModel builds (comfy_recipes.CLASS_LAYOUTS["ltx-2"]; model_detection,
# handed the layout, picks LTXAV), and one sampling step on it (comfy_recipes.FAMILIES["ltx-2"]). By hand: video latent
# [2, 128, 13, 16, 24] (nodes_lt.py:34 at 768x512x97, cond and uncond batched: the connectors' context is 1024 tokens
# for both), 97 audio latents (audio_vae.py:235), context [1024, 2 x 3840]; 48 blocks x 6 attention calls (attn1, attn2,
# audio_attn1, audio_attn2, audio_to_video_attn, video_to_audio_attn) = 288. The peak is the video FeedForward's GELU.
# activations_peak and the weights beyond the layout (model_sampling's sigmas and the class's other buffers, 40,000 B)
# are pinned as traced at ltx58 (first sight: the estimate read -13.6 %; the block "av" since: +1.3 %).
# Breaking it (checked): the recipe without "audio" (the unpacked 5-D latent reaches the patchifier as a 4-D one: ValueError),
# or context (1024, 3840) (caption_projection's matmul refuses the 1920-wide half: RuntimeError).
def test_ltx2_layout_and_sampling_trace():
    code = ("import json; from gpu_garden.memory.trace.tracer import trace_family\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc\nfrom gpu_garden.memory.estimate import layouts\n"
            "comfy = cc.import_comfy(sys.argv[1])\nfrom comfy import model_detection\n"
            "lay = layouts.load('ltx-2_ltx-2-19b_bf16')\n"
            "mc = model_detection.model_config_from_unet(cc.meta_state_dict(lay['tensors']), '')\n"
            "same = cc.class_layout(sys.argv[1], 'ltx-2')['tensors'] == lay['tensors']\n"
            "r = trace_family(sys.argv[1], 'ltx-2', 768, 512, frames=97)\n"
            "print(json.dumps(dict({k: r[k] for k in ('weights', 'activations_peak', 'attention', 'model')},\n"
            "                      same=same, config=type(mc).__name__)))")
    r = _host_json(code)
    assert r["same"] and r["config"] == "LTXAV"
    m = r["model"]
    assert (m["family"], m["class"], m["config"], m["dtype"]) == ("ltx-2", "LTXAVModel", "LTXAV", "bfloat16")
    assert m["latent"] == [2, 128, 13, 16, 24] and m["context"] == [1024, 7680] and m["note"] == "cond+uncond batched"
    assert r["attention"]["calls"] == 288
    assert r["attention"]["at"]["flash"] == {"op": "aten.gelu", "module": "diffusion_model.transformer_blocks.0.ff.net.0"}
    assert r["weights"] == _layout_bytes("ltx-2_ltx-2-19b_bf16") + 40_000
    assert r["activations_peak"] == 1_361_370_136
