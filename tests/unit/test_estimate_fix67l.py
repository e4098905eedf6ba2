"""fix67l: review rev67h's findings on the fix67d merge (issue 15), each checked against ComfyUI 0.8.0's source.

F1, F4: a custom NNLatentUpscale behind a core node that keeps its input's width and height (RepeatLatentBatch
nodes.py:1238, LatentFromBatch :1206, RebatchLatents, LatentBatch) was not named: the walk stopped at the core node.
F7: LatentCompositeMasked (comfy_extras/nodes_mask.py:48-71, a copy of destination) was named as a node not sized.
F13: LatentUpscale with width and height both set makes that size whatever its input's: an unknown node before it was
named though it cannot move the size."""
from gpu_garden.memory.estimate import layouts, workflow

KS = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 0.5,
      "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}


def _graph(sdxl, between):
    """SDXL 1024 px sampled (3), NNLatentUpscale x2 (10), then the nodes `between` ({id: (type, inputs)}, the last
    one's id "20"), a second sampler (11) on node 20, decoded (rev67h wf_nn_*_api.json)."""
    g = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": sdxl}},
         "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
         "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
         "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)},
         "10": {"class_type": "NNLatentUpscale", "inputs": {"version": "SDXL", "upscale": 2.0, "latent": ["3", 0]}},
         "11": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["20", 0])},
         "8": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["4", 2]}},
         "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    g.update({k: {"class_type": t, "inputs": i} for k, (t, i) in between.items()})
    return g


def _uncertain(tmp_path, between):
    sdxl = layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "checkpoints" / "sdxl.safetensors")
    est = workflow.estimate_workflow(_graph(sdxl.name, between), tmp_path)
    return [u["node"] for u in est["workflow"]["size_uncertain"]]


NN = ["NNLatentUpscale (node 10)"]


def test_unknown_node_behind_a_core_node_that_keeps_the_size(tmp_path):
    """rev67h R8: RepeatLatentBatch, LatentFromBatch, RebatchLatents, LatentBatch between NNLatentUpscale and the
    second sampler. Old code: [] (the walk stopped at the core node)."""
    for t, inputs in (("RepeatLatentBatch", {"samples": ["10", 0], "amount": 2}),
                      ("LatentFromBatch", {"samples": ["10", 0], "batch_index": 0, "length": 1}),
                      ("RebatchLatents", {"latents": ["10", 0], "batch_size": 1}),
                      ("LatentBatch", {"samples1": ["10", 0], "samples2": ["3", 0]})):
        assert _uncertain(tmp_path, {"20": (t, inputs)}) == NN, t


def test_latent_composite_masked_is_its_destination(tmp_path):
    """rev67h R7: LatentCompositeMasked with a core destination (the empty latent) and the NN latent pasted in as its
    source: its latent is the destination's size, nothing is named. Old code: LatentCompositeMasked (node 20) named.
    With the NN latent as destination: NNLatentUpscale named (old code: LatentCompositeMasked)."""
    mask = {"x": 0, "y": 0, "resize_source": False}
    assert _uncertain(tmp_path, {"20": ("LatentCompositeMasked", dict(mask, destination=["5", 0], source=["10", 0]))}) == []
    assert _uncertain(tmp_path, {"20": ("LatentCompositeMasked", dict(mask, destination=["10", 0], source=["5", 0]))}) == NN


def test_latent_upscale_to_a_set_size_ends_the_walk(tmp_path):
    """rev67h R13: NNLatentUpscale -> LatentUpscale 1536x1536: the sampler's latent is 1536 px whatever NN made
    (nodes.py:1279-1295): nothing named. Old code: NNLatentUpscale named. Width 0 (the input's aspect) or both 0 (the
    input kept): still named."""
    up = {"upscale_method": "nearest-exact", "crop": "disabled", "samples": ["10", 0]}
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=1536, height=1536))}) == []
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=0, height=1536))}) == NN
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=0, height=0))}) == NN


