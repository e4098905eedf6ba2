"""wf65: `estimate --workflow` on the structures of ComfyUI's real templates (comfyui-workflow-templates 0.7.67, read by
benchmarks/workflow_templates.py). The graphs here are hand-made on each named template's structure (other ids, values
and names, not the template's text). Expected values by hand from ComfyUI 0.8.0's source:
- ImageScaleToTotalPixels (comfy_extras/nodes_post_processing.py:236-245): scale = sqrt(megapixels x 1024^2 / (w x h)),
  each side round(side x scale / resolution_steps) x resolution_steps;
- ResizeImageMaskNode (l.366-445): "scale dimensions" with both sides set gives that size;
- FluxKontextImageScale (comfy_extras/nodes_flux.py:104-146): one of 17 preferred sizes, the largest 800 x 1328 =
  1,062,400 pixels; Canny (comfy_extras/nodes_canny.py:28-31) keeps its image's size.
Each test failed on the first-sight reader (ba7b5a2b): a latent encoded from a scaled image took the family's native
size; a size linked from a resize node kept the stale saved widgets."""
import pytest

from gpu_garden.memory.estimate import layouts, workflow

from test_estimate_wf64 import _lk, _top, _w

IMG = {"name": "image", "type": "IMAGE"}


def _in(name, link, typ="IMAGE"):
    return {"name": name, "type": typ, "link": link}


def _edit(scale_node, load=None, links=()):
    """LoadImage (or `load`) -> scale_node -> VAEEncode -> KSampler: no latent node of its own (Qwen-Image edit)."""
    return _top(load or {"id": 1, "type": "LoadImage", "widgets_values": ["cat.png", "image"]},
                dict(scale_node, id=2, inputs=[_in("image", 1)] + scale_node.get("inputs", [])),
                {"id": 3, "type": "VAEEncode", "inputs": [_in("pixels", 2), _in("vae", None, "VAE")]},
                {"id": 4, "type": "UNETLoader", "widgets_values": ["qwen_image_edit.safetensors", "default"]},
                links=[(1, 1, 0, 2, 0, "IMAGE"), (2, 2, 0, 3, 0, "IMAGE")] + list(links))


def _qwen_models(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("qwen_image_qwen_image_bf16", d / "diffusion_models" / "qwen_image_edit.safetensors")
    return d


def test_a_loaded_image_scaled_to_one_megapixel_is_estimated_at_a_square_of_that_area(tmp_path):
    """image_qwen_image_union_control_lora: LoadImage -> ImageScaleToTotalPixels (1.0 MP) -> VAEEncode, sampled as is."""
    wf = _edit({"type": "ImageScaleToTotalPixels", "widgets_values": ["lanczos", 1.0, 1]})
    info = workflow.read(wf, None)
    assert info["input_image"][1][:3] == (1024, 1024, 1)  # sqrt(1.0 x 1024^2) = 1024
    est = workflow.estimate_workflow(wf, _qwen_models(tmp_path))
    assert (est["width"], est["height"]) == (1024, 1024)  # not Qwen-Image's native 1328 x 1328
    assert est["workflow"]["size_assumed"].startswith("assumed: a square of the 1048576 pixels")
    assert any("VAEEncode takes its latent size from its input image, not a widget: estimated at 1024x1024 (a square"
               in a for a in est["assumptions"])


@pytest.mark.parametrize("mp", [-1.0, float("nan"), float("inf")])
def test_an_impossible_megapixels_value_keeps_the_native_size_not_a_traceback(tmp_path, mp):
    """rev62 F7: a negative, NaN or infinite megapixels (ComfyUI's own validation refuses them) raised TypeError /
    ValueError inside image_size's AreaOnly handler, where its sibling except clauses do not catch: the CLI printed a
    traceback, the route answered 400 'TypeError' and marked its health entry failed."""
    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    wf = {"nodes": [{"id": 1, "type": "LoadImage", "widgets_values": ["cat.png", "image"]},
                    {"id": 2, "type": "ImageScaleToTotalPixels", "inputs": [{"name": "image", "type": "IMAGE", "link": 1}],
                     "widgets_values": ["lanczos", mp, 1]},
                    {"id": 3, "type": "VAEEncode", "inputs": [{"name": "pixels", "type": "IMAGE", "link": 2},
                                                             {"name": "vae", "type": "VAE", "link": None}]},
                    {"id": 4, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]}],
          "links": [[1, 1, 0, 2, 0, "IMAGE"], [2, 2, 0, 3, 0, "IMAGE"]], "version": 0.4}
    est = workflow.estimate_workflow(wf, d)
    assert (est["width"], est["height"]) == (512, 512)  # SD1.5's native size (nodes.py EmptyLatentImage's default)


