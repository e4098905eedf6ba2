"""fix68m: review rev68g's findings on fix68g (issue 15), each checked against ComfyUI 0.8.0's source.

F1: reference images were summed over the whole graph, unlinked subgraph inputs counted: the Qwen-Image-Edit 2509
template read 6 references (24576 tokens) where ComfyUI's model call carries 1 (4096): the positive and the negative
run as separate conditionings, each with its own reference_latents (nodes_qwen.py:104), and an image input linked to
nothing is None (nodes_qwen.py:80-81)."""
import json
from pathlib import Path

import pytest

GiB = 2 ** 30
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


@pytest.fixture(scope="module")
def qwen_models(tmp_path_factory):
    from gpu_garden.memory.estimate import layouts
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("qwen_image_qwen_image_bf16", d / "diffusion_models" / "qwen_image_edit.safetensors")
    layouts.write_sparse("vae_wan_2.1_vae", d / "vae" / "qwen_image_vae.safetensors")
    return d


def _qwen_api(neg_image):
    """rev68g r1/qwen_pos_neg.py: a Qwen edit encoder for the positive and one for the negative."""
    def enc(img):
        return {"class_type": "TextEncodeQwenImageEditPlus",
                "inputs": {"clip": ["12", 0], "vae": ["2", 0], "prompt": "x", **({"image1": ["3", 0]} if img else {})}}
    return {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_image_edit.safetensors", "weight_dtype": "default"}},
            "2": {"class_type": "VAELoader", "inputs": {"vae_name": "qwen_image_vae.safetensors"}},
            "3": {"class_type": "LoadImage", "inputs": {"image": "a.png"}},
            "4": enc(True), "5": enc(neg_image),
            "8": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "9": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": ["4", 0], "negative": ["5", 0],
                                                       "latent_image": ["8", 0], "cfg": 4.0}},
            "10": {"class_type": "VAEDecode", "inputs": {"samples": ["9", 0], "vae": ["2", 0]}},
            "11": {"class_type": "SaveImage", "inputs": {"images": ["10", 0]}},
            "12": {"class_type": "CLIPLoader", "inputs": {"clip_name": "qwen_2.5_vl_7b.safetensors", "type": "qwen_image"}}}


@pytest.mark.parametrize("neg_image", [False, True])
def test_positive_and_negative_references_are_separate_calls(qwen_models, neg_image):
    """1024^2 output: 64 x 64 = 4096 image tokens; one reference per call (each conditioning's own, 4096 more) whether
    the negative's encoder has the image or not (old code: 12288 with both)."""
    from gpu_garden.memory.estimate import workflow
    est = workflow.estimate_workflow(_qwen_api(neg_image), qwen_models, policy={"budget": None})
    assert est["latent"]["image_tokens"] == 4096 + 4096
    assert any("1 reference image(s)" in a for a in est["assumptions"])


def test_chained_references_on_one_conditioning_add_up(qwen_models):
    """Two images on the positive's encoder, none on the negative's: 2 references in the positive's call, 8192 tokens
    beside the output's 4096."""
    from gpu_garden.memory.estimate import workflow
    wf = _qwen_api(False)
    wf["4"]["inputs"]["image2"] = ["3", 0]
    est = workflow.estimate_workflow(wf, qwen_models, policy={"budget": None})
    assert est["latent"]["image_tokens"] == 4096 + 8192


def test_guider_conditionings_are_separate_calls(qwen_models):
    """SamplerCustomAdvanced with a CFGGuider: its positive and negative are each a call (old code: 12288)."""
    from gpu_garden.memory.estimate import workflow
    wf = _qwen_api(True)
    wf["9"] = {"class_type": "SamplerCustomAdvanced", "inputs": {"guider": ["13", 0], "latent_image": ["8", 0]}}
    wf["13"] = {"class_type": "CFGGuider", "inputs": {"model": ["1", 0], "positive": ["4", 0], "negative": ["5", 0],
                                                     "cfg": 4.0}}
    est = workflow.estimate_workflow(wf, qwen_models, policy={"budget": None})
    assert est["latent"]["image_tokens"] == 4096 + 4096