# UI format (rev67h sub_test.py): an SD3.5 checkpoint, an EmptySD3LatentImage 1024 (node 2), a sampler (3) whose latent
# comes by link `latent_link`, decoded (4) and saved (5)
SG = "11111111-2222-3333-4444-555555555555"
KSW = [1, "fixed", 20, 4.0, "euler", "simple", 1.0]


def _o(name, *links, typ=None):
    return {"name": name, "links": list(links), "type": typ or name}


def _i(name, link, typ=None):
    return {"name": name, "link": link, **({"type": typ} if typ else {})}


def _ui(extra, links, latent_link, subs=()):
    return {"nodes": [{"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_o("MODEL", 1), _o("CLIP"), _o("VAE", 5)],
                       "widgets_values": ["sd35.safetensors"]},
                      {"id": 2, "type": "EmptySD3LatentImage", "outputs": [_o("LATENT", 2)], "widgets_values": [1024, 1024, 1]},
                      {"id": 3, "type": "KSampler", "inputs": [_i("model", 1), _i("latent_image", latent_link, "LATENT")],
                       "outputs": [_o("LATENT", 3)], "widgets_values": KSW},
                      {"id": 4, "type": "VAEDecode", "inputs": [_i("samples", 3), _i("vae", 5)], "outputs": [_o("IMAGE", 4)]},
                      {"id": 5, "type": "SaveImage", "inputs": [_i("images", 4)], "outputs": [], "widgets_values": ["x"]},
                      *extra],
            "links": [[1, 1, 0, 3, 0, "MODEL"], [3, 3, 0, 4, 0, "LATENT"], [4, 4, 0, 5, 0, "IMAGE"],
                      [5, 1, 2, 4, 1, "VAE"], *links],
            "version": 0.4, "definitions": {"subgraphs": list(subs)}}


def _ui_uncertain(tmp_path, wf):
    d = tmp_path / "models"
    layouts.write_sparse("sd3_sd3.5_medium", d / "checkpoints" / "sd35.safetensors")
    est = workflow.estimate_workflow(wf, d)
    return [u["node"] for u in est["workflow"]["size_uncertain"]], est["width"]


NN40 = {"id": 40, "type": "NNLatentUpscale", "inputs": [_i("latent", 2, "LATENT")], "outputs": [_o("LATENT", 40)],
        "widgets_values": ["SDXL", 2.0]}


def test_unknown_node_behind_a_bypassed_node(tmp_path):
    """rev67h R14: NNLatentUpscale (40) -> a bypassed (mode 4) LatentUpscaleBy / SetLatentNoiseMask (20) -> sampler:
    the frontend passes the bypassed node's latent input on (reach._bypass_input), so the sampler takes NN's latent.
    Old code: [] (the walk ended at the bypassed node)."""
    for t, ins in (("LatentUpscaleBy", [_i("samples", 40, "LATENT")]),
                   ("SetLatentNoiseMask", [_i("samples", 40, "LATENT"), _i("mask", None, "MASK")])):
        byp = {"id": 20, "type": t, "mode": 4, "inputs": ins, "outputs": [_o("LATENT", 20)], "widgets_values": []}
        wf = _ui([NN40, byp], [[2, 2, 0, 40, 0, "LATENT"], [40, 40, 0, 20, 0, "LATENT"], [20, 20, 0, 3, 1, "LATENT"]], 20)
        assert _ui_uncertain(tmp_path, wf)[0] == ["NNLatentUpscale (node 40)"], t


def _sub(name, nodes, links, inputs=()):
    return {"id": SG, "name": name, "inputNode": {"id": -10}, "outputNode": {"id": -20}, "inputs": list(inputs),
            "outputs": [{"name": "LATENT", "type": "LATENT"}], "nodes": nodes,
            "links": [dict(zip(("id", "origin_id", "origin_slot", "target_id", "target_slot", "type"), lk)) for lk in links]}