def test_a_known_image_scaled_to_total_pixels_keeps_its_aspect_and_steps():
    """image_qwen_image_controlnet_patch's scale, of an image the graph makes (EmptyImage 1600 x 900)."""
    empty = {"id": 1, "type": "EmptyImage", "widgets_values": [1600, 900, 1, 0]}
    # 1.0 MP: scale = sqrt(1048576 / 1440000) = 1024 / 1200; 1600 x 1024 / 1200 = 1365.33 -> 1365, 900 x 1024 / 1200 = 768
    wf = _edit({"type": "ImageScaleToTotalPixels", "widgets_values": ["lanczos", 1.0, 1]}, load=empty)
    assert workflow.read(wf, None)["input_image"][1][:3] == (1365, 768, 1)
    # resolution_steps 64: round(1365.33 / 64) = 21 -> 1344, round(768 / 64) = 12 -> 768
    wf = _edit({"type": "ImageScaleToTotalPixels", "widgets_values": ["lanczos", 1.0, 64]}, load=empty)
    assert workflow.read(wf, None)["input_image"][1][:3] == (1344, 768, 1)


def test_flux_kontext_image_scale_of_a_loaded_image_takes_its_largest_preferred_area(tmp_path):
    """image_qwen_image_edit_2511: LoadImage -> FluxKontextImageScale -> VAEEncode."""
    wf = _edit({"type": "FluxKontextImageScale", "widgets_values": []})
    est = workflow.estimate_workflow(wf, _qwen_models(tmp_path))
    assert (est["width"], est["height"]) == (1031, 1031)  # sqrt(800 x 1328 = 1,062,400) = 1030.7


def test_flux_kontext_image_scale_of_a_known_image_picks_the_nearest_aspect():
    """flux_kontext_dev_basic's scale, of a 1920 x 1080 EmptyImage: aspect 1.778; 1392 / 752 = 1.851 is 0.073 away,
    1328 / 800 = 1.660 is 0.118 and 1456 / 720 = 2.022 is 0.244: 1392 x 752."""
    empty = {"id": 1, "type": "EmptyImage", "widgets_values": [1920, 1080, 1, 0]}
    wf = _edit({"type": "FluxKontextImageScale", "widgets_values": []}, load=empty)
    assert workflow.read(wf, None)["input_image"][1][:3] == (1392, 752, 1)


def _ltx2_i2v(resize, extra=(), extra_links=(), between=None):
    """video_ltx2_i2v's shape: LoadImage -> ResizeImageMaskNode (scale dimensions) [-> Canny] -> GetImageSize -> the
    latent's width / height; the latent node keeps stale saved widgets (768 x 512)."""
    nodes = [{"id": 1, "type": "LoadImage", "widgets_values": ["first_frame.png", "image"]},
             dict(resize, id=2, type="ResizeImageMaskNode", inputs=[_in("input", 1)] + resize.get("inputs", [])),
             {"id": 4, "type": "GetImageSize", "inputs": [_in("image", 3 if between else 2)]},
             {"id": 5, "type": "EmptyLTXVLatentVideo", "inputs": [_w("width", 4), _w("height", 5)],
              "widgets_values": [768, 512, 97, 1]}] + list(extra)
    links = [(1, 1, 0, 2, 0, "IMAGE"), (4, 4, 0, 5, 0, "INT"), (5, 4, 1, 5, 1, "INT")] + list(extra_links)
    if between:
        nodes.append(dict(between, id=3, inputs=[_in("image", 2)]))
        links += [(2, 2, 0, 3, 0, "IMAGE"), (3, 3, 0, 4, 0, "IMAGE")]
    else:
        links += [(2, 2, 0, 4, 0, "IMAGE")]
    return _top(*nodes, links=links)


