"""fix63 (review rev63): what ComfyUI 0.8.0 runs of a workflow, and the side models' accounting.

#1/#7: ComfyUI runs only the output nodes and what they reach (execution.py:712-713; comfy_execution/graph.py:139-165
add_node walks back through linked inputs); frontend 1.35.9's graphToPrompt leaves muted (mode 2) and bypassed (mode 4)
nodes out, a bypassed node's output resolving to its input of the same type. The graphs are hand-made on a txt2img
SD3.5 graph (CheckpointLoaderSimple -> KSampler -> VAEDecode -> SaveImage at 1024x1024) with a second branch: its size
or ControlNet must not be counted where no output reaches it."""
import pytest

from gpu_garden.memory.estimate import layouts, workflow, workflow_write

BF16 = "BF16"
CNET = {**{f"controlnet_blocks.{i}.weight": (BF16, (1536, 1536)) for i in range(3)},
        **{f"controlnet_blocks.{i}.bias": (BF16, (1536,)) for i in range(3)}}
SG = "11111111-2222-3333-4444-555555555555"


def _file(path, tensors):
    return layouts.write_sparse({"tensors": {k: {"dtype": d, "shape": list(s)} for k, (d, s) in tensors.items()}}, path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("fix63") / "models"
    layouts.write_sparse("sd3_sd3.5_medium", d / "checkpoints" / "sd35.safetensors")
    _file(d / "controlnet" / "cn_a.safetensors", CNET)
    return d


def _top(*nodes, links=()):
    return {"nodes": list(nodes), "links": [list(x) for x in links], "version": 0.4}


def _in(name, link, typ=None):
    return {"name": name, "link": link, **({"type": typ} if typ else {})}


def _out(name, *links, typ=None):
    return {"name": name, "links": list(links), **({"type": typ} if typ else {})}


KS = [1, "fixed", 20, 4.0, "euler", "simple", 1.0]


def _main(*extra, links=(), latent_link=2, sub=None):
    """Loader -> KSampler (latent from node 2 at 1024x1024, or the link latent_link) -> VAEDecode -> SaveImage."""
    g = _top({"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_out("MODEL", 1, 21), _out("CLIP"), _out("VAE", 5)],
              "widgets_values": ["sd35.safetensors"]},
             {"id": 2, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 2)], "widgets_values": [1024, 1024, 1]},
             {"id": 3, "type": "KSampler", "inputs": [_in("model", 1), _in("positive", 11), _in("latent_image", latent_link)],
              "outputs": [_out("LATENT", 3)], "widgets_values": KS},
             {"id": 4, "type": "VAEDecode", "inputs": [_in("samples", 3), _in("vae", 5)], "outputs": [_out("IMAGE", 4)]},
             {"id": 5, "type": "SaveImage", "inputs": [_in("images", 4)], "outputs": [], "widgets_values": ["x"]},
             *extra,
             links=[(1, 1, 0, 3, 0, "MODEL"), (2, 2, 0, 3, 2, "LATENT"), (3, 3, 0, 4, 0, "LATENT"), (4, 4, 0, 5, 0, "IMAGE"),
                    (5, 1, 2, 4, 1, "VAE"), *links])
    if sub:
        g["definitions"] = {"subgraphs": [sub]}
    return g


def _controlnet(mode):
    """ControlNetLoader -> Apply ControlNet (mode) -> the sampler's positive."""
    return _main({"id": 10, "type": "ControlNetLoader", "outputs": [_out("CONTROL_NET", 10)], "widgets_values": ["cn_a.safetensors"]},
                 {"id": 11, "type": "ControlNetApplyAdvanced", "mode": mode,
                  "inputs": [_in("positive", None, "CONDITIONING"), _in("negative", None, "CONDITIONING"),
                             _in("control_net", 10, "CONTROL_NET")],
                  "outputs": [_out("positive", 11, typ="CONDITIONING"), _out("negative", typ="CONDITIONING")],
                  "widgets_values": [1.0, 0.0, 1.0]},
                 links=[(10, 10, 0, 11, 2, "CONTROL_NET"), (11, 11, 0, 3, 1, "CONDITIONING")])


