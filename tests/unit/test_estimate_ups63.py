"""ups63: the pixel upscale step (UpscaleModelLoader + ImageUpscaleWithModel, ComfyUI 0.8.0
comfy_extras/nodes_upscale_model.py) is a phase of its own in `estimate --workflow` (memory/estimate/pixel_upscale.py).
The headers are hand-made with the real shapes of RRDBNet (23 blocks, 64 features, growth 32) and SRVGGNetCompact
(realesr-general-x4v3: 64 features, 32 convs); the .pth files are written by torch.save here. The graph is modelled
on the structure of ComfyUI_examples' "2 pass txt2img" hires fix with an ESRGAN upscale (checkpoint -> KSampler ->
VAE Decode -> Upscale Image (using Model) -> Save Image); its sizes and names are this test's. Expected values by hand
below. Before ups63 the loader was only named ("not counted, loaded beside the models estimated") and no phase held it."""
import json
import time
import zipfile
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import layouts, phase_peaks, pixel_upscale, torch_file, workflow
from gpu_garden.memory.estimate.spec import FRAGMENTATION
from support.upscale_models import RRDB_FP32, RRDB_VALUES, compact, rrdb_old

torch = pytest.importorskip("torch")
REPO = Path(__file__).resolve().parents[2]


def _sparse(table, path):
    return layouts.write_sparse({"tensors": {k: {"dtype": d, "shape": s} for k, (d, s) in table.items()}}, path)


def test_rrdbnet_header_is_esrgan_x4_at_fp32_whatever_the_file_stores(tmp_path):
    m = pixel_upscale.read_file(_sparse(rrdb_old("F16"), tmp_path / "4x-UltraSharp.safetensors"))
    assert RRDB_VALUES == 16_697_987 and RRDB_FP32 == 4 * RRDB_VALUES
    assert m["weights"] == RRDB_FP32  # an fp16 file: spandrel's load_state_dict copies it into fp32 parameters
    assert m["arch"] == {"arch": "ESRGAN", "scale": 4, "features": 64, "unshuffle": False}


def test_compact_header_scale_from_its_last_convs_out_channels(tmp_path):
    m = pixel_upscale.read_file(_sparse(compact(), tmp_path / "realesr-general-x4v3.safetensors"))
    assert m["weights"] == 4 * (1_792 + 2_112 + 1_181_696 + 27_696) == 4_853_184
    assert m["arch"] == {"arch": "Compact", "scale": 4, "features": 64, "unshuffle": False}
    assert pixel_upscale.per_pixel(m["arch"]) == 524


def _tensors(table):
    return {k: torch.zeros(s, dtype=torch.float16 if d == "F16" else torch.float32) for k, (d, s) in table.items()}


def test_a_pth_written_by_torch_save_new_keys_and_params_ema(tmp_path):
    """RealESRGAN_x4plus.pth's layout: {"params_ema": {conv_first, body.N.rdbR.convC, conv_body, conv_up1/2, conv_hr,
    conv_last}}; the torch zip's storages are its fp16 bytes (16,697,987 x 2), ComfyUI holds it in fp32."""
    ren = {"model.0": "conv_first", "model.1.sub.23": "conv_body", "model.3": "conv_up1", "model.6": "conv_up2",
           "model.8": "conv_hr", "model.10": "conv_last"}
    sd = {}
    for k, v in _tensors(rrdb_old("F16")).items():
        base, kind = k.rsplit(".", 1)
        if base in ren:
            sd[f"{ren[base]}.{kind}"] = v
        else:  # model.1.sub.N.RDBr.convc.0 -> body.N.rdbr.convc
            p = base.split(".")
            sd[f"body.{p[3]}.rdb{p[4][3:]}.{p[5]}.{kind}"] = v
    p = tmp_path / "RealESRGAN_x4plus.pth"
    torch.save({"params_ema": sd}, p)
    assert torch_file.stored_bytes(p) == 2 * RRDB_VALUES
    m = pixel_upscale.read_file(p)
    assert (m["weights"], m["arch"]["scale"], m["arch"]["arch"]) == (RRDB_FP32, 4, "ESRGAN")


def test_a_compact_pth_in_params(tmp_path):
    p = tmp_path / "realesr-general-x4v3.pth"
    torch.save({"params": _tensors(compact())}, p)
    assert pixel_upscale.read_file(p)["arch"]["scale"] == 4


