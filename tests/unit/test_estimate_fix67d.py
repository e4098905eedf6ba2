"""fix67d: audit aud67a's workflow-estimate findings (issue 15), each checked against ComfyUI 0.8.0's source.

F7: a scaled fp8 file's "scaled_fp8" marker tensor (comfy/utils.py:1217-1234: read for its dtype, then dropped) made a
phantom "diffusion model unknown 0.00 GiB" component when its prefix differed from the weights'.
F2: a node the estimate does not size (a custom NNLatentUpscale x2) on the latent path of a sampler or decode was passed
over in silence: the graph estimated at 1024 px where the run decodes at 2048. Now a line names it and
workflow.size_uncertain lists it (the CLI's header and the route's size line show it).
F6: host_ram.ram_options reads the policy's pinned_memory, which nothing set: the CLI takes --disable-pinned-memory and
the node's policy ComfyUI's own flag (cli_args.py:165, model_management.py:1119); --cache-ram (cli_args.py:115, a
RAM-pressure output cache that drops cached models, comfy_execution/caching.py:386) is named where the models kept for
reload make host RAM short.
F5: the CLI ignored extra_model_paths.yaml and kept only the last --models-dir: both are read now (model_paths.py, as
ComfyUI's utils/extra_config.py load_extra_path_config).
F11: the open-graph route on a --cpu host judged its card tiers as on a GPU but took min_vram_gb from the fp32 figures."""
from gpu_garden.memory.estimate import families, layouts, workflow


def _fp8_flux(marker: str) -> dict:
    t = {k: ("F8_E4M3", s) if len(s) == 2 and "blocks" in k else (d, s)
         for k, (d, s) in layouts.table("flux_flux1-dev").items()}
    t[marker] = ("F8_E4M3", (0,))
    return t


def test_scaled_fp8_marker_is_no_component():
    """aud67a mkfp8.py: unprefixed FLUX weights beside a checkpoint-prefixed marker. Old code: two diffusion model
    rows, the second kind None with 0 bytes."""
    for marker in ("model.diffusion_model.scaled_fp8", "scaled_fp8"):
        parts = families.split_components(_fp8_flux(marker), "flux1-dev-fp8-scaled.safetensors")
        assert [(c["role"], c.get("family")) for c in parts] == [("diffusion_model", "flux1")], marker
        assert all(marker not in c["table"] for c in parts)


def test_prefixed_checkpoint_marker_dropped_too():
    """A whole checkpoint (every key model.diffusion_model.*) keeps one diffusion model row without the marker."""
    t = {"model.diffusion_model." + k: v for k, v in _fp8_flux("scaled_fp8").items()}
    parts = families.split_components(t, "ckpt.safetensors")
    dm = [c for c in parts if c["role"] == "diffusion_model"]
    assert len(dm) == 1 and dm[0].get("family") == "flux1" and "scaled_fp8" not in dm[0]["table"]


def test_route_min_vram_on_a_cpu_host_is_the_tiers_card(monkeypatch, tmp_path):
    """aud67a F11: SDXL base at 1024x1024 through the route on a --cpu host with vram_gb 12. The tiers are judged as
    on a GPU (fp16 U-Net, 4.78 GiB: 8 GB fits) but min_vram_gb came from the host's fp32 figures (9.56 GiB of
    weights): 12. Now the smallest card is the tiers' one, as on a CUDA host. Old code: cpu 12, cuda 8."""
    from pathlib import Path

    from support.fit_stubs import route_per_device

    files = {"sdxl.safetensors": str(layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "sdxl.safetensors"))}
    graph = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
             "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    outs = route_per_device(monkeypatch, Path(__file__).parent / "stubs", files, {"workflow": graph, "vram_gb": 12})
    got = {dev: (out["min_vram_gb"], dict((t["gb"], t["label"]) for t in out["tiers"])[8]) for dev, out in outs.items()}
    assert got == {"cpu": (8, "fits"), "cuda": (8, "fits")}


KS = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 0.5,
      "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}


def _hires(t, inputs, sdxl):
    """SDXL 1024 px, sampled, then node 10 (t) and a second sampler, decoded (aud67a wf/nnlatent_hires_ui.json)."""
    return {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": sdxl}},
            "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
            "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)},
            "10": {"class_type": t, "inputs": dict(inputs, samples=["3", 0])},
            "11": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["10", 0])},
            "8": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["4", 2]}},
            "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}


