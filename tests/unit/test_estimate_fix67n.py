"""fix67n: review rev67k's findings on the Dynamic VRAM / latent-walk mends (fix67j, fix67l)."""
import pytest

from support.cli_run import estimate, flat, run


def _judge(names, gb, **pol):
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"dynamic_vram": "on", "host_ram": 64 << 30}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), spec.card_bytes(gb) if gb else None)


FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


# R1. A GGUF text encoder beside a safetensors diffusion model: the text encode loads partially, but the sampler still
# streams (JSON streamed_per_step 19.38 GiB) and the Dynamic VRAM line and the outcome named only the partial load;
# the note read "the GGUF text encoders loads" (rev67k R1_gguf_te_sampler_stream_silent.txt).
def test_gguf_text_encoder_keeps_the_sampler_streaming_figure(capsys, tmp_path):
    pytest.importorskip("gguf")
    from support.gguf_files import sparse_gguf_from_layout
    te, _ = sparse_gguf_from_layout(tmp_path / "t5-v1_1-xxl-encoder-Q8_0.gguf", "te_t5xxl_fp16")
    argv = ["flux_flux1-dev", str(te), "te_clip_l", "vae_flux_ae", "--vram", "4", "--ram", "64", "--dynamic-vram", "on"]
    est = run(["estimate", *argv, "--json"], capsys)[1]
    d = est["dynamic_vram"]
    s = d["streamed_per_step"]
    assert s > 8 << 30 and d["streamed_by_phase"]["sample"] == s
    from gpu_garden.memory.units import fmt_bytes
    words = f"streaming {fmt_bytes(s)} of the diffusion model's weights per step, slower by about " \
            f"{d['added_seconds_per_step']} s per step"
    assert d["verdict"].startswith("loads partially: the GGUF text encoders") and words in d["verdict"]
    assert est["outcome"]["status"] == "runs with offload" and words in est["outcome"]["reason"]
    rc, out, err = estimate(capsys, *argv)
    text = flat(out)
    assert "Dynamic VRAM: the GGUF text encoders load through ComfyUI-GGUF's GGUFModelPatcher" in text
    assert "text encoders loads" not in text


# R2. --models resident: the sample row's weights hold the text encoders and the VAE beside the diffusion model
# (20.34 GiB), and the per-step figure read 13.68 GiB where the (fp8) diffusion model is 11.09 GiB
# (rev67k R2_resident_sampler_stream_over_dm.txt). The sampler runs the diffusion model alone: Dynamic VRAM evicts what
# is kept beside it, so what streams per step is at most the diffusion model, less the room the phase leaves.
@pytest.mark.parametrize("pol", [{"models": "resident"}, {"offload": "none"}])
def test_sampler_streams_only_the_diffusion_model(pol):
    est = _judge(FLUX, 8, **pol)
    dm = next(c["resident"] for c in est["components"] if c["role"] == "diffusion_model")
    b = est["breakdown"]["sample"]
    assert b["weights"] > dm + (8 << 30)  # the row counts the text encoders beside it
    room = est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]
    d = est["dynamic_vram"]
    assert d["streamed_per_step"] == d["streamed_by_phase"]["sample"] == dm - room < dm


def _flux_models(root):
    """A models folder of sparse safetensors written from the repo's FLUX layouts (ae from vae_flux_ae)."""
    from gpu_garden.memory.estimate import layouts
    from support.safetensors_files import sparse_safetensors
    for folder, name, layout in (("diffusion_models", "flux1-dev.safetensors", "flux_flux1-dev"),
                                 ("text_encoders", "t5xxl_fp16.safetensors", "te_t5xxl_fp16"),
                                 ("text_encoders", "clip_l.safetensors", "te_clip_l"), ("vae", "ae.safetensors", "vae_flux_ae")):
        (root / folder).mkdir(parents=True, exist_ok=True)
        t = layouts.load(layout)["tensors"]
        sparse_safetensors(root / folder / name, {k: (v["dtype"], v["shape"]) for k, v in t.items()})
    return root