def test_subgraph_instance_is_followed_inside(tmp_path):
    """rev67h R10 (sub_test.py): a subgraph instance (30) feeding the sampler. Old code: the instance named by its
    UUID in every case. A: NNLatentUpscale inside: it is named, with the subgraph's name. B: only a core
    EmptySD3LatentImage 2048 inside: nothing named. C: the sampler inside the subgraph, an outer NNLatentUpscale on
    the subgraph's input, the instance decoded: the outer node alone named."""
    nn = {"id": 1, "type": "NNLatentUpscale", "inputs": [_i("latent", 1, "LATENT")], "outputs": [_o("LATENT", 2)],
          "widgets_values": ["SDXL", 2.0]}
    sub_a = _sub("nn x2", [nn], [(1, -10, 0, 1, 0, "LATENT"), (2, 1, 0, -20, 0, "LATENT")],
                 [{"name": "latent", "type": "LATENT"}])
    inst = {"id": 30, "type": SG, "inputs": [_i("latent", 2, "LATENT")], "outputs": [_o("LATENT", 30)], "widgets_values": []}
    wf = _ui([inst], [[2, 2, 0, 30, 0, "LATENT"], [30, 30, 0, 3, 1, "LATENT"]], 30, [sub_a])
    assert _ui_uncertain(tmp_path, wf)[0] == ["NNLatentUpscale (node 1 in subgraph nn x2)"]
    empty = {"id": 1, "type": "EmptySD3LatentImage", "outputs": [_o("LATENT", 1)], "widgets_values": [2048, 2048, 1]}
    sub_b = _sub("latent", [empty], [(1, 1, 0, -20, 0, "LATENT")])
    inst_b = {"id": 30, "type": SG, "outputs": [_o("LATENT", 30)], "widgets_values": []}
    assert _ui_uncertain(tmp_path, _ui([inst_b], [[30, 30, 0, 3, 1, "LATENT"]], 30, [sub_b])) == ([], 2048)
    ks = {"id": 1, "type": "KSampler", "inputs": [_i("model", 3, "MODEL"), _i("latent_image", 1, "LATENT")],
          "outputs": [_o("LATENT", 2)], "widgets_values": KSW}
    sub_c = _sub("pass2", [ks], [(1, -10, 0, 1, 1, "LATENT"), (3, -10, 1, 1, 0, "MODEL"), (2, 1, 0, -20, 0, "LATENT")],
                 [{"name": "latent", "type": "LATENT"}, {"name": "model", "type": "MODEL"}])
    nn40 = dict(NN40, inputs=[_i("latent", 3, "LATENT")])
    inst_c = {"id": 30, "type": SG, "inputs": [_i("latent", 40, "LATENT"), _i("model", 41, "MODEL")],
              "outputs": [_o("LATENT", 30)], "widgets_values": []}
    wf = _ui([nn40, inst_c], [[2, 2, 0, 3, 1, "LATENT"], [40, 40, 0, 30, 0, "LATENT"], [41, 1, 0, 30, 1, "MODEL"]], 2,
             [sub_c])
    wf["nodes"][3]["inputs"][0]["link"] = 30  # the decode takes the instance's latent
    wf["links"][1] = [30, 30, 0, 4, 0, "LATENT"]
    wf["links"].append([3, 3, 0, 40, 0, "LATENT"])
    assert _ui_uncertain(tmp_path, wf)[0] == ["NNLatentUpscale (node 40)"]


def _resolver(comfy, *dirs):
    from gpu_garden.memory.estimate import model_paths
    from gpu_garden.memory.estimate.model_files import Unusable, find_file
    from gpu_garden.memory.estimate.workflow import models_folder
    return model_paths.resolver([str(d) for d in dirs or (comfy,)], models_folder, find_file, Unusable)


def _files(root, *rels):
    for r in rels:
        (root / r).parent.mkdir(parents=True, exist_ok=True)
        (root / r).write_bytes(b"x")