def _est(tmp_path, t, inputs):
    sdxl = layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "checkpoints" / "sdxl.safetensors")
    return workflow.estimate_workflow(_hires(t, inputs, sdxl.name), tmp_path)


def test_unknown_latent_node_is_named_and_the_size_uncertain(tmp_path):
    """NNLatentUpscale (a custom node: ComfyUi_NNLatentUpscale) between the first sampler and the second. Old code: no
    line names it, no size_uncertain."""
    est = _est(tmp_path, "NNLatentUpscale", {"version": "SDXL", "upscale": 2.0})
    assert est["workflow"]["size_uncertain"] == [{"node": "NNLatentUpscale (node 10)", "type": "NNLatentUpscale"}]
    lines = [a for a in est["assumptions"] if a.startswith("NNLatentUpscale (node 10)")]
    assert len(lines) == 1 and "does not size" in lines[0] and "1024x1024" in lines[0]
    from gpu_garden.memory.estimate import report
    assert "(uncertain: NNLatentUpscale (node 10))" in report.format_text(est).splitlines()[0]


def test_core_latent_nodes_are_not_named(tmp_path):
    """LatentUpscaleBy (sized), SetLatentNoiseMask (the latent's own shape, nodes.py:1477) and RepeatLatentBatch (core,
    latent_custom.CORE) on the path: no line."""
    for t, inputs in (("LatentUpscaleBy", {"upscale_method": "nearest-exact", "scale_by": 2.0}),
                      ("SetLatentNoiseMask", {"mask": ["4", 0]}), ("RepeatLatentBatch", {"amount": 1})):
        est = _est(tmp_path, t, inputs)
        assert est["workflow"]["size_uncertain"] == [], t
        assert not [a for a in est["assumptions"] if "does not size" in a], t


def test_the_graph_face_says_the_size_is_uncertain():
    """The route's size line (web/lib/estimate_size.js graphSizeText) names the node. Old code: "1024×1024"."""
    from support.node_js import call
    a = {"width": 1024, "height": 1024, "frames": 1, "size_from": "graph", "size_assumed": None, "stage1": None,
         "size_uncertain": [{"node": "NNLatentUpscale (node 10)", "type": "NNLatentUpscale"}]}
    assert call("lib/estimate_size.js", "graphSizeText", a) == "1024×1024 (uncertain: NNLatentUpscale (node 10))"
    assert call("lib/estimate_size.js", "graphSizeText", dict(a, size_uncertain=[])) == "1024×1024"


def _flux_files(d):
    return [str(layouts.write_sparse(n, d / f"{n}.safetensors"))
            for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]


def test_disable_pinned_memory_drops_the_pinned_copy(tmp_path, capsys):
    """test_estimate_fixups3's FLUX.1-dev streaming case on 12 GiB, --ram 64: kept 9938381638 + the DiT's CPU copy
    23802816640 + pinned streamed layers 12217434911 = 45958633189. With ComfyUI's --disable-pinned-memory nothing is
    pinned (model_management.py:1119: MAX_PINNED_MEMORY stays -1): 33741198278. Old code: no such flag (exit 2)."""
    import json

    from support.cli_run import estimate
    argv = (*_flux_files(tmp_path), "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "on",
            "--weights-mmap", "off", "--ram", "64", "--json")
    r = json.loads(estimate(capsys, *argv)[1])["host_ram"]
    assert (r["pinned"], r["needed"]) == (12217434911, 45958633189)
    r = json.loads(estimate(capsys, *argv, "--disable-pinned-memory")[1])["host_ram"]
    assert (r["pinned"], r["needed"]) == (0, 33741198278)


def test_cache_ram_named_where_models_kept_for_reload_make_ram_short(tmp_path, capsys):
    """The same run on --ram 21: short, 9938381638 B of it kept for reload; the text names ComfyUI's --cache-ram.
    On 64 GiB (not short) it does not. Old code: no line names it."""
    from support.cli_run import estimate
    argv = (*_flux_files(tmp_path), "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "on",
            "--weights-mmap", "off")
    assert "--cache-ram GIB drops the models kept for reload" in " ".join(estimate(capsys, *argv, "--ram", "21")[1].split())
    assert "--cache-ram" not in estimate(capsys, *argv, "--ram", "64")[1]