def _flux_wf(clip_loader):
    return {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.safetensors", "weight_dtype": "default"}},
            "2": {"class_type": clip_loader, "inputs": {"clip_name1": "t5xxl_fp16.safetensors",
                                                         "clip_name2": "clip_l.safetensors", "type": "flux"}},
            "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
            "5": {"class_type": "CLIPTextEncode", "inputs": {"text": "a", "clip": ["2", 0]}},
            "7": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "8": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": ["5", 0], "negative": ["5", 0],
                                                       "latent_image": ["7", 0], "seed": 1, "steps": 20, "cfg": 1.0,
                                                       "sampler_name": "euler", "scheduler": "simple", "denoise": 1.0}},
            "9": {"class_type": "VAEDecode", "inputs": {"samples": ["8", 0], "vae": ["3", 0]}},
            "10": {"class_type": "SaveImage", "inputs": {"images": ["9", 0], "filename_prefix": "x"}}}


# R5 (brief item 3). DualCLIPLoaderGGUF with plain safetensors files: ComfyUI-GGUF's CLIPLoaderGGUF.load_patcher wraps
# the text encoders' patcher in GGUFModelPatcher whatever the files (city96/ComfyUI-GGUF nodes.py:
# `clip.patcher = GGUFModelPatcher.clone(clip.patcher)`), yet the estimate streamed them ("streaming 6.15 GiB of the
# text encoders' weights in text encode", rev67k R5_gguf_clip_loader_safetensors.txt). They load partially, as a .gguf's.
def test_gguf_clip_loader_with_safetensors_loads_partially(capsys, tmp_path):
    from support.cli_run import estimate_workflow
    models = _flux_models(tmp_path / "models")
    args = ("--models-dir", str(models), "--vram", "4", "--dynamic-vram", "on")
    rc, out, err = estimate_workflow(tmp_path, capsys, _flux_wf("DualCLIPLoaderGGUF"), *args)
    text = flat(out)
    assert "Dynamic VRAM (--dynamic-vram on): loads partially: the GGUF text encoders" in text
    assert "of the text encoders' weights in text encode" not in text
    assert "verdict: RUNS WITH OFFLOAD in 4.00 GiB" in text and "streaming" in text  # the sampler still streams
    rc, out, err = estimate_workflow(tmp_path, capsys, _flux_wf("DualCLIPLoader"), *args)  # the core loader streams
    text = flat(out)
    assert "verdict: FITS WITH STREAMING" in text and "of the text encoders' weights in text encode" in text