def test_bad_files_give_one_clear_line_and_nothing_stalls(tmp_path):
    good = tmp_path / "ok.pth"
    torch.save({"params": _tensors(compact())}, good)
    data = good.read_bytes()
    (tmp_path / "cut.pth").write_bytes(data[: len(data) // 2])  # truncated: no central directory, no legacy magic
    junk = tmp_path / "big.pth"
    with open(junk, "wb") as f:  # a 100 MB file that is no model (sparse zeros)
        f.truncate(100 << 20)
    z = tmp_path / "notorch.pth"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("readme.txt", "hello")
    bad = bytearray(data)  # a zip whose data.pkl's bytes are damaged: torch.load refuses it
    i = bytes(bad).find(b"data.pkl") + 40
    bad[i:i + 64] = b"\xff" * 64
    (tmp_path / "damaged.pth").write_bytes(bytes(bad))
    for name, says in (("cut.pth", "not a PyTorch file"), ("big.pth", "not a PyTorch file"),
                       ("notorch.pth", "without data.pkl"), ("damaged.pth", "")):
        t0 = time.monotonic()
        with pytest.raises(UserError) as exc:
            pixel_upscale.read_file(tmp_path / name)
        assert says in str(exc.value) and time.monotonic() - t0 < 10, (name, str(exc.value))


def test_the_tile_table_is_the_benchmarks_traced_figures():
    """TILE_BYTES_PER_PIXEL is benchmarks/pixel_upscale_tile.py's results (traced on spandrel's real classes)."""
    res = json.loads((REPO / "benchmarks" / "results" / "pixel_upscale_tile.json").read_text())["configs"]
    for name, c in res.items():
        if c["read"]["key"]:  # SPAN, SwinIR, HAT, DAT: upscale_archs' table (test_estimate_arch64)
            continue
        assert c["read"]["arch"] == c["architecture"] and c["read"]["scale"] == c["scale"]
        assert c["linear_in_tile_area"] and c["loaded_dtype"] == "torch.float32"
        key = (c["architecture"], 64, None if c["architecture"] == "Compact" else c["scale"], "unshuffle" in c["tags"])
        assert pixel_upscale.TILE_BYTES_PER_PIXEL[key] == c["bytes_per_pixel"], name
    assert res["esrgan_4x_64nf_23nb"]["module_size"] == RRDB_FP32


def _hires(tmp_path, ui=False, model="4x-UltraSharp.safetensors", table=None):
    """The hires-fix graph at SDXL 1024 x 1024, API format, the upscale model in upscale_models/."""
    d = tmp_path / "models"
    layouts.write_sparse("sdxl_sd_xl_base_1.0", d / "checkpoints" / "sdxl.safetensors")
    if table is not False:
        _sparse(table or rrdb_old(), d / "upscale_models" / model)
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 7.0}},
          "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
          "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": model}},
          "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
          "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0]}}}
    return wf, d


def test_hires_fix_graph_gets_a_pixel_upscale_phase_with_comfyuis_request_beside_it(tmp_path):
    wf, d = _hires(tmp_path)
    est = workflow.estimate_workflow(wf, d)
    bd = est["breakdown"]["pixel_upscale"]
    # memory_required for x4 on a 1024 x 1024 fp32 image (nodes_upscale_model.py:69-71):
    #   module_size 66,791,948 + 512*512*3 * 4 * 4 * 384 = 4,831,838,208 + 1024*1024*3 * 4 = 12,582,912
    assert bd["comfyui_request"] == 66_791_948 + 4_831_838_208 + 12_582_912 == 4_911_213_068
    # the phase: the image on the device (12,582,912) + one 512 x 512 tile at 8,204 bytes a pixel (2,150,629,376)
    assert bd["weights"] == RRDB_FP32
    assert bd["activations"] == 12_582_912 + 8_204 * 512 * 512 == 2_163_212_288
    assert est["phases"]["pixel_upscale"] == RRDB_FP32 + 2_163_212_288 + int(FRAGMENTATION * 2_163_212_288) + bd["fixed"]
    lines = " | ".join(est["assumptions"])
    assert "not counted, loaded beside" not in lines and "UpscaleModelLoader: a pixel upscale model" not in lines
    assert "1024x1024 image (the decode of the graph's latent) to 4096x4096" in lines


