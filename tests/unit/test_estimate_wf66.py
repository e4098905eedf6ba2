"""wf66: `estimate --workflow` counts the models the loaders load beside the diffusion model, text encoders and VAE
(memory/estimate/side_models.py), each in the phase where ComfyUI 0.8.0 holds it on the device. The graphs are hand-made
on the structure of named templates of comfyui-workflow-templates 0.7.67 (other ids and names, not the template's
text); the side models' headers are hand-made (layouts.write_sparse), their bytes worked out by hand below. Each test
failed on the code before wf66, where these loaders were named in an assumption line and counted nowhere."""
import pytest

from gpu_garden.memory.estimate import image_encoder, layouts, workflow
from gpu_garden.memory.estimate.spec import FRAGMENTATION

from test_estimate_wf64 import _top

BF16, F32 = "BF16", "F32"


def _file(path, tensors):
    return layouts.write_sparse({"tensors": {k: {"dtype": d, "shape": list(s)} for k, (d, s) in tensors.items()}}, path)


def _qwen(d):
    layouts.write_sparse("qwen_image_qwen_image_bf16", d / "diffusion_models" / "qwen_dm.safetensors")
    return d


def _qwen_graph(*extra, cfg=1.0):
    """image_qwen_image_instantx_controlnet's core: UNETLoader -> KSampler on an EmptySD3LatentImage 1024 x 1024;
    `extra` loader nodes beside it (their apply nodes carry no size: left out)."""
    return _top({"id": 1, "type": "UNETLoader", "widgets_values": ["qwen_dm.safetensors", "default"]},
                {"id": 2, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
                {"id": 3, "type": "KSampler", "widgets_values": [1, "fixed", 20, cfg, "euler", "simple", 1.0]},
                *[dict(n, id=10 + i) for i, n in enumerate(extra)])


# an InstantX-style DiT ControlNet for Qwen-Image (width 3072): five controlnet_blocks linears, one block's q, and an
# fp32 input embedder. Bytes as ComfyUI loads it (unet_dtype: bf16 stays, fp32 becomes 16-bit):
#   controlnet_blocks: 5 x (3072 x 3072 + 3072) x 2 = 5 x 18,880,512 = 94,402,560
#   transformer_blocks.0.attn.to_q.weight: 3072 x 3072 x 2 = 18,874,368
#   controlnet_x_embedder.weight (F32 -> 2 bytes): 3072 x 64 x 2 = 393,216          total 113,670,144
CNET = {**{f"controlnet_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(5)},
        **{f"controlnet_blocks.{i}.bias": (BF16, (3072,)) for i in range(5)},
        "transformer_blocks.0.attn.to_q.weight": (BF16, (3072, 3072)),
        "controlnet_x_embedder.weight": (F32, (3072, 64))}
CNET_BYTES = 113_670_144
# its residuals: one [batch 1 (cfg 1), 4096 tokens (1024 / 8 / 2 = 64; 64 x 64), 3072] bf16 tensor per block:
#   5 x 3072 x 4096 x 1 x 2 = 125,829,120
CNET_RESIDUALS = 125_829_120


def _without_and_with(tmp_path, loader, folder, name, tensors, graph=_qwen_graph, models=_qwen):
    d = models(tmp_path / "models")
    wf = graph(loader)
    before = workflow.estimate_workflow(wf, d)
    _file(d / folder / name, tensors)
    return before, workflow.estimate_workflow(wf, d)


def test_a_controlnet_adds_its_weights_and_residuals_to_the_sample_phase(tmp_path):
    """image_qwen_image_instantx_controlnet: ControlNetLoader's file sits on the device with the diffusion model
    (sampler_helpers.get_additional_models) and its residuals are held while the diffusion model runs."""
    cn = {"type": "ControlNetLoader", "widgets_values": ["instantx_union.safetensors"]}
    before, after = _without_and_with(tmp_path, cn, "controlnet", "instantx_union.safetensors", CNET)
    b, a = before["breakdown"]["sample"], after["breakdown"]["sample"]
    assert a["weights"] - b["weights"] == CNET_BYTES
    assert a["activations"] - b["activations"] == CNET_RESIDUALS
    assert a["side_models"] == {"instantx_union.safetensors (ControlNetLoader)":
                                {"weights": CNET_BYTES, "activations": CNET_RESIDUALS}}
    # 113,670,144 + 125,829,120 x 1.05 (the allocator margin, 5 % of activations) = 245,790,720, within a byte of rounding
    assert FRAGMENTATION == 0.05
    assert abs((after["phases"]["sample"] - before["phases"]["sample"]) - 245_790_720) <= 1
    # the peak is the VAE decode here (fix66a: the diffusion model stays loaded beside the VAE), which the ControlNet,
    # a sampling side model, does not raise
    assert after["peak"] >= before["peak"] and after["phases"]["sample"] > before["phases"]["sample"]
    assert after["workflow"]["side_models"] == [{"owner": "instantx_union.safetensors (ControlNetLoader)",
                                                 "loader": "ControlNetLoader", "phase": "sample", "weights": CNET_BYTES}]
    assert not any(x.startswith("not counted, loaded beside") for x in after["assumptions"])
    assert "side_models" not in after["breakdown"]["vae_decode"]  # swapped out after sampling
    assert after["phases"]["vae_decode"] == before["phases"]["vae_decode"]


def _sd3(d):
    layouts.write_sparse("sd3_sd3.5_medium", d / "checkpoints" / "sd35.safetensors")
    return d


def _sd3_graph(*extra):
    """sd3.5_large_canny_controlnet_example's core: CheckpointLoaderSimple -> KSampler (cfg 4) on an
    EmptySD3LatentImage 1024 x 1024, the ControlNet loader beside it."""
    return _top({"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd35.safetensors"]},
                {"id": 2, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
                {"id": 3, "type": "KSampler", "widgets_values": [1, "fixed", 20, 4.0, "euler", "simple", 1.0]},
                *[dict(n, id=10 + i) for i, n in enumerate(extra)])


def test_cfg_batches_the_residuals_and_a_diff_controlnet_counts_the_same(tmp_path):
    """DiffControlNetLoader (nodes.py:822) loads as ControlNetLoader does; an SD3.5 ControlNet (cldm/mmdit.py) of width
    1536 with three controlnet_blocks: (1536 x 1536 + 1536) x 2 x 3 = 14,164,992 bytes; cfg 4 batches cond and uncond,
    so its residuals are 3 x 1536 x 4096 tokens x 2 x 2 bytes = 75,497,472."""
    t = {**{f"controlnet_blocks.{i}.weight": (BF16, (1536, 1536)) for i in range(3)},
         **{f"controlnet_blocks.{i}.bias": (BF16, (1536,)) for i in range(3)}}
    cn = {"type": "DiffControlNetLoader", "widgets_values": ["sd35_canny.safetensors"]}
    before, after = _without_and_with(tmp_path, cn, "controlnet", "sd35_canny.safetensors", t, graph=_sd3_graph, models=_sd3)
    assert after["latent"]["batch_in_model"] == 2 and after["latent"]["image_tokens"] == 4096
    b, a = before["breakdown"]["sample"], after["breakdown"]["sample"]
    assert (a["weights"] - b["weights"], a["activations"] - b["activations"]) == (14_164_992, 75_497_472)


def test_a_controlnet_in_t2i_adapter_is_found_there_too(tmp_path):
    """folder_paths "controlnet" is controlnet/ and t2i_adapter/ (folder_paths.py:36)."""
    cn = {"type": "ControlNetLoader", "widgets_values": ["instantx_union.safetensors"]}
    before, after = _without_and_with(tmp_path, cn, "t2i_adapter", "instantx_union.safetensors", CNET)
    assert after["breakdown"]["sample"]["weights"] - before["breakdown"]["sample"]["weights"] == CNET_BYTES


def test_a_model_patch_is_loaded_in_its_own_dtype_for_sampling(tmp_path):
    """image_qwen_image_controlnet_patch: ModelPatchLoader builds the patch in the dtype of most of its elements
    (comfy.utils.weight_dtype), no cast: here BF16 (3072 x 132 + 3072 x 3072 = 9,842,688 elements against 3,072 F32),
    so every tensor at 2 bytes: (9,842,688 + 3,072) x 2 = 19,691,520. No residual: its work is inside each block."""
    patch = {"controlnet_blocks.0.y_rms.weight": (F32, (3072,)), "img_in.weight": (BF16, (3072, 132)),
             "controlnet_blocks.0.proj.weight": (BF16, (3072, 3072))}
    mp = {"type": "ModelPatchLoader", "widgets_values": ["qwen_canny_patch.safetensors"]}
    before, after = _without_and_with(tmp_path, mp, "model_patches", "qwen_canny_patch.safetensors", patch)
    b, a = before["breakdown"]["sample"], after["breakdown"]["sample"]
    assert (a["weights"] - b["weights"], a["activations"] - b["activations"]) == (19_691_520, 0)


def test_an_fp32_model_patch_stays_fp32(tmp_path):
    """uso-flux1-projector's loader: a patch stored in F32 is built in F32 (no unet_dtype cast as a ControlNet has):
    (1152 x 4096 + 4096) x 4 = 18,890,752 bytes, not half that."""
    patch = {"feature_embedder.mid_layer_norm.bias": (F32, (4096,)), "feature_embedder.proj.weight": (F32, (1152, 4096))}
    mp = {"type": "ModelPatchLoader", "widgets_values": ["uso_projector.safetensors"]}
    before, after = _without_and_with(tmp_path, mp, "model_patches", "uso_projector.safetensors", patch)
    assert after["breakdown"]["sample"]["weights"] - before["breakdown"]["sample"]["weights"] == 18_890_752


def _wan(d):
    layouts.write_sparse("wan_wan2.1_t2v_1.3B_fp16", d / "diffusion_models" / "wan_dm.safetensors")
    layouts.write_sparse("te_umt5_xxl_fp16", d / "text_encoders" / "umt5.safetensors")
    layouts.write_sparse("vae_wan_2.1_vae", d / "vae" / "wan_vae.safetensors")
    return d


def _wan_graph(*extra):
    """image_to_video_wan's loaders: UNETLoader, CLIPLoader, VAELoader, and the side loader; WanImageToVideo's size."""
    return _top({"id": 1, "type": "UNETLoader", "widgets_values": ["wan_dm.safetensors", "default"]},
                {"id": 2, "type": "CLIPLoader", "widgets_values": ["umt5.safetensors", "wan", "default"]},
                {"id": 3, "type": "VAELoader", "widgets_values": ["wan_vae.safetensors"]},
                {"id": 4, "type": "EmptyHunyuanLatentVideo", "widgets_values": [832, 480, 33, 1]},
                {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]},
                *[dict(n, id=10 + i) for i, n in enumerate(extra)])


def test_a_clip_vision_file_is_counted_with_the_encoders(tmp_path):
    """image_to_video_wan: CLIPVisionLoader's clip_vision_h (632,076,800 parameters, fp16: 1,264,153,600 bytes) is held
    in the conditioning phase with the text encoder, as the I2V model's image encoder is (image_encoder.py)."""
    cv = {"type": "CLIPVisionLoader", "widgets_values": ["clip_vision_h.safetensors"]}
    t = image_encoder.clip_vision_h("F16")
    before, after = _without_and_with(tmp_path, cv, "clip_vision", "clip_vision_h.safetensors", t,
                                      graph=_wan_graph, models=_wan)
    b, a = before["breakdown"]["text_encode"], after["breakdown"]["text_encode"]
    assert a["weights"] - b["weights"] == 1_264_153_600
    assert a["side_models"]["clip_vision_h.safetensors (CLIPVisionLoader)"]["weights"] == 1_264_153_600
    assert "clip_vision_h.safetensors" in after["workflow"]["files"]
    assert any(c["source"] == "clip_vision_h.safetensors" and c["role"] == "text_encoder" for c in after["components"])
    assert after["breakdown"]["sample"]["weights"] == before["breakdown"]["sample"]["weights"]


def test_an_audio_encoder_is_held_in_fp16_in_the_conditioning_phase(tmp_path):
    """video_wan2_2_14B_s2v: AudioEncoderLoader builds wav2vec2 in text_encoder_dtype, fp16: an F32 file at 2 bytes,
    (1024 + 1024 x 1024) x 2 = 2,099,200; loaded for its encode (load_model_gpu), before sampling."""
    enc = {"encoder.layer_norm.bias": (F32, (1024,)), "encoder.layers.0.attention.q_proj.weight": (F32, (1024, 1024))}
    ae = {"type": "AudioEncoderLoader", "widgets_values": ["wav2vec2_large.safetensors"]}
    before, after = _without_and_with(tmp_path, ae, "audio_encoders", "wav2vec2_large.safetensors", enc,
                                      graph=_wan_graph, models=_wan)
    b, a = before["breakdown"]["text_encode"], after["breakdown"]["text_encode"]
    assert (a["weights"] - b["weights"], a["activations"] - b["activations"]) == (2_099_200, 0)
    assert after["breakdown"]["sample"]["weights"] == before["breakdown"]["sample"]["weights"]
    assert any("its activations (the audio's length) are not counted" in x for x in after["assumptions"])


def test_a_style_model_runs_on_the_cpu_and_takes_no_vram(tmp_path):
    """flux_redux_model_example: comfy/sd.py StyleModel keeps Redux on the CPU in fp32: the phases do not move; its
    host RAM is named: 12288 x 1152 x 4 = 56,623,104 bytes = 54.00 MiB."""
    redux = {"redux_up.weight": (BF16, (12288, 1152))}
    sm = {"type": "StyleModelLoader", "widgets_values": ["redux.safetensors"]}
    before, after = _without_and_with(tmp_path, sm, "style_models", "redux.safetensors", redux)
    assert after["phases"] == before["phases"]
    assert any(x.startswith("redux.safetensors (StyleModelLoader): ComfyUI runs the style model on the CPU in fp32 "
                            "(54.00 MiB of host RAM)") for x in after["assumptions"])
    assert not any(x.startswith("not counted, loaded beside") for x in after["assumptions"])


def test_a_side_file_not_found_is_missing(tmp_path):
    """rev63 #2 (was: named, the estimate whole): ComfyUI refuses a prompt naming a ControlNet its folder lacks
    (value_not_in_list, execution.py:938-955), so it is missing as a VAE is (test_estimate_fix63 has the outcome)."""
    d = _qwen(tmp_path / "models")
    est = workflow.estimate_workflow(_qwen_graph({"type": "ControlNetLoader", "widgets_values": ["absent.safetensors"]}), d)
    assert "not found under the models folder: absent.safetensors (ControlNetLoader.control_net_name)" in est["assumptions"]
    assert not any(a.startswith("not counted, loaded beside") for a in est["assumptions"])
    assert est["workflow"]["missing"] == ["absent.safetensors"] and est["workflow"]["side_models"] == []
    assert "side_models" not in est["breakdown"]["sample"]


def test_a_clip_vision_file_alone_is_not_an_estimate(tmp_path):
    """template-Animation_Trajectory_Control_Wan_ATI: WanVideoWrapper's own loaders and a CLIPVisionLoader; the CLIP
    vision file found is no model the estimate can run on its own: refused as before."""
    d = tmp_path / "models"
    _file(d / "clip_vision" / "clip_vision_h.safetensors", image_encoder.clip_vision_h("F16"))
    wf = _top({"id": 1, "type": "WanVideoModelLoader", "widgets_values": ["wan_ati.safetensors"]},
              {"id": 2, "type": "CLIPVisionLoader", "widgets_values": ["clip_vision_h.safetensors"]})
    with pytest.raises(Exception, match="none of the workflow's model files was found"):
        workflow.estimate_workflow(wf, d)


def test_every_model_resident_keeps_the_controlnet_under_the_decode(tmp_path):
    """models resident (ComfyUI --highvram): nothing is swapped out, so the ControlNet sits under every phase."""
    d = _qwen(tmp_path / "models")
    _file(d / "controlnet" / "cn.safetensors", CNET)
    wf = _qwen_graph({"type": "ControlNetLoader", "widgets_values": ["cn.safetensors"]})
    est = workflow.estimate_workflow(wf, d, policy={"models": "resident"})
    assert est["breakdown"]["vae_decode"]["side_models"]["cn.safetensors (ControlNetLoader)"] == \
        {"weights": CNET_BYTES, "activations": 0}
    assert FRAGMENTATION > 0


def test_a_clip_vision_file_that_is_no_vision_tower_is_named_not_counted(tmp_path):
    """A file in clip_vision/ whose keys are no CLIP vision tower's (here one plain 4096 x 4096 weight): not read as a
    diffusion model or an encoder, named instead."""
    cv = {"type": "CLIPVisionLoader", "widgets_values": ["odd.safetensors"]}
    before, after = _without_and_with(tmp_path, cv, "clip_vision", "odd.safetensors",
                                      {"blocks.0.weight": ("F16", (4096, 4096))}, graph=_wan_graph, models=_wan)
    assert after["phases"] == before["phases"]
    assert [c["source"] for c in after["components"]] == [c["source"] for c in before["components"]]
    assert "not counted: odd.safetensors (CLIPVisionLoader): its keys are not a CLIP vision tower's " \
        "(vision_model.encoder.layers.*)" in after["assumptions"]