def test_a_size_linked_from_resize_image_mask_nodes_scale_dimensions_is_read():
    """video_ltx2_i2v: the typed 1280 x 720 of ResizeImageMaskNode, not the latent's saved 768 x 512."""
    info = workflow.read(_ltx2_i2v({"widgets_values": ["scale dimensions", 1216, 704, "center", "lanczos"]}), None)
    assert info["size"] == (1216, 704, 97, 1)  # the length: its own saved widget
    assert not any("does not follow" in n for n in info["notes"])


def test_canny_keeps_the_resized_size_and_a_linked_resize_width_is_followed():
    """video_ltx2_canny_to_video: ResizeImageMaskNode (its width from a PrimitiveInt) -> Canny -> GetImageSize."""
    prim = {"id": 6, "type": "PrimitiveInt", "widgets_values": [960, "fixed"]}
    wf = _ltx2_i2v({"widgets_values": ["scale dimensions", 1280, 544, "center", "lanczos"],
                    "inputs": [_w("resize_type.width", 6)]}, extra=[prim], extra_links=[(6, 6, 0, 2, 1, "INT")],
                   between={"type": "Canny", "widgets_values": [0.4, 0.8]})
    assert workflow.read(wf, None)["size"] == (960, 544, 97, 1)


def test_a_resize_whose_size_needs_the_loaded_image_keeps_the_saved_value_and_says_why():
    """A resize type that depends on the loaded image's size (scale longer dimension): not read, named."""
    info = workflow.read(_ltx2_i2v({"widgets_values": ["scale longer dimension", 1024, "lanczos"]}), None)
    assert info["size"] == (768, 512, 97, 1)
    assert any("EmptyLTXVLatentVideo.width is linked from ResizeImageMaskNode (node 2): 'scale longer dimension' of an "
               "image whose size the estimate does not know" in n for n in info["notes"])


def test_api_format_reads_the_resize_nodes_flattened_widgets():
    """An API export of video_ltx2_i2v's resize: the dynamic combo's widgets as resize_type.width / .height."""
    prompt = {"1": {"class_type": "LoadImage", "inputs": {"image": "a.png"}},
              "2": {"class_type": "ResizeImageMaskNode", "inputs": {"input": ["1", 0], "resize_type": "scale dimensions",
                                                                   "resize_type.width": 1088, "resize_type.height": 608,
                                                                   "resize_type.crop": "center", "scale_method": "area"}},
              "3": {"class_type": "GetImageSize", "inputs": {"image": ["2", 0]}},
              "4": {"class_type": "EmptyLTXVLatentVideo", "inputs": {"width": ["3", 0], "height": ["3", 1], "length": 97,
                                                                     "batch_size": 1}}}
    assert workflow.read(prompt, None)["size"] == (1088, 608, 97, 1)


def _depth_graph(vaes):
    """flux_depth_lora_example's two pipelines: a Lotus depth model with the SD VAE makes the depth image the FLUX.1
    model is conditioned on; FLUX.1 with its own VAE samples and decodes."""
    nodes = [{"id": 1, "type": "UNETLoader", "widgets_values": ["flux1-dev.safetensors", "default"]},
             {"id": 2, "type": "UNETLoader", "widgets_values": ["lotus-depth.safetensors", "default"]},
             {"id": 5, "type": "EmptySD3LatentImage", "widgets_values": [1024, 768, 1]}]
    nodes += [{"id": 10 + i, "type": "VAELoader", "widgets_values": [v]} for i, v in enumerate(vaes)]
    return _top(*nodes)