def test_is_default_paths_searched_before_models_in_comfyui_order(tmp_path):
    """rev67h R1, R3: ComfyUI's add_model_folder_path (folder_paths.py:281-295) inserts each is_default path at 0, so
    they come before ComfyUI's models/ and several come last line first. The oracle (ComfyUI 0.8.0's
    load_extra_path_config and get_full_path) found E/ckpt/m and E/b/m; old code: C/models/checkpoints/m and E/a/m."""
    comfy = tmp_path / "C"
    _files(tmp_path, "C/models/checkpoints/m.safetensors", "E/ckpt/m.safetensors", "E/a/m.safetensors",
           "E/b/m.safetensors", "F/m.safetensors")
    y = comfy / "extra_model_paths.yaml"
    y.write_text("shared:\n    base_path: ../E\n    is_default: true\n    checkpoints: ckpt\n")
    assert _resolver(comfy)[0](["checkpoints"], "m.safetensors") == tmp_path / "E/ckpt/m.safetensors"
    y.write_text("shared:\n    base_path: ../E\n    is_default: true\n    checkpoints: |\n        a\n        b\n")
    assert _resolver(comfy)[0](["checkpoints"], "m.safetensors") == tmp_path / "E/b/m.safetensors"
    y.write_text("shared:\n    base_path: ../F\n    checkpoints: .\n")  # not default: after models/, as before
    assert _resolver(comfy)[0](["checkpoints"], "m.safetensors") == comfy / "models/checkpoints/m.safetensors"


def test_symlinked_yaml_relative_to_the_comfyui_folder(tmp_path):
    """rev67h R2: ComfyUI/extra_model_paths.yaml a symlink to cfg/extra_model_paths.yaml with a relative base_path:
    ComfyUI takes it from its own folder (main.py:77 and extra_config.py:9 abspath, the link not followed). Old code:
    from cfg/, the file not found."""
    comfy = tmp_path / "C"
    _files(tmp_path, "C/models/checkpoints/.keep", "C/shared_models/checkpoints/a.safetensors")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg/extra_model_paths.yaml").write_text("shared:\n    base_path: shared_models\n    checkpoints: checkpoints\n")
    (comfy / "extra_model_paths.yaml").symlink_to("../cfg/extra_model_paths.yaml")
    assert _resolver(comfy)[0](["checkpoints"], "a.safetensors") == comfy / "shared_models/checkpoints/a.safetensors"


def test_a_folder_given_twice_reads_its_yaml_once(tmp_path):
    """rev67h R5: --models-dir C and --models-dir C/models: one note for C's yaml. Old code: two."""
    comfy = tmp_path / "C"
    _files(tmp_path, "C/models/checkpoints/.keep", "E/x/.keep")
    (comfy / "extra_model_paths.yaml").write_text("s:\n    base_path: ../E\n    checkpoints: x\n")
    notes = _resolver(comfy, comfy, comfy / "models")[2]
    assert len([n for n in notes if "extra_model_paths.yaml read" in n]) == 1, notes


def test_a_value_that_is_not_a_string_is_a_clear_error(tmp_path):
    """rev67h R4: checkpoints: [a, b] or 12: ComfyUI fails at start-up ('list' object has no attribute 'split',
    extra_config.py:24). Old code: read as the folder "['a', 'b']" / "12", the file not found in silence."""
    import pytest

    from gpu_garden.memory.errors import UserError
    comfy = tmp_path / "C"
    _files(tmp_path, "C/models/checkpoints/.keep")
    for value in ("[a, b]", "12"):
        (comfy / "extra_model_paths.yaml").write_text(f"shared:\n    base_path: /srv\n    checkpoints: {value}\n")
        with pytest.raises(UserError, match=r"shared\.checkpoints is (list|int) .*not a string"):
            _resolver(comfy)