def _size(e):
    return e["width"], e["height"]


def test_a_controlnet_behind_a_bypassed_or_muted_apply_is_not_loaded(models):
    """Bypassed, Apply ControlNet's positive output resolves to its positive input (the types match): the ControlNet
    input is not followed, so its loader is never run; muted, the walk ends there."""
    assert [m["loader"] for m in workflow.estimate_workflow(_controlnet(0), models)["workflow"]["side_models"]] == ["ControlNetLoader"]
    for mode in (4, 2):
        e = workflow.estimate_workflow(_controlnet(mode), models)
        assert e["workflow"]["side_models"] == [], mode
        assert any(a.startswith("not read: ControlNetLoader (node 10): not reached from an output node")
                   for a in e["assumptions"]), e["assumptions"]


def test_a_bypassed_node_passes_its_matching_input_on(models):
    """A 2048x2048 latent through a bypassed latent node (LATENT in, LATENT out) into the sampler: it is the sampled size."""
    g = _main({"id": 20, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 22)], "widgets_values": [2048, 2048, 1]},
              {"id": 21, "type": "LatentUpscaleBy", "mode": 4, "inputs": [_in("samples", 22, "LATENT")],
               "outputs": [_out("LATENT", 23, typ="LATENT")], "widgets_values": ["nearest-exact", 1.5]},
              links=[(22, 20, 0, 21, 0, "LATENT"), (23, 21, 0, 3, 2, "LATENT")], latent_link=23)
    assert _size(workflow.estimate_workflow(g, models)) == (2048, 2048)


def test_a_latent_feeding_a_muted_sampler_is_not_the_size(models):
    g = _main({"id": 20, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 22)], "widgets_values": [2048, 2048, 1]},
              {"id": 21, "type": "KSampler", "mode": 2, "inputs": [_in("model", 21), _in("latent_image", 22)],
               "outputs": [_out("LATENT")], "widgets_values": KS},
              links=[(21, 1, 0, 21, 0, "MODEL"), (22, 20, 0, 21, 3, "LATENT")])
    e = workflow.estimate_workflow(g, models)
    assert _size(e) == (1024, 1024) and not any("latent sizes" in a for a in e["assumptions"])


def test_a_chain_no_output_reaches_is_not_read(models):
    """latent 2048 -> KSampler -> VAEDecode whose image feeds nothing: each node has a link out, none reaches SaveImage."""
    g = _main({"id": 20, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 22)], "widgets_values": [2048, 2048, 1]},
              {"id": 21, "type": "KSampler", "inputs": [_in("model", 21), _in("latent_image", 22)], "outputs": [_out("LATENT", 23)],
               "widgets_values": KS},
              {"id": 22, "type": "VAEDecode", "inputs": [_in("samples", 23)], "outputs": [_out("IMAGE")]},
              links=[(21, 1, 0, 21, 0, "MODEL"), (22, 20, 0, 21, 3, "LATENT"), (23, 21, 0, 22, 0, "LATENT")])
    e = workflow.estimate_workflow(g, models)
    assert _size(e) == (1024, 1024)
    line = next(a for a in e["assumptions"] if a.startswith("not read:"))
    assert "EmptySD3LatentImage (node 20)" in line and "KSampler (node 21)" in line


def _sub():
    return {"id": SG, "name": "extra pass", "inputNode": {"id": -10}, "outputNode": {"id": -20}, "inputs": [],
            "outputs": [{"name": "LATENT"}],
            "nodes": [{"id": 1, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 1)], "widgets_values": [2048, 2048, 1]},
                      {"id": 2, "type": "ControlNetLoader", "outputs": [_out("CONTROL_NET", 2)], "widgets_values": ["cn_a.safetensors"]},
                      {"id": 3, "type": "ControlNetApplyAdvanced", "inputs": [_in("control_net", 2)], "outputs": [_out("positive", 3)]}],
            "links": [{"id": 1, "origin_id": 1, "origin_slot": 0, "target_id": -20, "target_slot": 0},
                      {"id": 2, "origin_id": 2, "origin_slot": 0, "target_id": 3, "target_slot": 0},
                      {"id": 3, "origin_id": 3, "origin_slot": 0, "target_id": -20, "target_slot": 0}]}


