"""Qwen-Image and Z-Image sampling against the tracer (est18, issue 15): the blocks' peaks as read from ComfyUI 0.8.0's
code (phases.DUAL_*, NEXTDIT_*), and Qwen-Image's cond and uncond as separate passes (spec cfg_separate). Expected
figures are worked out by hand from the layouts' shapes; the traced bytes are pinned in test_estimate_traced_pins.json."""
from gpu_garden.memory.estimate import families, formula as E, layouts


def _dm(name):
    return [c for c in families.split_components(layouts.table(name), name) if c["role"] == "diffusion_model"]


def _sample(name, w, h, cfg, tokens=None):
    return E.estimate(_dm(name), w, h, 1, 1, cfg=cfg, policy={"_no_knobs": True, "text_tokens": tokens})


def test_qwen_image_block_peak_by_hand():
    e = _sample("qwen_image_qwen_image_bf16", 1024, 1024, False, 10)
    assert e["latent"]["tokens"] == 4106 and e["latent"]["batch_in_model"] == 1
    # 4096 image tokens x (3 hidden + 2 x the 12288-wide MLP) of 3072 in bf16, 10 text tokens x 2 hidden,
    # fp32 rotary tables (4106 tokens x head 128 x 8 B), sampler state (262,144 latent elements x (24 + 8) B)
    want = 4096 * (3 * 3072 + 2 * 12288) * 2 + 10 * 2 * 3072 * 2 + 4106 * 128 * 8 + 262144 * 32
    assert want == 289_540_096
    assert e["breakdown"]["sample"]["activations"] == want
    # the tracer's 280,916,996 B (one conditioning): ours is above it by the sampler state the trace has no part of
    assert 0 < want - 280_916_996 < 0.05 * 280_916_996


def test_z_image_block_peak_by_hand():
    e = _sample("z_image_z_image_turbo_bf16", 1024, 1024, None, 13)
    assert e["latent"]["tokens"] == 4109 and e["latent"]["batch_in_model"] == 1      # Turbo: cfg 1
    # 4109 tokens x (4 hidden of 3840 + 4 x the 10240-wide SwiGLU) in bf16, rotary tables, sampler state
    want = 4109 * (4 * 3840 + 4 * 10240) * 2 + 4109 * 128 * 8 + 262144 * 32
    assert abs(e["breakdown"]["sample"]["activations"] - want) <= 1                   # float units, int()
    assert abs(want / 471_640_584 - 1) < 0.02                                            # the traced peak


def test_qwen_image_runs_cond_and_uncond_as_separate_passes():
    usual = _sample("qwen_image_qwen_image_bf16", 1328, 1328, None)
    assert usual["cfg"] is False and usual["latent"]["batch_in_model"] == 1
    assert any("separate passes" in a and "same token count" in a for a in usual["assumptions"])
    batched = _sample("qwen_image_qwen_image_bf16", 1328, 1328, True)               # --cfg: equal-length prompts
    assert batched["latent"]["batch_in_model"] == 2
    one = usual["breakdown"]["sample"]["activations"]
    two = batched["breakdown"]["sample"]["activations"]
    assert 1.9 < two / one < 2.0                                                         # the sampler state is per sample
    sd3 = _sample("sd3_sd3.5_medium", 1024, 1024, None)                                 # a family whose conds concatenate
    assert sd3["latent"]["batch_in_model"] == 2


def test_lumina2_and_z_image_read_as_nextdit_blocks():
    z = families.detect_family(layouts.table("z_image_z_image_turbo_bf16"))
    assert z["family"] == "z-image" and z["arch"]["block"] == "nextdit" and z["arch"]["ffn"] == 10240
    lumina = {"cap_embedder.1.weight": ("BF16", (2304, 2304)), "layers.0.feed_forward.w1.weight": ("BF16", (6144, 2304))}
    assert families.detect_family(lumina)["arch"]["block"] == "nextdit"
    q = families.detect_family(layouts.table("qwen_image_qwen_image_bf16"))
    assert q["family"] == "qwen-image" and q["arch"]["block"] == "dual" and q["arch"]["depth"] == 60