def _flux_models(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")
    layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors")
    layouts.write_sparse("vae_sd15_vae-ft-mse-840000-ema-pruned", d / "vae" / "vae-ft-mse.safetensors")
    return d


def test_a_preprocessors_vae_beside_the_models_own_is_left_out_not_refused(tmp_path):
    """flux_depth_lora_example / sd3.5_large_depth: the SD VAE (4 channels) of the Lotus depth pipeline beside FLUX.1's
    ae (16): estimated with the ae, the other named; first sight refused the graph (a 4-channel VAE cannot decode...)."""
    d = _flux_models(tmp_path)
    est = workflow.estimate_workflow(_depth_graph(["vae-ft-mse.safetensors", "ae.safetensors"]), d)
    assert (est["width"], est["height"]) == (1024, 768)
    vae = [c for c in est["components"] if c["role"] == "vae"]
    assert [c["source"] for c in vae] == ["ae.safetensors"]
    assert any(a.startswith("vae-ft-mse.safetensors: a VAE of another latent than the diffusion model's, beside its own "
                            "(ae.safetensors)") for a in est["assumptions"])


def test_a_graph_whose_only_vae_cannot_decode_the_model_is_still_refused(tmp_path):
    """The check stays where no VAE matches (the SD VAE alone beside FLUX.1)."""
    import pytest

    from gpu_garden.memory.errors import UserError

    with pytest.raises(UserError, match="a 4-channel VAE cannot decode FLUX.1"):
        workflow.estimate_workflow(_depth_graph(["vae-ft-mse.safetensors"]), _flux_models(tmp_path))


def _sd15_checkpoint_beside(tmp_path, vae_layout, vae_name):
    """SD1.5's checkpoint (its VAE inside) and a VAELoader of vae_name (written from vae_layout), at 512x512: (wf, models)."""
    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    layouts.write_sparse(vae_layout, d / "vae" / vae_name)
    return _top({"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]},
                {"id": 2, "type": "VAELoader", "widgets_values": [vae_name]},
                {"id": 5, "type": "EmptyLatentImage", "widgets_values": [512, 512, 1]}), d


def test_a_checkpoints_own_vae_beside_a_vaeloader_of_another_latent_is_still_refused(tmp_path):
    """SD1.5's checkpoint (its VAE inside, 4 channels) and a VAELoader of FLUX.1's ae (16): the loaded VAE is the one the
    user decodes with, the classic mistake; the checkpoint's own VAE does not make the ae another pipeline's
    (tests/host/test_estimate_node.py's refusal on the real host, which wf65's first version let through)."""
    import pytest

    from gpu_garden.memory.errors import UserError

    wf, d = _sd15_checkpoint_beside(tmp_path, "vae_flux_ae", "ae.safetensors")
    with pytest.raises(UserError, match="a 16-channel VAE cannot decode Stable Diffusion 1.x's 4-channel latent"):
        workflow.estimate_workflow(wf, d)


def test_a_checkpoint_and_a_vaeloader_of_the_same_latent_keep_both_vaes_and_no_pipeline_line(tmp_path):
    """rev62 F3: the most common separate-VAE graph, SD1.5's checkpoint (its VAE inside) and a VAELoader of the SD VAE
    (4 channels both): c9e10ee4 dropped the checkpoint's own VAE as 'a VAE of another latent ... another pipeline's',
    both false, and its host RAM with it; ComfyUI loads it all the same (nodes.py CheckpointLoaderSimple:
    output_vae=True). Nothing is another pipeline's here: both VAEs stay, no such line."""
    wf, d = _sd15_checkpoint_beside(tmp_path, "vae_sd15_vae-ft-mse-840000-ema-pruned", "vae-ft-mse.safetensors")
    est = workflow.estimate_workflow(wf, d)
    assert sorted(c["source"] for c in est["components"] if c["role"] == "vae") == ["sd15.safetensors", "vae-ft-mse.safetensors"]
    assert not any("another pipeline's" in a for a in est["assumptions"]), est["assumptions"]


def test_a_clip_vision_encoder_beside_the_models_is_named_not_silently_left_out():
    """image_to_video_wan: CLIPVisionLoader (clip_vision_h) beside UNETLoader / CLIPLoader / VAELoader; the estimate
    does not size it, and now says so with its file (first sight: nothing said)."""
    wf = _top({"id": 1, "type": "UNETLoader", "widgets_values": ["wan2.1_i2v_480p_14B_fp16.safetensors", "default"]},
              {"id": 2, "type": "CLIPVisionLoader", "widgets_values": ["clip_vision_h.safetensors"]},
              {"id": 3, "type": "ControlNetLoader", "mode": 4, "widgets_values": ["muted_controlnet.safetensors"]},
              {"id": 4, "type": "WanImageToVideo", "widgets_values": [512, 512, 33, 1]})
    info = workflow.read(wf, None)
    assert "not counted, loaded beside the models estimated: clip_vision_h.safetensors (CLIPVisionLoader: a CLIP vision " \
           "encoder)" in info["notes"]
    assert not any("muted_controlnet" in n for n in info["notes"])  # a bypassed loader does not run


def test_api_format_names_a_model_patch_and_a_custom_loader():
    """image_z_image_turbo_fun_union_controlnet's ModelPatchLoader, and a custom pack's loader
    (template-Animation_Trajectory_Control_Wan_ATI's WanVideoModelLoader), in an API export."""
    prompt = {"1": {"class_type": "ModelPatchLoader", "inputs": {"name": "z_image_union.safetensors"}},
              "2": {"class_type": "WanVideoModelLoader", "inputs": {"model": "wan_ati.safetensors"}},
              "3": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    notes = workflow.read(prompt, None)["notes"]
    assert "not counted, loaded beside the models estimated: z_image_union.safetensors (ModelPatchLoader: a model " \
           "patch)" in notes
    assert "not counted: WanVideoModelLoader, a loader the estimate does not know (a custom node's?)" in notes


def test_a_graph_with_only_loaders_it_does_not_size_says_which(tmp_path):
    """An SVD checkpoint through ImageOnlyCheckpointLoader: the error named no loader at all (first sight). h3d63 follows
    the loader for Hunyuan3D (test_estimate_h3d63.py); an SVD file (a UNet under model.diffusion_model.) stays unsized."""
    import pytest

    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import layouts

    wf = _top({"id": 1, "type": "ImageOnlyCheckpointLoader", "widgets_values": ["svd_xt.safetensors"]},
              {"id": 2, "type": "SVD_img2vid_Conditioning", "widgets_values": [1024, 576, 14, 127, 6, 0.0]})
    layouts.write_sparse({"tensors": {"model.diffusion_model.input_blocks.0.0.weight": {"dtype": "F16", "shape": [320, 8, 3, 3]}}},
                         tmp_path / "checkpoints" / "svd_xt.safetensors")
    with pytest.raises(UserError, match=r"no loader nodes it reads \(ImageOnlyCheckpointLoader: not sized\)"):
        workflow.estimate_workflow(wf, tmp_path)


def test_the_camera_embeddings_size_outputs_are_read():
    """video_wan2.1_fun_camera_v1.1_1.3B: WanCameraEmbedding's width / height / length outputs (slots 1-3, its own
    widgets) feed WanCameraImageToVideo, which keeps stale saved 832 x 480, 81 (first sight: the saved ones, named)."""
    wf = _top({"id": 1, "type": "WanCameraEmbedding", "widgets_values": ["Zoom In", 640, 368, 49, 1.0, 0.5, 0.5, 0.5, 0.5]},
              {"id": 2, "type": "WanCameraImageToVideo", "inputs": [_w("width", 1), _w("height", 2), _w("length", 3)],
               "widgets_values": [832, 480, 81, 1]},
              links=[(1, 1, 1, 2, 0, "INT"), (2, 1, 2, 2, 1, "INT"), (3, 1, 3, 2, 2, "INT")])
    info = workflow.read(wf, None)
    assert info["size"] == (640, 368, 49, 1)
    assert not any("does not follow" in n for n in info["notes"])