@pytest.mark.parametrize("mode", [4, 2, None])
def test_a_subgraph_that_never_runs_is_not_read(models, mode):
    """A bypassed or muted instance, or a definition with no instance (None): its 2048 latent and ControlNet never run."""
    inst = [{"id": 30, "type": SG, "mode": mode, "outputs": [_out("LATENT")], "widgets_values": []}] if mode else []
    e = workflow.estimate_workflow(_main(*inst, sub=_sub()), models)
    assert _size(e) == (1024, 1024) and e["workflow"]["side_models"] == []


def test_a_subgraph_instance_feeding_the_sampler_runs_its_inner_nodes(models):
    """The instance's output (linked to the inner latent and Apply ControlNet) feeds the sampler: both run."""
    inst = {"id": 30, "type": SG, "outputs": [_out("LATENT", 30)], "widgets_values": []}
    e = workflow.estimate_workflow(_main(inst, links=[(30, 30, 0, 3, 2, "LATENT")], latent_link=30, sub=_sub()), models)
    assert _size(e) == (2048, 2048) and [m["loader"] for m in e["workflow"]["side_models"]] == ["ControlNetLoader"]


def test_a_reroute_or_group_node_feeding_nothing_is_not_read_in_a_graph_without_an_output(models):
    """No output node (the sampler's output unlinked): read as before, but for the nodes that feed nothing, a Reroute
    that feeds nothing and a legacy group node whose outputs feed nothing (rev62 F5's rule, carried through a Reroute)."""
    r = _top({"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_out("MODEL", 1)], "widgets_values": ["sd35.safetensors"]},
             {"id": 2, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 2)], "widgets_values": [2048, 2048, 1]},
             {"id": 3, "type": "Reroute", "inputs": [_in("", 2)], "outputs": [_out("")]},
             {"id": 4, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 3)], "widgets_values": [1024, 1024, 1]},
             {"id": 5, "type": "KSampler", "inputs": [_in("model", 1), _in("latent_image", 3)], "outputs": [_out("LATENT")],
              "widgets_values": KS},
             links=[(1, 1, 0, 5, 0), (2, 2, 0, 3, 0), (3, 4, 0, 5, 3)])
    assert _size(workflow.estimate_workflow(r, models)) == (1024, 1024)
    g = {"nodes": [{"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_out("MODEL", 1)], "widgets_values": ["sd35.safetensors"]},
                   {"id": 2, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 2)], "widgets_values": [1024, 1024, 1]},
                   {"id": 3, "type": "KSampler", "widgets_values": KS},
                   {"id": 10, "type": "workflow>pass2", "outputs": [_out("LATENT")], "widgets_values": [2048, 2048, 1, "cn_a.safetensors"]}],
         "links": [[1, 1, 0, 3, 0, "MODEL"], [2, 2, 0, 3, 3, "LATENT"]], "version": 0.4,
         "extra": {"groupNodes": {"pass2": {"nodes": [
             {"type": "EmptySD3LatentImage", "index": 0, "widgets_values": [2048, 2048, 1], "outputs": [{"name": "LATENT", "type": "LATENT"}]},
             {"type": "ControlNetLoader", "index": 1, "widgets_values": ["cn_a.safetensors"],
              "outputs": [{"name": "CONTROL_NET", "type": "CONTROL_NET"}]}], "links": [], "external": [[0, 0, "LATENT"]]}}}}
    e = workflow.estimate_workflow(g, models)
    assert _size(e) == (1024, 1024) and e["workflow"]["side_models"] == []


API = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd35.safetensors"}},
       "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
       "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 4.0, "seed": 1, "steps": 20,
                                               "sampler_name": "euler", "scheduler": "simple", "denoise": 1.0,
                                               "positive": ["1", 1], "negative": ["1", 1]}},
       "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
       "5": {"class_type": "SaveImage", "inputs": {"images": ["4", 0], "filename_prefix": "x"}},
       "6": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 2048, "height": 2048, "batch_size": 1}},
       "7": {"class_type": "ControlNetLoader", "inputs": {"control_net_name": "cn_a.safetensors"}}}