def test_qwen_image_decode_heuristic_reads_one_latent_frame():
    """ComfyUI hands Qwen-Image's image latent to its (Wan 2.1) VAE as [B, 16, 1, H, W]: memory_used_decode's
    2200-per-pixel branch (one frame, shape[2] <= 4), not the 7000 one a 4-D shape's H would pick."""
    from gpu_garden.memory.estimate import vae as V
    assert V.comfy_decode_heuristic("wan21", [4, 16, 128, 128], "bf16") == 2200 * 128 * 128 * 64 * 2 == 4_613_734_400
    # its OOM retry is decode_tiled_3d with 256 px tiles (dims = ndim - 2 = 3), not the image passes of 64 latent px
    assert V.tile_latent_shape("wan21", [1, 16, 128, 128], True) == [1, 16, 1, 32, 32]
    # batch 4 on an 80 GiB card: the diffusion model (~38.05 GiB bf16) stays loaded beside the VAE (fix66a,
    # vae_resident.py: 80 GiB - 450 MiB - 38.05 GiB = ~41.5 GiB free is over what the decode needs); no VAE file: its
    # weights not counted. 41.5 GiB over 4,613,734,400 B per sample = 9.66 -> all 4 at once (the 7000 branch,
    # 14,680,064,000 B: 3.04 -> 3 at a time)
    e = E.estimate(_dm("qwen_image_qwen_image_bf16"), 1024, 1024, 1, 4, policy={"_no_knobs": True, "budget": 80 << 30})
    assert e["vae"]["batch"] == 4
    assert e["breakdown"]["vae_decode"]["activations"] == 4 * e["vae"]["per_sample"]


def test_a_workflow_with_cfg_runs_qwen_image_as_separate_passes(tmp_path):
    """A graph's cfg > 1 says CFG is on, not how ComfyUI batches it: Qwen-Image's conds still run one per call, a
    family whose conds concatenate (SD3.5) is batched."""
    from gpu_garden.memory.estimate import workflow
    d = tmp_path / "models" / "diffusion_models"
    d.mkdir(parents=True)
    (tmp_path / "models" / "checkpoints").mkdir()
    layouts.write_sparse("qwen_image_qwen_image_bf16", d / "qwen_image_bf16.safetensors")
    layouts.write_sparse("sd3_sd3.5_medium", tmp_path / "models" / "checkpoints" / "sd3.5_medium.safetensors")

    def graph(loader, name):
        return {"1": {"class_type": loader, "inputs": {("unet_name" if loader == "UNETLoader" else "ckpt_name"): name}},
                "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
                "3": {"class_type": "KSampler", "inputs": {"cfg": 2.5, "model": ["1", 0], "latent_image": ["2", 0]}}}
    q = workflow.estimate_workflow(graph("UNETLoader", "qwen_image_bf16.safetensors"), tmp_path / "models")
    assert q["workflow"]["cfg_from_graph"] is True and q["family"] == "qwen-image"
    assert q["latent"]["batch_in_model"] == 1 and q["cfg"] is False
    assert any("the workflow's cfg" in a and "separate passes" in a for a in q["assumptions"])
    s = workflow.estimate_workflow(graph("CheckpointLoaderSimple", "sd3.5_medium.safetensors"), tmp_path / "models")
    assert s["family"] == "sd3" and s["latent"]["batch_in_model"] == 2 and s["cfg"] is True


def test_unpadded_encoders_run_cond_and_uncond_apart_in_comfyui_only():
    """spec cfg_separate "comfyui": PixArt's T5 (no padding), Z-Image's Qwen3, ... give contexts of the prompt's own
    length, which ComfyUI's CONDRegular does not concatenate; a diffusers pipeline pads and batches them itself."""
    pixart = {"t_block.1.weight": ("F16", (6912, 1152)), "x_embedder.proj.weight": ("F16", (1152, 4, 2, 2)),
              "blocks.0.attn.qkv.weight": ("F16", (3456, 1152))}
    def run(table, cfg, runner):
        return E.estimate(families.split_components(table), 1024, 1024, 1, 1, cfg=cfg,
                          policy={"_no_knobs": True, "runner": runner})["latent"]["batch_in_model"]
    assert families.detect_family(pixart)["family"] == "pixart"
    assert run(pixart, None, "comfyui") == 1 and run(pixart, None, "diffusers") == 2
    z = layouts.table("z_image_z_image_turbo_bf16")      # Turbo runs at cfg 1; a workflow's cfg > 1 turns CFG on
    assert run(z, None, "comfyui") == 1 and run(z, "on", "comfyui") == 1 and run(z, "on", "diffusers") == 2
    assert run(z, True, "comfyui") == 2                   # --cfg: batched as asked
