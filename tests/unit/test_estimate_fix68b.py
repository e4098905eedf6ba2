"""fix68b: the Dynamic VRAM / host-RAM / GGUF loader findings left by review rev67k (issue 15)."""
import pytest

from support.cli_run import estimate, flat

FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


def _judge(names, gb, **pol):
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"dynamic_vram": "on", "host_ram": 64 << 30, "weights_mmap": "off"}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), spec.card_bytes(gb) if gb else None)


def _room(est, k):
    b = est["breakdown"][k]
    return est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]


# 1. --models resident with Dynamic VRAM on (rev67k R2, after fix67n): the Dynamic VRAM line streamed 4.43 GiB per step
# (the diffusion model less its room) but host RAM still read the legacy partial load of the whole resident row:
# "offloaded 13.68 GiB, streamed 4.43 GiB, pinned 13.68 GiB". What leaves the card is the streamed layers, each
# model's (the diffusion model per step, the text encoders in text encode); the text encoders and the VAE kept beside
# the sampler are evicted from the card to RAM, kept there for reload, not streamed.
@pytest.mark.parametrize("pol", [{"models": "resident"}, {"offload": "none"}])
def test_host_ram_reads_the_dynamic_vram_stream(pol):
    est = _judge(FLUX, 8, **pol)
    w = {r: sum(c["resident"] for c in est["components"] if c["role"] == r) for r in ("diffusion_model", "text_encoder", "vae")}
    dm_streams = w["diffusion_model"] - _room(est, "sample")
    te_streams = w["text_encoder"] - _room(est, "text_encode")
    assert dm_streams > 0 and te_streams > 0
    r = est["host_ram"]
    assert r["pinned"] == r["offloaded"] == dm_streams + te_streams  # old code: the row's 20.34 GiB less the room
    assert r["cpu_copy"] == w["diffusion_model"]  # the running model's CPU copy
    assert r["kept_for_reload"] == r["evicted"] == w["text_encoder"] + w["vae"]  # evicted from the card by Dynamic VRAM
    assert r["needed"] == sum(w.values()) + dm_streams + te_streams


def test_host_ram_line_names_what_streams(capsys):
    argv = (*FLUX, "--width", "1024", "--height", "1024", "--vram", "8", "--ram", "64", "--dynamic-vram", "on",
            "--weights-mmap", "off", "--models", "resident")
    import json
    j = json.loads(estimate(capsys, *argv, "--json")[1])
    from gpu_garden.memory.units import fmt_bytes
    by = j["dynamic_vram"]["streamed_by_phase"]
    text = flat(estimate(capsys, *argv)[1])
    line = text[text.index("host RAM:"):text.index("Dynamic VRAM (")]
    assert f"pinned copies of the streamed layers {fmt_bytes(by['sample'] + by['text_encode'])}" in line
    assert f"{fmt_bytes(by['sample'])} of the diffusion model (streamed each step)" in line
    assert f"{fmt_bytes(by['text_encode'])} of the text encoders (in text encode)" in line
    assert "evicted from the card by Dynamic VRAM" in line and "offloaded" not in line


def _flux_models(root, dm_gguf=False):
    """A models folder of sparse files from the repo's FLUX layouts: safetensors, the diffusion model a Q8_0 GGUF in
    unet/ where dm_gguf (city96's quantization, support.gguf_files)."""
    from gpu_garden.memory.estimate import layouts
    from support.safetensors_files import sparse_safetensors
    rows = [("text_encoders", "t5xxl_fp16.safetensors", "te_t5xxl_fp16"), ("text_encoders", "clip_l.safetensors", "te_clip_l"),
            ("vae", "ae.safetensors", "vae_flux_ae")]
    if not dm_gguf:
        rows.append(("diffusion_models", "flux1-dev.safetensors", "flux_flux1-dev"))
    for folder, name, layout in rows:
        (root / folder).mkdir(parents=True, exist_ok=True)
        t = layouts.load(layout)["tensors"]
        sparse_safetensors(root / folder / name, {k: (v["dtype"], v["shape"]) for k, v in t.items()})
    if dm_gguf:
        from support.gguf_files import sparse_gguf_from_layout
        (root / "unet").mkdir(parents=True, exist_ok=True)
        sparse_gguf_from_layout(root / "unet" / "flux1-dev-Q8_0.gguf", "flux_flux1-dev")
    return root