def test_an_api_prompts_unconnected_nodes_are_not_read(models):
    """The frontend puts an active node connected to nothing into the prompt; ComfyUI never runs it."""
    e = workflow.estimate_workflow(API, models)
    assert _size(e) == (1024, 1024) and e["workflow"]["side_models"] == []
    assert any(a.startswith("not read: EmptySD3LatentImage (node 6), ControlNetLoader (node 7): not reached")
               for a in e["assumptions"]), e["assumptions"]


def test_an_api_prompts_custom_output_node_is_kept(models):
    """A class the estimate does not know that nothing consumes may be an output (a custom save node): what it needs runs."""
    api = dict(API, **{"8": {"class_type": "MyLatentPreview", "inputs": {"latent": ["6", 0]}}})
    assert _size(workflow.estimate_workflow(api, models)) == (2048, 2048)


def test_a_cycle_and_malformed_links_end_the_walk(models):
    g = _main({"id": 20, "type": "KSampler", "inputs": [_in("model", 40), _in("latent_image", "x"), _in("positive", [1])],
               "outputs": [_out("LATENT", 41)], "widgets_values": KS},
              {"id": 21, "type": "SomeNode", "inputs": [_in("x", 41)], "outputs": [_out("y", 40)]},
              {"id": 22, "type": "PreviewAny", "inputs": [_in("source", 41)], "outputs": []},
              links=[(40, 21, 0, 20, 0), (41, 20, 0, 21, 0), [99], {"id": 7}])
    assert _size(workflow.estimate_workflow(g, models)) == (1024, 1024)


# -- #2: a side model's file named and not found --------------------------------------------------------------------------