# R4 (brief item 4). A subgraph used twice, one instance fed by a custom NNLatentUpscale x2, the other by the plain
# sampler: links._subgraph_input reads SAVED where a subgraph has several instances, and the latent walk stopped there
# in silence (size_uncertain [], rev67k R4_subgraph_used_twice.txt / sub/nested.py case E). Each instance's input is
# walked now; a custom node on any of them is named.
def test_subgraph_used_twice_walks_each_instance(tmp_path):
    from gpu_garden.memory.estimate import layouts, workflow
    layouts.write_sparse("sd3_sd3.5_medium", tmp_path / "models" / "checkpoints" / "sd35.safetensors")
    o = lambda n, *l, typ=None: {"name": n, "links": list(l), **({"type": typ} if typ else {})}  # noqa: E731
    i = lambda n, link, typ=None: {"name": n, "link": link, **({"type": typ} if typ else {})}  # noqa: E731
    ks = [1, "fixed", 20, 4.0, "euler", "simple", 1.0]
    sb = "bbbbbbbb-2222-3333-4444-555555555555"
    sub = {"id": sb, "name": "inner pass", "inputNode": {"id": -10}, "outputNode": {"id": -20},
           "inputs": [{"name": "latent", "type": "LATENT", "linkIds": [1]}, {"name": "model", "type": "MODEL", "linkIds": [3]}],
           "outputs": [{"name": "LATENT", "type": "LATENT", "linkIds": [2]}],
           "nodes": [{"id": 1, "type": "KSampler", "inputs": [i("model", 3, "MODEL"), i("latent_image", 1, "LATENT")],
                      "outputs": [o("LATENT", 2, typ="LATENT")], "widgets_values": ks}],
           "links": [{"id": 1, "origin_id": -10, "origin_slot": 0, "target_id": 1, "target_slot": 1, "type": "LATENT"},
                     {"id": 3, "origin_id": -10, "origin_slot": 1, "target_id": 1, "target_slot": 0, "type": "MODEL"},
                     {"id": 2, "origin_id": 1, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "LATENT"}]}

    def graph(up_into):  # up_into: the instance (31 or 32) NNLatentUpscale feeds; the other takes sampler 3's latent
        other = 31 if up_into == 32 else 32
        return {"nodes": [
            {"id": 1, "type": "CheckpointLoaderSimple", "outputs": [o("MODEL", 1, 41, 43), o("CLIP"), o("VAE", 5, 44)],
             "widgets_values": ["sd35.safetensors"]},
            {"id": 2, "type": "EmptySD3LatentImage", "outputs": [o("LATENT", 2)], "widgets_values": [1024, 1024, 1]},
            {"id": 3, "type": "KSampler", "inputs": [i("model", 1), i("latent_image", 2)], "outputs": [o("LATENT", 3, 42)],
             "widgets_values": ks},
            {"id": 40, "type": "NNLatentUpscale", "inputs": [i("latent", 3, "LATENT")], "outputs": [o("LATENT", 40, typ="LATENT")],
             "widgets_values": ["SDXL", 2.0]},
            {"id": up_into, "type": sb, "inputs": [i("latent", 40, "LATENT"), i("model", 41, "MODEL")],
             "outputs": [o("LATENT", 50, typ="LATENT")], "widgets_values": []},
            {"id": other, "type": sb, "inputs": [i("latent", 42, "LATENT"), i("model", 43, "MODEL")],
             "outputs": [o("LATENT", 51, typ="LATENT")], "widgets_values": []},
            {"id": 4, "type": "VAEDecode", "inputs": [i("samples", 50), i("vae", 5)], "outputs": [o("IMAGE", 4)]},
            {"id": 5, "type": "SaveImage", "inputs": [i("images", 4)], "outputs": [], "widgets_values": ["x"]},
            {"id": 6, "type": "VAEDecode", "inputs": [i("samples", 51), i("vae", 44)], "outputs": [o("IMAGE", 6)]},
            {"id": 8, "type": "SaveImage", "inputs": [i("images", 6)], "outputs": [], "widgets_values": ["y"]}],
            "links": [[1, 1, 0, 3, 0, "MODEL"], [2, 2, 0, 3, 1, "LATENT"], [3, 3, 0, 40, 0, "LATENT"],
                      [40, 40, 0, up_into, 0, "LATENT"], [41, 1, 0, up_into, 1, "MODEL"], [42, 3, 0, other, 0, "LATENT"],
                      [43, 1, 0, other, 1, "MODEL"], [50, up_into, 0, 4, 0, "LATENT"], [51, other, 0, 6, 0, "LATENT"],
                      [4, 4, 0, 5, 0, "IMAGE"], [5, 1, 2, 4, 1, "VAE"], [44, 1, 2, 6, 1, "VAE"], [6, 6, 0, 8, 0, "IMAGE"]],
            "version": 0.4, "definitions": {"subgraphs": [sub]}}

    for up_into in (31, 32):  # whichever instance the custom node feeds (the walk's order does not hide it)
        e = workflow.estimate_workflow(graph(up_into), tmp_path / "models")
        assert e["workflow"]["size_uncertain"] == [{"node": "NNLatentUpscale (node 40)", "type": "NNLatentUpscale"}]