def _flux_wf(unet, clip):
    """FLUX.1-dev's graph: unet = (loader, its inputs), clip = (loader, its inputs)."""
    return {"1": {"class_type": unet[0], "inputs": unet[1]}, "2": {"class_type": clip[0], "inputs": clip[1]},
            "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
            "5": {"class_type": "CLIPTextEncode", "inputs": {"text": "a", "clip": ["2", 0]}},
            "7": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "8": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": ["5", 0], "negative": ["5", 0],
                                                       "latent_image": ["7", 0], "seed": 1, "steps": 20, "cfg": 1.0,
                                                       "sampler_name": "euler", "scheduler": "simple", "denoise": 1.0}},
            "9": {"class_type": "VAEDecode", "inputs": {"samples": ["8", 0], "vae": ["3", 0]}},
            "10": {"class_type": "SaveImage", "inputs": {"images": ["9", 0], "filename_prefix": "x"}}}


UNET_ST = ("UNETLoader", {"unet_name": "flux1-dev.safetensors", "weight_dtype": "default"})
DUAL = ("DualCLIPLoader", {"clip_name1": "t5xxl_fp16.safetensors", "clip_name2": "clip_l.safetensors", "type": "flux"})


def _run_wf(tmp_path, capsys, wf, *args):
    import json
    from support.cli_run import estimate_workflow
    rc, out, err = estimate_workflow(tmp_path, capsys, wf, "--models-dir", str(tmp_path / "m"), "--json", *args)
    assert rc in (0, 1), err
    return json.loads(out)


# 2. ComfyUI-GGUF's TripleCLIPLoaderGGUF and QuadrupleCLIPLoaderGGUF (city96/ComfyUI-GGUF nodes.py: clip_name1..3 /
# 1..4, no type widget) were unknown node types: no text encoder, "a loader the estimate does not know". They load
# through GGUFModelPatcher whatever the file (load_patcher), as CLIPLoaderGGUF: a partial load under Dynamic VRAM.
@pytest.mark.parametrize("loader,n", [("TripleCLIPLoaderGGUF", 3), ("QuadrupleCLIPLoaderGGUF", 4)])
def test_triple_and_quadruple_gguf_clip_loaders(tmp_path, capsys, loader, n):
    _flux_models(tmp_path / "m")
    names = ["t5xxl_fp16.safetensors", "clip_l.safetensors"] + ["clip_l.safetensors"] * (n - 2)
    wf = _flux_wf(UNET_ST, (loader, {f"clip_name{i + 1}": x for i, x in enumerate(names)}))
    est = _run_wf(tmp_path, capsys, wf, "--vram", "4", "--dynamic-vram", "on")
    tes = sorted(c["source"] for c in est["components"] if c["role"] == "text_encoder")
    assert tes == ["clip_l.safetensors", "t5xxl_fp16.safetensors"]
    assert not any(loader in a for a in est["assumptions"])  # not "a loader the estimate does not know"
    d = est["dynamic_vram"]
    assert "the GGUF text encoders load through ComfyUI-GGUF's GGUFModelPatcher" in (d["gguf_note"] or "")
    assert "text_encode" not in d["streamed_by_phase"] and d["streamed_by_phase"]["sample"] > 0


