"""Host RAM's file-backed test per file, from the loaders' file names: a queued prompt (the Footprint Estimate and Fit
to Card nodes) or a workflow names which file each model was read from. With Dynamic VRAM and mapped files a
.safetensors model's CPU copy is the file's pages (slower when short), a .ckpt / .pt is read by torch.load (comfy/utils.py
load_torch_file: anonymous, a hard need). The estimate (host_ram.host_ram) and Fit to Card (plan) decide it by one
function, host_ram.mapped_split. Expected values are hand sums of the FLUX.1-dev files' bytes as loaded."""
import importlib
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import families, formula as E, host_ram as H, layouts, workflow as W
from gpu_garden.memory.fit import plan as P
from gpu_garden.memory.units import GiB

G = GiB
DIT, T5, CLIP_L, AE = 23802816640, 9524621312, 246120960, 167639366
PROMPT = {  # API format, as ComfyUI queues it (a FLUX.1-dev graph with its DiT saved as a .ckpt)
    "1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.ckpt", "weight_dtype": "default"}},
    "2": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "t5xxl_fp16.safetensors", "clip_name2": "clip_l.safetensors",
                                                    "type": "flux"}},
    "3": {"class_type": "VAELoader", "inputs": {"vae_name": "ae.safetensors"}},
    "4": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "cfg": 1.0}},
}


def _flux():
    out = []
    for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae"):
        out += families.split_components(layouts.table(n), n)  # sources without an extension: as the policy says
    return out


def test_files_by_role_reads_the_loaders():
    assert W.files_by_role(PROMPT) == {"diffusion_model": ["flux1-dev.ckpt"], "vae": ["ae.safetensors"],
                                       "text_encoder": ["t5xxl_fp16.safetensors", "clip_l.safetensors"]}
    ckpt = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.ckpt"}}}
    assert W.files_by_role(ckpt) == {r: ["sd15.ckpt"] for r in ("diffusion_model", "text_encoder", "vae")}


def _est(files, ram=16 * G):
    pol = {"dynamic_vram": "on", "weights_mmap": "on", "budget": 80 * G, "host_ram": ram, "files": files}
    return E.estimate(_flux(), 1024, 1024, cfg=False, policy=pol)


def test_the_estimate_reads_the_prompt_files():
    """80 GiB, Dynamic VRAM, mapped files, 16 GiB RAM: every weight's CPU copy stays, 23802816640 + 9524621312 +
    246120960 + 167639366 = 33741198278 B. Without file names all of it is file pages (hard need 0: slower). The prompt's
    DiT is a .ckpt: its 23802816640 B are anonymous, over 16 GiB: does not fit; the rest, 9938381638 B, file-backed."""
    r = _est({})["host_ram"]
    assert (r["needed"], r["file_backed"], r["hard_need"]) == (33741198278, 33741198278, 0)
    assert r["verdict"].startswith("slower")
    r = _est(W.files_by_role(PROMPT))["host_ram"]
    assert (r["needed"], r["file_backed"], r["hard_need"]) == (33741198278, T5 + CLIP_L + AE, DIT)
    assert (r["file_backed"], r["hard_need"]) == (9938381638, 23802816640)
    assert H.ram_short(r)
    # one .pt among the text encoders' files: the role is a hard need (its split per file is not known to the plan)
    r = _est({"text_encoder": ["t5xxl_fp16.safetensors", "clip_l.pt"]})["host_ram"]
    assert (r["file_backed"], r["hard_need"]) == (DIT + AE, T5 + CLIP_L) == (23970456006, 9770742272)


def test_fit_to_card_reads_the_same_files():
    """plan(files=...) on the same run: DiT, encoders and VAE all stay (80 GiB: the encoders stay beside the DiT, the VAE
    is kept for reload), so the DiT's .ckpt bytes are the hard need in both, and both say short on 16 GiB."""
    files = W.files_by_role(PROMPT)
    est = _est(files)["host_ram"]
    p = P.plan(80 * G, weights={"diffusion_model": DIT, "text_encoders": T5 + CLIP_L, "vae": AE}, memory_required=2 * G,
               context=G // 2, host_ram=16 * G, dynamic_vram=True, ram_policy={"weights_mmap": "on"}, files=files)
    r = p["host_ram"]
    assert (r["needed"], r["file_backed"], r["hard_need"]) == (33741198278, 9938381638, 23802816640)
    assert (r["file_backed"], r["hard_need"], r["verdict"]) == (est["file_backed"], est["hard_need"], est["verdict"])
    assert p["host_ram_short"] is True and p["fits"] is False
    safe = P.plan(80 * G, weights={"diffusion_model": DIT, "text_encoders": T5 + CLIP_L, "vae": AE}, memory_required=2 * G,
                  context=G // 2, host_ram=16 * G, dynamic_vram=True, ram_policy={"weights_mmap": "on"},
                  files=dict(files, diffusion_model=["flux1-dev.safetensors"]))
    assert (safe["host_ram"]["hard_need"], safe["host_ram_short"]) == (0, False)


STUBS = Path(__file__).parent / "stubs"


def test_node_prompt_files(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    node = importlib.import_module("gpu_garden.nodes.estimate")
    assert node.prompt_files(PROMPT, "4")["diffusion_model"] == ["flux1-dev.ckpt"]  # the KSampler's model only
    assert node.prompt_files(PROMPT, "4") == {"diffusion_model": ["flux1-dev.ckpt"]}
    assert node.prompt_files(PROMPT, None) == {}  # no node id: as the policy says, not the whole prompt
    assert node.prompt_files(None, "4") == {} and node.prompt_files({}, "4") == {} and node.prompt_files({"x": 1}, "x") == {}


def test_only_safetensors_sft_and_gguf_are_mapped():
    """comfy/utils.py load_torch_file (ComfyUI 0.8.0): .safetensors / .sft (any case) to safetensors, every other
    file of folder_paths.supported_pt_extensions to torch.load; ComfyUI-GGUF reads a .gguf through np.memmap. A name
    that is no model file's (a layout, a node's model title) is as the policy says."""
    mapped = {n: H.mapped_file(n, True) for n in ("a.safetensors", "a.sft", "A.SFT", "a.gguf", "a.ckpt", "a.CKPT", "a.pt",
                                                  "a.pt2", "a.pth", "a.bin", "a.pkl", "sd3_sd3.5_medium", "flux_flux1-dev", "")}
    assert [n for n, m in mapped.items() if m] == ["a.safetensors", "a.sft", "A.SFT", "a.gguf", "sd3_sd3.5_medium",
                                                    "flux_flux1-dev", ""]
    assert not any(H.mapped_file(n, False) for n in mapped)  # a loader that maps nothing maps no file
    # a .pkl DiT is a hard need, as a .ckpt is
    r = _est({"diffusion_model": ["flux1-dev.pkl"]})["host_ram"]
    assert (r["file_backed"], r["hard_need"]) == (T5 + CLIP_L + AE, DIT)