def test_ui_format_image_through_a_reroute_and_an_image_scale(tmp_path):
    """UI format: ImageUpscaleWithModel fed by ImageScaleBy 0.5 of an EmptyImage 1536 x 1024 x 2: a 768 x 512 x 2
    image (the size the graph sets), x4 Compact: image 768*512*3*4*2 = 9,437,184; tile 512 x 512 x 524 = 137,363,456."""
    _, d = _hires(tmp_path, model="realesr-general-x4v3.safetensors", table=compact())
    wf = {"nodes": [
        {"id": 1, "type": "CheckpointLoaderSimple", "outputs": [{"links": [9]}, {"links": []}, {"links": [11]}],
         "widgets_values": ["sdxl.safetensors"]},
        {"id": 2, "type": "EmptyLatentImage", "outputs": [{"links": [8]}], "widgets_values": [1024, 1024, 1]},
        {"id": 3, "type": "EmptyImage", "outputs": [{"links": [1]}], "widgets_values": [1536, 1024, 2, 0]},
        {"id": 4, "type": "ImageScaleBy", "inputs": [{"name": "image", "link": 1}], "outputs": [{"links": [2]}],
         "widgets_values": ["nearest-exact", 0.5]},
        {"id": 5, "type": "Reroute", "inputs": [{"name": "", "link": 2}], "outputs": [{"links": [3]}]},
        {"id": 6, "type": "UpscaleModelLoader", "outputs": [{"links": [4]}], "widgets_values": ["realesr-general-x4v3.safetensors"]},
        {"id": 7, "type": "ImageUpscaleWithModel", "inputs": [{"name": "upscale_model", "link": 4}, {"name": "image", "link": 3}],
         "outputs": [{"links": [5]}]},
        {"id": 8, "type": "SaveImage", "inputs": [{"name": "images", "link": 5}]},
        # the sampling branch reaches an output too (fix63: only what an output node needs is read)
        {"id": 9, "type": "KSampler", "inputs": [{"name": "model", "link": 9}, {"name": "latent_image", "link": 8}],
         "outputs": [{"links": [10]}], "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 1.0]},
        {"id": 10, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 10}, {"name": "vae", "link": 11}],
         "outputs": [{"links": [12]}]},
        {"id": 11, "type": "SaveImage", "inputs": [{"name": "images", "link": 12}]}],
        "links": [[1, 3, 0, 4, 0, "IMAGE"], [2, 4, 0, 5, 0, "IMAGE"], [3, 5, 0, 7, 1, "IMAGE"], [4, 6, 0, 7, 0, "UPSCALE_MODEL"],
                  [5, 7, 0, 8, 0, "IMAGE"], [8, 2, 0, 9, 1, "LATENT"], [9, 1, 0, 9, 0, "MODEL"], [10, 9, 0, 10, 0, "LATENT"],
                  [11, 1, 2, 10, 1, "VAE"], [12, 10, 0, 11, 0, "IMAGE"]]}
    est = workflow.estimate_workflow(wf, d)
    bd = est["breakdown"]["pixel_upscale"]
    assert bd["activations"] == 9_437_184 + 137_363_456
    # memory_required: 4,853,184 + 512*512*3*4*4*384 (4,831,838,208) + 9,437,184
    assert bd["comfyui_request"] == 4_853_184 + 4_831_838_208 + 9_437_184
    assert any("768x512 x2 image (the size the graph sets) to 3072x2048" in a for a in est["assumptions"])


def test_the_tile_retry_counts_the_first_smaller_tile_that_fits(tmp_path):
    wf, d = _hires(tmp_path)
    est = workflow.estimate_workflow(wf, d)
    fixed = sum(est["fixed"].values())
    # tile 256: image 12,582,912 + 8,204 x 256^2 (537,657,344) = 550,240,256; tile 128: 12,582,912 + 134,414,336
    a256, a128 = 550_240_256, 12_582_912 + 134_414_336
    room = RRDB_FP32 + fixed + a256 + int(FRAGMENTATION * a256)
    assert phase_peaks.peak_on(est, room)["retry"]["pixel_upscale"]["activations"] == a256
    assert phase_peaks.peak_on(est, room - 1)["retry"]["pixel_upscale"]["activations"] == a128


def test_an_architecture_not_measured_counts_weights_and_image_and_says_so(tmp_path):
    swin = {"conv_first.weight": ("F32", [180, 3, 3, 3]), "layers.0.residual_group.blocks.0.norm1.weight": ("F32", [180])}
    wf, d = _hires(tmp_path, model="SwinIR.safetensors", table=swin)
    est = workflow.estimate_workflow(wf, d)
    bd = est["breakdown"]["pixel_upscale"]
    assert bd["weights"] == 4 * (180 * 27 + 180) and bd["activations"] == 12_582_912
    assert bd["comfyui_request"] == 4 * (180 * 27 + 180) + 512 * 512 * 3 * 4 * 1 * 384 + 12_582_912  # scale unknown: 1
    assert any("tile (not counted: the architecture's tile is not measured" in a for a in est["assumptions"])