def test_a_controlnet_not_found_makes_the_estimate_incomplete_and_write_refuses(models, tmp_path):
    """ComfyUI refuses a prompt whose ControlNetLoader names a file not in its controlnet folder (value_not_in_list,
    execution.py:938-955): as with a missing VAE the estimate is incomplete and --write writes nothing."""
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import formula

    g = _controlnet(0)
    g["nodes"][5]["widgets_values"] = ["flux_union_pro_not_here.safetensors"]
    e = workflow.estimate_workflow(g, models, policy={"budget": 8 << 30})
    formula.judge(e, 8 << 30)
    assert e["outcome"]["status"] == "incomplete" and e["workflow"]["missing"] == ["flux_union_pro_not_here.safetensors"]
    assert "not found under the models folder: flux_union_pro_not_here.safetensors (ControlNetLoader.control_net_name)" \
        in e["assumptions"]
    with pytest.raises(UserError, match="nothing written: the estimate is incomplete"):
        workflow_write.write(g, e, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


# -- #6: a FLUX.1 ControlNet's single-block residuals ---------------------------------------------------------------------

def test_a_flux_controlnets_single_block_residuals_count():
    """comfy/ldm/flux/controlnet.py:152-181 returns one residual per controlnet_blocks linear ("input") and one per
    controlnet_single_blocks linear ("output"), each of the image tokens at the hidden width. InstantX's FLUX.1 Union
    layout: 5 double + 10 single blocks of 3072 -> 15 x 3072 = 46,080 a token. Mistoline (comfy/controlnet.py:609):
    single_controlnet_blocks.N, each block's linear inside (MistolineControlnetBlock, l.42-49)."""
    from gpu_garden.memory.estimate import side_models

    t = {f"controlnet_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(5)}
    t.update({f"controlnet_blocks.{i}.bias": (BF16, (3072,)) for i in range(5)})
    t.update({f"controlnet_single_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(10)})
    assert side_models.residual_width(t) == 46_080
    misto = {f"controlnet_blocks.{i}.linear.weight": (BF16, (3072, 3072)) for i in range(2)}
    misto.update({f"single_controlnet_blocks.{i}.linear.weight": (BF16, (3072, 3072)) for i in range(4)})
    misto["controlnet_blocks.0.linear.bias"] = (BF16, (3072,))
    assert side_models.residual_width(misto) == 6 * 3072


# -- #3: side models in host RAM --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def flux(tmp_path_factory):
    """FLUX.1-dev's files and a 2.02 GiB bf16 FLUX ControlNet (5 double blocks of 3072 and their controlnet_blocks),
    hand-made; FLUX Redux's style model (12288 x 1152, bf16)."""
    f = tmp_path_factory.mktemp("flux") / "models"
    layouts.write_sparse("flux_flux1-dev", f / "diffusion_models" / "flux1-dev.safetensors")
    layouts.write_sparse("te_clip_l", f / "text_encoders" / "clip_l.safetensors")
    layouts.write_sparse("te_t5xxl_fp16", f / "text_encoders" / "t5xxl_fp16.safetensors")
    layouts.write_sparse("vae_flux_ae", f / "vae" / "ae.safetensors")
    t = {f"controlnet_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(5)}
    for i in range(5):
        for k, s in (("img_attn.qkv", (9216, 3072)), ("txt_attn.qkv", (9216, 3072)), ("img_mlp.0", (12288, 3072)),
                     ("txt_mlp.0", (12288, 3072)), ("img_mlp.2", (3072, 12288)), ("txt_mlp.2", (3072, 12288))):
            t[f"double_blocks.{i}.{k}.weight"] = (BF16, s)
    _file(f / "controlnet" / "flux_cn_union.safetensors", t)
    _file(f / "style_models" / "redux.safetensors", {"redux_up.weight": (BF16, (12288, 1152))})
    return f


def _flux_graph(*extra):
    return _top({"id": 1, "type": "UNETLoader", "widgets_values": ["flux1-dev.safetensors", "default"]},
                {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"]},
                {"id": 3, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
                {"id": 4, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
                {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]},
                *({"id": 6 + i, **x} for i, x in enumerate(extra)))


def _ram(models, g, gib):
    from gpu_garden.memory.estimate import formula

    e = workflow.estimate_workflow(g, models, policy={"host_ram": 64 << 30, "budget": gib << 30, "dynamic_vram": "off"})
    formula.judge(e, gib << 30)
    return e


def test_a_controlnet_does_not_lower_the_ram_kept_for_reload(flux):
    """The text encoders ComfyUI keeps in RAM while the sampler runs stay there whatever else the sampler loads: with the
    ControlNet (a ModelPatcher offloaded to the CPU, comfy/controlnet.py:206) the kept bytes are the same, not 2.02 GiB
    fewer; on a 24 GiB card its bytes add to what the partial load leaves in RAM."""
    cn = {"type": "ControlNetLoader", "widgets_values": ["flux_cn_union.safetensors"]}
    before, after = _ram(flux, _flux_graph(), 24), _ram(flux, _flux_graph(cn), 24)
    w = after["workflow"]["side_models"][0]["weights"]
    assert w == 2 * 5 * (3072 * 3072 + 2 * 9216 * 3072 + 4 * 12288 * 3072) == 2_170_552_320  # bf16, as stored
    assert after["host_ram"]["kept_for_reload"] == before["host_ram"]["kept_for_reload"]
    assert after["host_ram"]["needed"] >= before["host_ram"]["needed"]


def test_a_style_models_fp32_copy_is_in_host_ram(flux):
    """StyleModelLoader keeps FLUX Redux on the CPU in fp32 (comfy/sd.py:969-987): 12288 x 1152 x 4 = 56,623,104 bytes
    more host RAM (kept beside the models on the card), and no VRAM."""
    sm = {"type": "StyleModelLoader", "widgets_values": ["redux.safetensors"]}
    before, after = _ram(flux, _flux_graph(), 80), _ram(flux, _flux_graph(sm), 80)
    assert after["host_ram"]["needed"] - before["host_ram"]["needed"] == 56_623_104
    assert after["peak"] == before["peak"]


# -- #8: CLIP vision with the CLIP on the CPU --------------------------------------------------------------------------------

def test_clip_vision_stays_on_the_gpu_when_the_clip_loader_says_cpu(tmp_path):
    """CLIPLoader's device "cpu" moves that CLIP only (nodes.py:966); ClipVisionModel loads on text_encoder_device()
    (comfy/clip_vision.py:42,57), the GPU: clip_vision_h's 632,076,800 fp16 parameters (1,264,153,600 bytes) stay in the
    conditioning phase's weights, the text encoder's gone from it."""
    from gpu_garden.memory.estimate import image_encoder
    from test_estimate_wf66 import _wan, _wan_graph

    d = _wan(tmp_path / "models")
    _file(d / "clip_vision" / "clip_vision_h.safetensors", image_encoder.clip_vision_h("F16"))
    g = _wan_graph({"type": "CLIPVisionLoader", "widgets_values": ["clip_vision_h.safetensors"]})
    g["nodes"][1]["widgets_values"][2] = "cpu"
    e = workflow.estimate_workflow(g, d)
    assert e["breakdown"]["text_encode"]["weights"] == 1_264_153_600


# -- #10: a .pth ControlNet --------------------------------------------------------------------------------------------------

def test_a_pth_controlnet_is_named_as_a_pickle_checkpoint_not_a_compressed_file(models, tmp_path):
    """control_v11p_sd15_canny.pth is torch.save's zip: not "zip-compressed: decompress it first" (unzipping gives no
    safetensors), but a PyTorch pickle checkpoint the estimate does not read, so not counted."""
    import zipfile

    d = tmp_path / "models"
    (d / "checkpoints").mkdir(parents=True)
    (d / "controlnet").mkdir()
    (d / "checkpoints" / "sd35.safetensors").symlink_to(models / "checkpoints" / "sd35.safetensors")
    with zipfile.ZipFile(d / "controlnet" / "control_v11p_sd15_canny.pth", "w") as z:  # torch.save's layout
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    g = _controlnet(0)
    g["nodes"][5]["widgets_values"] = ["control_v11p_sd15_canny.pth"]
    e = workflow.estimate_workflow(g, d)
    line = next(a for a in e["assumptions"] if "control_v11p_sd15_canny.pth" in a)
    assert line.startswith("not counted: control_v11p_sd15_canny.pth (ControlNetLoader): its header is not read")
    assert "a PyTorch pickle checkpoint (torch.save's zip), which the estimate does not read" in line
    assert "decompress" not in line and e["workflow"]["side_models"] == [] and e["workflow"]["missing"] == []


# -- #11: a counted side model is listed with the files -------------------------------------------------------------------

def test_a_counted_controlnet_is_listed_with_the_workflows_files(models):
    e = workflow.estimate_workflow(_controlnet(0), models)
    assert e["workflow"]["files"] == ["sd35.safetensors", "cn_a.safetensors"]
    assert workflow.metadata(e)["files"] == ["sd35.safetensors", "cn_a.safetensors"]  # what --write stores
    assert workflow.estimate_workflow(_controlnet(4), models)["workflow"]["files"] == ["sd35.safetensors"]


def test_a_save_node_with_nothing_linked_is_no_output(models):
    """gsc_starter_1 (comfyui-workflow-templates 0.7.67) leaves its SaveImage's images input unconnected: ComfyUI's
    validation refuses that output (a required input missing), so the graph has no output and is read as before (F5's
    rule), not emptied by a walk from that SaveImage."""
    g = _top({"id": 1, "type": "CheckpointLoaderSimple", "outputs": [_out("MODEL", 1)], "widgets_values": ["sd35.safetensors"]},
             {"id": 2, "type": "EmptySD3LatentImage", "outputs": [_out("LATENT", 2)], "widgets_values": [1536, 864, 1]},
             {"id": 3, "type": "KSampler", "inputs": [_in("model", 1), _in("latent_image", 2)], "outputs": [_out("LATENT")],
              "widgets_values": KS},
             {"id": 4, "type": "SaveImage", "inputs": [_in("images", None, "IMAGE")], "outputs": [], "widgets_values": ["x"]},
             links=[(1, 1, 0, 3, 0, "MODEL"), (2, 2, 0, 3, 3, "LATENT")])
    e = workflow.estimate_workflow(g, models)
    assert _size(e) == (1536, 864) and e["workflow"]["files"] == ["sd35.safetensors"]