def test_route_min_vram_on_a_cpu_host_where_fp32_fits_no_card(monkeypatch, tmp_path):
    """rev67h R15: FLUX.2 dev bf16 at 2048x2048 batch 8 through the route on a --cpu host with vram_gb 96: the
    host's fp32 figures fit no card (est min_vram_gb None), which metadata took for "no card asked for". Old code:
    cpu None, cuda 96. Now the tiers' card on both."""
    from pathlib import Path

    from gpu_garden.memory.units import GiB
    from support.fit_stubs import route_per_device

    files = {"f2.safetensors": str(layouts.write_sparse("flux2_flux2_dev_bf16", tmp_path / "f2.safetensors"))}
    graph = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "f2.safetensors", "weight_dtype": "default"}},
             "2": {"class_type": "EmptyFlux2LatentImage", "inputs": {"width": 2048, "height": 2048, "batch_size": 8}}}
    outs = route_per_device(monkeypatch, Path(__file__).parent / "stubs", files, {"workflow": graph, "vram_gb": 96},
                            ram=512 * GiB)
    assert {dev: out["min_vram_gb"] for dev, out in outs.items()} == {"cpu": 96, "cuda": 96}


def test_incomplete_names_every_folder_searched(tmp_path, capsys):
    """rev67h R6: --models-dir a (empty) --models-dir b, a VAE file in neither: the INCOMPLETE line and the JSON name
    both folders searched. Old code: 'not found under a' and workflow.models_dir a alone."""
    import json

    from support.cli_run import estimate_workflow
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "checkpoints").mkdir(parents=True)
    sd15 = layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", b / "checkpoints" / "sd15.safetensors")
    wf = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": sd15.name}},
          "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
          "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
          "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)},
          "12": {"class_type": "VAELoader", "inputs": {"vae_name": "gone.safetensors"}},
          "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["12", 0]}},
          "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    rc, out, err = estimate_workflow(tmp_path, capsys, wf, "--models-dir", str(a), "--models-dir", str(b), "--vram", "12")
    assert rc == 1, err  # the estimate is incomplete (report.py epilog)
    assert out.splitlines()[0] == f"INCOMPLETE: 1 model file named by the workflow not found under {a}, {b}:"
    rc, out, err = estimate_workflow(tmp_path, capsys, wf, "--models-dir", str(a), "--models-dir", str(b), "--json")
    assert json.loads(out)["workflow"]["searched"] == [str(a), str(b)]


def test_nothing_pinned_on_mps_or_xpu(tmp_path, capsys):
    """rev67h R11: ComfyUI 0.8.0 pins host memory only on NVIDIA and AMD (model_management.py:1119-1125): the CLI's
    --device mps / xpu showed the offloaded weights pinned as on cuda. Old code: pinned == offloaded on all three."""
    import json

    from support.cli_run import estimate
    files = [str(layouts.write_sparse(n, tmp_path / f"{n}.safetensors"))
             for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]
    got = {}
    for dev in ("cuda", "rocm", "mps", "xpu"):
        r = json.loads(estimate(capsys, *files, "--width", "1024", "--height", "1024", "--vram", "12", "--ram", "64",
                                "--dynamic-vram", "off", "--device", dev, "--json")[1])["host_ram"]
        got[dev] = r["pinned"] > 0
    assert got == {"cuda": True, "rocm": True, "mps": False, "xpu": False}


def test_node_pins_only_on_cuda_or_rocm(monkeypatch):
    """nodes/estimate.host_policy: pinned_memory False on an mps / xpu / cpu ComfyUI even without
    --disable-pinned-memory. Old code: True on every device."""
    import sys
    import types
    from pathlib import Path

    from support.fit_stubs import fresh_node

    node = fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate")
    mod = types.ModuleType("comfy.cli_args")
    mod.args = types.SimpleNamespace(disable_pinned_memory=False)
    monkeypatch.setitem(sys.modules, "comfy.cli_args", mod)
    monkeypatch.setitem(sys.modules, "comfy", sys.modules.get("comfy") or types.ModuleType("comfy"))
    for f in ("_platform", "comfy_reserve", "dynamic_vram_mode"):
        monkeypatch.setattr(node, f, lambda: None)
    got = {}
    for dev in ("cuda", "rocm", "mps", "xpu", "cpu"):
        monkeypatch.setattr(node, "compute_device_kind", lambda d=dev: d)
        got[dev] = node.host_policy()["pinned_memory"]
    assert got == {"cuda": True, "rocm": True, "mps": False, "xpu": False, "cpu": False}
