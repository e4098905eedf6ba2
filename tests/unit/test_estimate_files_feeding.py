"""The loaders feeding a node in a queued (API-format) prompt (workflow.files_feeding): the Footprint Estimate and Fit
to Card nodes judge host RAM per file from the files of their own models only. A second branch of the same prompt
(an SD1.5 .ckpt upscale pass, a disconnected group) loads other models: its .ckpt must not make the FLUX DiT's
.safetensors anonymous memory. Expected values are hand sums of the FLUX.1-dev files' bytes as loaded."""
from gpu_garden.memory.estimate import families, formula as E, layouts, verdict as V, workflow as W
from gpu_garden.memory.units import GiB as G

FLUX = {  # FLUX.1-dev, a LoRA and a sampling patch between the loader and the node
    "1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.safetensors", "weight_dtype": "default"}},
    "2": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "t5xxl_fp16.safetensors", "clip_name2": "clip_l.safetensors",
                                                    "type": "flux"}},
    "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
    "4": {"class_type": "LoraLoaderModelOnly", "inputs": {"model": ["1", 0], "lora_name": "detail.safetensors", "strength_model": 1.0}},
    "5": {"class_type": "ModelSamplingFlux", "inputs": {"model": ["4", 0], "max_shift": 1.15, "base_shift": 0.5,
                                                       "width": 1024, "height": 1024}},
    "6": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
    "9": {"class_type": "GPUGardenFootprintEstimate", "inputs": {"model": ["5", 0], "clip": ["2", 0], "vae": ["3", 0],
                                                                 "latent": ["6", 0]}},
}
OTHER = {  # another branch: an SD1.5 checkpoint read by torch.load, decoding with the FLUX VAE's output unrelated
    "20": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "v1-5-pruned-emaonly.ckpt"}},
    "21": {"class_type": "KSampler", "inputs": {"model": ["20", 0], "latent_image": ["6", 0], "cfg": 7.0}},
}
OWN = {"diffusion_model": ["flux1-dev.safetensors"], "text_encoder": ["t5xxl_fp16.safetensors", "clip_l.safetensors"],
       "vae": ["ae.safetensors"]}


def test_only_the_loaders_upstream_of_the_node_count():
    assert W.files_feeding(FLUX, "9") == OWN  # through the LoRA and the patch; the LoRA file is not a model's
    assert W.files_feeding(dict(FLUX, **OTHER), "9") == OWN  # the other branch's .ckpt is not read
    assert W.files_feeding(dict(FLUX, **OTHER), "21") == {r: ["v1-5-pruned-emaonly.ckpt"] for r in OWN}
    assert W.files_feeding(FLUX, 9) == OWN  # ComfyUI's ids are strings; an int id names the same node
    only_model = dict(FLUX, **{"9": {"class_type": "X", "inputs": {"model": ["5", 0], "latent": ["6", 0]}}})
    assert W.files_feeding(only_model, "9") == {"diffusion_model": ["flux1-dev.safetensors"]}


def test_no_node_or_no_links_is_empty_not_the_whole_prompt():
    for node in (None, "99", "1"):
        assert W.files_feeding(dict(FLUX, **OTHER), node) == {}
    assert W.files_feeding({"9": {"class_type": "X", "inputs": {"model": ["404", 0]}}}, "9") == {}
    assert W.files_feeding({"9": {"class_type": "X", "inputs": "odd"}}, "9") == {}


def test_a_cycle_or_a_long_chain_ends():
    """Links are walked each node once: a cycle ends, a 50 000-node chain is read without recursion."""
    loop = {"1": {"class_type": "A", "inputs": {"model": ["2", 0]}}, "2": {"class_type": "B", "inputs": {"model": ["1", 0]}},
            "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.sft"}}}
    loop["1"]["inputs"]["vae"] = ["3", 0]
    assert W.files_feeding(loop, "1") == {"vae": ["ae.sft"]}
    n = 50000
    chain = {str(i): {"class_type": "P", "inputs": {"model": [str(i + 1), 0]}} for i in range(n)}
    chain[str(n)] = FLUX["1"]
    assert W.files_feeding(chain, "0") == {"diffusion_model": ["flux1-dev.safetensors"]}


def _flux():
    out = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        out += families.split_components(layouts.table(n), n)
    return out


def test_an_unrelated_ckpt_does_not_flip_the_verdict():
    """80 GiB, Dynamic VRAM, mapped files, 16 GiB RAM: every file of the FLUX run is a .safetensors, so the
    33741198278 B of CPU copies (23802816640 + 9524621312 + 246120960 + 167639366) are file pages: hard need 0,
    fits (slower). With every loader of the prompt read the SD1.5 .ckpt made all three roles anonymous: does not fit."""
    pol = {"dynamic_vram": "on", "weights_mmap": "on", "budget": 80 * G, "host_ram": 16 * G,
           "files": W.files_feeding(dict(FLUX, **OTHER), "9")}
    est = E.judge(E.estimate(_flux(), 1024, 1024, cfg=False, policy=pol), 80 * G)
    r = est["host_ram"]
    assert (r["needed"], r["file_backed"], r["hard_need"]) == (33741198278, 33741198278, 0)
    assert est["outcome"]["status"] == "fits" and V.exit_code(est) == 0


def test_every_loader_folder_has_roles():
    """files_by_role reads FOLDER_ROLES[folder]: a loader added with a new folder would raise KeyError there, which
    the nodes' prompt_files swallows (host RAM then per the policy, silently)."""
    assert {f for specs in W.LOADERS.values() for _, folders in specs for f in folders} <= set(W.FOLDER_ROLES)