# R3. UnetLoaderGGUFDynamicVRAM: "no diffusion model (unknown)". A ComfyUI-GGUF fork's node (MiniMax H3, Q8_CR): a
# subclass of UnetLoaderGGUF (its unet_name widget) whose model is GGUFModelPatcherDynamic, a ModelPatcherDynamic: it
# streams under Dynamic VRAM where UnetLoaderGGUF's GGUFModelPatcher loads partially, and raises without Dynamic VRAM.
def test_gguf_dynamic_vram_unet_loader_streams(tmp_path, capsys):
    pytest.importorskip("gguf")
    _flux_models(tmp_path / "m", dm_gguf=True)
    inputs = {"unet_name": "flux1-dev-Q8_0.gguf"}
    dyn = _run_wf(tmp_path, capsys, _flux_wf(("UnetLoaderGGUFDynamicVRAM", inputs), DUAL), "--vram", "8", "--dynamic-vram", "on")
    dm = [c for c in dyn["components"] if c["role"] == "diffusion_model"]
    assert [c["source"] for c in dm] == ["flux1-dev-Q8_0.gguf"] and dyn["family"] == "flux1"
    d = dyn["dynamic_vram"]
    b = dyn["breakdown"]["sample"]
    room = dyn["budget"] - sum(dyn["fixed"].values()) - b["activations"] - b["allocator_margin"]
    assert d["streamed_per_step"] == dm[0]["resident"] - room > 0 and not d["gguf_note"]
    legacy = _run_wf(tmp_path, capsys, _flux_wf(("UnetLoaderGGUF", inputs), DUAL), "--vram", "8", "--dynamic-vram", "on")
    assert legacy["dynamic_vram"]["streamed_per_step"] == 0
    assert "the GGUF diffusion model loads through" in legacy["dynamic_vram"]["gguf_note"]
    r = legacy["host_ram"]  # the partial load stays in place, in the model's own copy: not a second, pinned copy
    assert r["partial"] > 0 and r["pinned"] == sum(legacy["dynamic_vram"]["streamed_by_phase"].values())
    off = _run_wf(tmp_path, capsys, _flux_wf(("UnetLoaderGGUFDynamicVRAM", inputs), DUAL), "--vram", "8", "--dynamic-vram", "off")
    assert any("UnetLoaderGGUFDynamicVRAM" in a and "stops with an error" in a for a in off["assumptions"])


# 3. A ControlNet beside the sampler: the sample row counts its weights (side_models, wf66: loaded with the diffusion
# model, comfy/sampler_helpers.py:69-91, 125-138 load_models_gpu([model] + models)), but Dynamic VRAM's figure took the
# diffusion model's bytes alone (dynamic_stream.weights capped the row at OWN), so a run over the budget by the
# ControlNet read "fits without streaming", and host RAM took the ControlNet for a model evicted from the card. Its
# patcher is CoreModelPatcher where comfy-aimdo runs (Comfy-Org/ComfyUI comfy/controlnet.py): it streams with the model.
def _qwen_cn(tmp_path, **pol):
    from gpu_garden.memory.estimate import workflow
    from test_estimate_wf66 import CNET, _file, _qwen, _qwen_graph
    d = _qwen(tmp_path / "models")
    _file(d / "controlnet" / "cn.safetensors", CNET)
    wf = _qwen_graph({"type": "ControlNetLoader", "widgets_values": ["cn.safetensors"]})
    return workflow.estimate_workflow(wf, d, policy=dict({"dynamic_vram": "on", "host_ram": 256 << 30}, **pol))


@pytest.mark.parametrize("pol", [{}, {"models": "resident"}])
def test_a_controlnet_streams_with_the_diffusion_model(tmp_path, pol):
    from gpu_garden.memory.estimate import formula as E
    from test_estimate_wf66 import CNET_BYTES
    est = _qwen_cn(tmp_path, **pol)
    dm = next(c["resident"] for c in est["components"] if c["role"] == "diffusion_model")
    b = est["breakdown"]["sample"]
    assert b["weights"] == dm + CNET_BYTES  # the row has it (wf66)
    # a budget where the diffusion model fits beside the phase's activations and the ControlNet's half does not
    budget = sum(est["fixed"].values()) + b["activations"] + b["allocator_margin"] + dm + CNET_BYTES // 2
    j = E.judge(est, budget)
    d = j["dynamic_vram"]
    assert d["streamed_per_step"] == CNET_BYTES - CNET_BYTES // 2  # the code before: 0, "fits without streaming"
    r = j["host_ram"]
    assert r["cpu_copy"] == dm + CNET_BYTES and r.get("evicted", 0) == 0  # running, not evicted
    assert r["streamed_pinned"] == {"dm+side": CNET_BYTES - CNET_BYTES // 2}  # named with the ControlNet in the text