def test_a_model_file_not_found_is_missing_and_no_phase(tmp_path):
    """ups64: a file named and not found is missing (the estimate incomplete), as a ControlNet's; before, only named."""
    wf, d = _hires(tmp_path, table=False)
    est = workflow.estimate_workflow(wf, d)
    assert "pixel_upscale" not in est["phases"] and est["workflow"]["missing"] == ["4x-UltraSharp.safetensors"]
    assert "not found under the models folder: 4x-UltraSharp.safetensors (UpscaleModelLoader.model_name)" in est["assumptions"]


def test_the_upscale_model_stays_in_host_ram_between_phases(tmp_path):
    """ImageUpscaleWithModel moves the model back to the CPU (nodes_upscale_model.py:93) and UpscaleModelLoader's output
    stays cached: host RAM holds its fp32 weights beside the models kept for reload, 66,791,948 bytes more than the same
    graph without the upscale nodes."""
    wf, d = _hires(tmp_path)
    plain = {k: v for k, v in wf.items() if k not in ("5", "6")}
    plain["7"] = {"class_type": "SaveImage", "inputs": {"images": ["4", 0]}}
    pol = {"host_ram": 64 << 30}
    with_up = workflow.estimate_workflow(wf, d, policy=pol)["host_ram"]
    without = workflow.estimate_workflow(plain, d, policy=pol)["host_ram"]
    assert with_up["kept_for_reload"] - without["kept_for_reload"] == RRDB_FP32


def test_side_models_stay_in_host_ram_where_they_are_not_on_the_device(tmp_path):
    """wf66's side models in host RAM (ups63 item 5): Redux runs on the CPU in fp32 (12288 x 1152 x 4 = 56,623,104
    bytes, held in RAM through the run); a ControlNet sits on the device with the diffusion model while it samples (the
    phase with the most weights), so the RAM kept for reload does not move."""
    from test_estimate_wf66 import CNET, _qwen, _qwen_graph
    d = _qwen(tmp_path / "models")
    pol = {"host_ram": 256 << 30}
    base = workflow.estimate_workflow(_qwen_graph(), d, policy=pol)["host_ram"]["kept_for_reload"]
    _sparse({"redux_up.weight": ("BF16", [12288, 1152])}, d / "style_models" / "redux.safetensors")
    _sparse({k: (dt, list(s)) for k, (dt, s) in CNET.items()}, d / "controlnet" / "cn.safetensors")
    sm = workflow.estimate_workflow(_qwen_graph({"type": "StyleModelLoader", "widgets_values": ["redux.safetensors"]}),
                                    d, policy=pol)["host_ram"]["kept_for_reload"]
    cn = workflow.estimate_workflow(_qwen_graph({"type": "ControlNetLoader", "widgets_values": ["cn.safetensors"]}),
                                    d, policy=pol)["host_ram"]["kept_for_reload"]
    assert sm - base == 56_623_104 and cn == base


def test_a_malformed_esrgan_or_compact_layout_is_an_unknown_architecture_not_a_crash(tmp_path):
    """ESRGAN's detection keys without its last conv, a Compact body without its last bias: detect() reads a shape
    that is not there; the file counts its weights, the architecture unknown."""
    esr = {"model.0.weight": ("F32", [64, 3, 3, 3]), "model.1.sub.0.RDB1.conv1.0.weight": ("F32", [32, 64, 3, 3])}
    com = {"body.0.weight": ("F32", [64, 3, 3, 3]), "body.1.weight": ("F32", [64]), "body.2.weight": ("F32", [64, 64, 3, 3])}
    for name, t in (("e.safetensors", esr), ("c.safetensors", com)):
        m = pixel_upscale.read_file(_sparse(t, tmp_path / name))
        assert m["arch"] is None and m["weights"] == 4 * sum(__import__("math").prod(s) for _, s in t.values())


def test_a_legacy_pre_zip_pth_is_read_through_weights_only_load(tmp_path):
    """torch.save's legacy format (pickle protocol 2 and torch's magic number, no zip: older ESRGAN files):
    torch.load(weights_only=True) without mmap lists its keys; Compact x4, 1,213,296 values x 4."""
    p = tmp_path / "old.pth"
    torch.save({"params": _tensors(compact())}, p, _use_new_zipfile_serialization=False)
    assert p.read_bytes()[:14] == torch_file.LEGACY_MAGIC
    m = pixel_upscale.read_file(p)
    assert m["weights"] == 4_853_184 and m["arch"]["scale"] == 4