def test_node_policy_reads_comfyui_disable_pinned_memory(monkeypatch):
    """nodes/estimate.host_policy carries pinned_memory from ComfyUI's args. Old code: no pinned_memory key."""
    import sys
    import types
    from pathlib import Path

    from support.fit_stubs import fresh_node

    node = fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate")  # alone too (it needed an earlier test's)
    for flag in (True, False):
        mod = types.ModuleType("comfy.cli_args")
        mod.args = types.SimpleNamespace(disable_pinned_memory=flag)
        monkeypatch.setitem(sys.modules, "comfy.cli_args", mod)
        monkeypatch.setitem(sys.modules, "comfy", sys.modules.get("comfy") or types.ModuleType("comfy"))
        for f in ("compute_device_kind", "_platform", "comfy_reserve", "dynamic_vram_mode"):
            monkeypatch.setattr(node, f, lambda: None)
        monkeypatch.setattr(node, "compute_device_kind", lambda: "cuda")  # pinned only on cuda/rocm (fix67l)
        assert node.host_policy()["pinned_memory"] is (not flag)


SD15 = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
        "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)},
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
        "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}


def _wf(tmp_path):
    import json
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(SD15))
    return str(p)


def test_extra_model_paths_yaml_of_the_comfyui_folder(tmp_path, capsys):
    """aud67a comfy/: a ComfyUI folder whose extra_model_paths.yaml (base_path, a checkpoints key of two lines, the
    first missing) points elsewhere. Old code: 'none of the workflow's model files was found ... (looked in
    checkpoints/)', exit 2."""
    import json

    from support.cli_run import estimate
    store = tmp_path / "store"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", store / "ckpts" / "sd15.safetensors")
    comfy = tmp_path / "ComfyUI"
    (comfy / "models" / "checkpoints").mkdir(parents=True)
    (comfy / "extra_model_paths.yaml").write_text(
        f"other:\n    base_path: {store}\n    checkpoints: |\n        missing\n        ckpts\n    is_default: false\n")
    rc, out, err = estimate(capsys, "--workflow", _wf(tmp_path), "--models-dir", str(comfy), "--json")
    assert rc == 0, err
    assert json.loads(out)["workflow"]["files"] == ["sd15.safetensors"]


def test_models_dir_repeated_searches_each_in_order(tmp_path, capsys):
    """Two --models-dir: the file is in the first; the second has none. Old code: only the last kept, not found."""
    import json

    from support.cli_run import estimate
    a, b = tmp_path / "a", tmp_path / "b"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", a / "checkpoints" / "sd15.safetensors")
    (b / "checkpoints").mkdir(parents=True)
    rc, out, err = estimate(capsys, "--workflow", _wf(tmp_path), "--models-dir", str(a), "--models-dir", str(b), "--json")
    assert rc == 0, err
    assert json.loads(out)["workflow"]["files"] == ["sd15.safetensors"]
    rc, out, err = estimate(capsys, "--workflow", _wf(tmp_path), "--models-dir", str(b), "--models-dir", str(b / "x"))
    assert rc == 2 and "no such folder" in err


def test_extra_paths_read_as_comfyui_does(tmp_path):
    """load_extra_path_config: relative lines to base_path, or to the yaml's folder without one; clip -> text_encoders
    (folder_paths.map_legacy); is_default paths first."""
    from pathlib import Path

    from gpu_garden.memory.estimate import model_paths
    y = tmp_path / "extra_model_paths.yaml"
    y.write_text("a:\n    clip: te\n    checkpoints: c1\nb:\n    base_path: /srv\n    is_default: true\n"
                 "    checkpoints: c2\n")
    got = model_paths.read_yaml(y)  # (folder, path, is_default) in the yaml's order (fix67l: the order of the defaults)
    assert got == [("text_encoders", tmp_path / "te", False), ("checkpoints", tmp_path / "c1", False),
                   ("checkpoints", Path("/srv/c2"), True)]