def _ui_subgraph(linked_outer):
    """A UI workflow: a subgraph holding the sampler and a Qwen edit encoder whose image2 comes from the subgraph's
    input `image2`, linked outside to a LoadImage or not (linked_outer)."""
    sg = "aaaaaaaa-0000-4000-8000-000000000001"
    inner = [
        {"id": 1, "type": "UNETLoader", "mode": 0, "inputs": [], "outputs": [{"name": "MODEL", "type": "MODEL", "links": [11]}],
         "widgets_values": ["qwen_image_edit.safetensors", "default"]},
        {"id": 2, "type": "VAELoader", "mode": 0, "inputs": [], "outputs": [{"name": "VAE", "type": "VAE", "links": [12, 13]}],
         "widgets_values": ["qwen_image_vae.safetensors"]},
        {"id": 3, "type": "CLIPLoader", "mode": 0, "inputs": [], "outputs": [{"name": "CLIP", "type": "CLIP", "links": [14]}],
         "widgets_values": ["qwen_2.5_vl_7b.safetensors", "qwen_image", "default"]},
        {"id": 4, "type": "TextEncodeQwenImageEditPlus", "mode": 0,
         "inputs": [{"name": "clip", "type": "CLIP", "link": 14}, {"name": "vae", "type": "VAE", "link": 12},
                    {"name": "image1", "type": "IMAGE", "link": 15}, {"name": "image2", "type": "IMAGE", "link": 16},
                    {"name": "image3", "type": "IMAGE", "link": None}],
         "outputs": [{"name": "CONDITIONING", "type": "CONDITIONING", "links": [17]}], "widgets_values": ["x"]},
        {"id": 5, "type": "EmptySD3LatentImage", "mode": 0, "inputs": [],
         "outputs": [{"name": "LATENT", "type": "LATENT", "links": [18]}], "widgets_values": [1024, 1024, 1]},
        {"id": 6, "type": "KSampler", "mode": 0,
         "inputs": [{"name": "model", "type": "MODEL", "link": 11}, {"name": "positive", "type": "CONDITIONING", "link": 17},
                    {"name": "negative", "type": "CONDITIONING", "link": None},
                    {"name": "latent_image", "type": "LATENT", "link": 18}],
         "outputs": [{"name": "LATENT", "type": "LATENT", "links": [19]}],
         "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]},
        {"id": 7, "type": "VAEDecode", "mode": 0,
         "inputs": [{"name": "samples", "type": "LATENT", "link": 19}, {"name": "vae", "type": "VAE", "link": 13}],
         "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [20]}]}]
    ilinks = [{"id": 11, "origin_id": 1, "origin_slot": 0, "target_id": 6, "target_slot": 0, "type": "MODEL"},
              {"id": 12, "origin_id": 2, "origin_slot": 0, "target_id": 4, "target_slot": 1, "type": "VAE"},
              {"id": 13, "origin_id": 2, "origin_slot": 0, "target_id": 7, "target_slot": 1, "type": "VAE"},
              {"id": 14, "origin_id": 3, "origin_slot": 0, "target_id": 4, "target_slot": 0, "type": "CLIP"},
              {"id": 15, "origin_id": -10, "origin_slot": 0, "target_id": 4, "target_slot": 2, "type": "IMAGE"},
              {"id": 16, "origin_id": -10, "origin_slot": 1, "target_id": 4, "target_slot": 3, "type": "IMAGE"},
              {"id": 17, "origin_id": 4, "origin_slot": 0, "target_id": 6, "target_slot": 1, "type": "CONDITIONING"},
              {"id": 18, "origin_id": 5, "origin_slot": 0, "target_id": 6, "target_slot": 3, "type": "LATENT"},
              {"id": 19, "origin_id": 6, "origin_slot": 0, "target_id": 7, "target_slot": 0, "type": "LATENT"},
              {"id": 20, "origin_id": 7, "origin_slot": 0, "target_id": -20, "target_slot": 0, "type": "IMAGE"}]
    defn = {"id": sg, "name": "edit", "nodes": inner, "links": ilinks,
            "inputs": [{"name": "image", "type": "IMAGE", "linkIds": [15]}, {"name": "image2", "type": "IMAGE", "linkIds": [16]}],
            "outputs": [{"name": "IMAGE", "type": "IMAGE", "linkIds": [20]}]}
    top_links = [[1, 10, 0, 12, 0, "IMAGE"], [3, 12, 0, 13, 0, "IMAGE"]] + ([[2, 11, 0, 12, 1, "IMAGE"]] if linked_outer else [])
    nodes = [{"id": 10, "type": "LoadImage", "mode": 0, "inputs": [],
              "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [1]}], "widgets_values": ["a.png", "image"]},
             {"id": 11, "type": "LoadImage", "mode": 0, "inputs": [],
              "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [2] if linked_outer else []}],
              "widgets_values": ["b.png", "image"]},
             {"id": 12, "type": sg, "mode": 0,
              "inputs": [{"name": "image", "type": "IMAGE", "link": 1},
                         {"name": "image2", "type": "IMAGE", "link": 2 if linked_outer else None}],
              "outputs": [{"name": "IMAGE", "type": "IMAGE", "links": [3]}]},
             {"id": 13, "type": "SaveImage", "mode": 0, "inputs": [{"name": "images", "type": "IMAGE", "link": 3}],
              "outputs": [], "widgets_values": ["out"]}]
    return {"nodes": nodes, "links": top_links, "definitions": {"subgraphs": [defn]}, "version": 0.4}


@pytest.mark.parametrize("linked_outer,mode,refs", [(False, 0, 1), (True, 0, 2), (True, 4, 1), (True, 2, 1)])
def test_unlinked_subgraph_image_input_adds_no_reference(qwen_models, linked_outer, mode, refs):
    """The 2509 template's form: image2 from a subgraph input linked to nothing outside adds no reference (old code:
    2); linked to a LoadImage, it does; to a bypassed (4) or muted (2) LoadImage, not (02_qwen_Image_edit_subgraphed:
    the frontend leaves the input out of the prompt)."""
    from gpu_garden.memory.estimate import workflow
    wf = _ui_subgraph(linked_outer)
    wf["nodes"][1]["mode"] = mode
    est = workflow.estimate_workflow(wf, qwen_models, policy={"budget": None})
    assert est["latent"]["image_tokens"] == 4096 + 4096 * refs


# F2: a VAE sized by ComfyUI's formula alone (vae_untraced.formula_only) still got VAE Decode's tiled retry in the
# whole estimate (phase_peaks' retry row, verdict.as_run): rev68g r1/mochi.py, Mochi 848x480x85 on 24/32/40 GiB said
# "RUNS TILED". The retry is not claimed from the formula: the decode is counted untiled, the tiled figure shown.
def _mochi():
    from gpu_garden.memory.estimate import families
    t = {"t5_yproj.weight": ("BF16", (1536, 4096)), "x_embedder.proj.weight": ("BF16", (3072, 12, 2, 2))}
    for i in range(48):
        t[f"blocks.{i}.mlp_x.w1.weight"] = ("BF16", (16384, 3072))
        t[f"blocks.{i}.mlp_x.w2.weight"] = ("BF16", (3072, 8192))
    return families.split_components(t, "mochi")


@pytest.mark.parametrize("gib", [24, 32, 40])
def test_formula_only_vae_whole_estimate_claims_no_tiled_retry(gib):
    from gpu_garden.memory.estimate import formula, report
    est = formula.estimate(_mochi(), 848, 480, 85, 1, cfg=True, policy={"budget": gib * GiB})
    assert not est.get("tiled_retry")
    assert est["outcome"]["status"] != "runs tiled"
    assert est["phases"]["vae_decode"] > 60 * GiB  # counted untiled: the formula's 68.24 GiB per sample
    text = report.format_text(est, f"{gib} GiB")
    assert "RUNS TILED" not in text and "tiled retry" not in text


# F3: the partial offload offer was hidden only on "fits": rev68g r1/wan22_13.txt, Wan 2.2 5B 1280x704x121 on 13 GiB
# RUNS TILED and still offered "partial offload of the diffusion model ... fits". Offered only where it does not fit.
WAN22_121 = ["wan2.2", "--width", "1280", "--height", "704", "--frames", "121", "--dynamic-vram", "off", "--ram", "64"]


@pytest.mark.parametrize("vram,verdict", [("13", "RUNS TILED"), ("12.75", "TIGHT")])
def test_no_partial_offload_offer_when_the_run_fits(capsys, vram, verdict):
    from support.cli_run import estimate
    _, out, _ = estimate(capsys, *WAN22_121, "--vram", vram)
    assert f"verdict: {verdict}" in out
    assert "partial offload of the diffusion model" not in out


def test_partial_offload_still_offered_when_it_does_not_fit(capsys):
    from support.cli_run import estimate
    _, out, _ = estimate(capsys, "flux1-dev", "--vram", "2", "--ram", "64", "--dynamic-vram", "off")
    assert "verdict: DOES NOT FIT" in out and "partial offload of the diffusion model" in out


# F3b: --ref-images on a family whose model takes no reference latents (rev68g r1/sdxl_ref.txt: SDXL 16384 -> 49152
# image tokens with --ref-images 2). Only Flux (FLUX.2 its subclass), Qwen-Image and Omnigen2 take them as ref_latents
# (comfy/model_base.py:903-919, 1507, 1532): nothing added, a line says so.
@pytest.mark.parametrize("model", ["sdxl", "wan2.1"])
def test_ref_images_on_a_family_without_reference_latents_add_nothing(capsys, model):
    from support.cli_run import estimate
    _, plain, _ = estimate(capsys, model, "--json")
    _, js, _ = estimate(capsys, model, "--ref-images", "2", "--json")
    p, d = json.loads(plain), json.loads(js)
    assert d["latent"]["image_tokens"] == p["latent"]["image_tokens"]
    assert d["phases"]["sample"] == p["phases"]["sample"]
    assert any("2 reference image(s) not counted" in a for a in d["assumptions"])


def test_ref_images_still_counted_on_flux():
    from gpu_garden.memory.estimate import ref_latents
    assert ref_latents.tokens("flux1", [(None, None, "--ref-images")], 1024, 1024)[0] == 4096


def test_ref_images_on_an_unknown_family_still_counted():
    """A model the estimate does not recognise (the Omnigen2 edit template) may take them: counted as before."""
    from gpu_garden.memory.estimate import ref_latents
    assert ref_latents.tokens("unknown", [(None, None, "x")], 1024, 1024)[0] > 0


def test_a_long_conditioning_chain_up_the_guider_is_walked_once_per_branch(qwen_models, monkeypatch):
    """rev68h #1: every node up a CFGGuider's input was walked again from each of its inputs: quadratic in a chain of
    conditioning nodes (4000 ConditioningZeroOut: 18 s, inside ComfyUI's estimate route). Now only the guider's own
    inputs are branches: the walks stay a handful whatever the chain's length (old code: one per node, 600+)."""
    from gpu_garden.memory.estimate import ref_branches, workflow
    wf = _qwen_api(True)
    wf["9"] = {"class_type": "SamplerCustomAdvanced", "inputs": {"guider": ["13", 0], "latent_image": ["8", 0]}}
    prev = "4"
    for i in range(300):
        k = str(1000 + i)
        wf[k] = {"class_type": "ConditioningZeroOut", "inputs": {"conditioning": [prev, 0]}}
        prev = k
    wf["13"] = {"class_type": "CFGGuider", "inputs": {"model": ["1", 0], "positive": [prev, 0], "negative": ["5", 0],
                                                     "cfg": 4.0}}
    calls = []
    walk = ref_branches._walk
    monkeypatch.setattr(ref_branches, "_walk", lambda *a: calls.append(1) or walk(*a))
    est = workflow.estimate_workflow(wf, qwen_models, policy={"budget": None})
    assert len(calls) <= 5
    assert est["latent"]["image_tokens"] == 4096 + 4096  # ZeroOut keeps its input's reference: still one per call
