"""diffusers keeps Stable Diffusion's safety checker on the device under both offloads: StableDiffusionPipeline sets
_exclude_from_cpu_offload = ["safety_checker"], and pipeline_utils' enable_model_cpu_offload and
enable_sequential_cpu_offload both call model.to(device) on such a component, with no hook (read at diffusers 58eb52c;
weights.DIFFUSERS_EXCLUDED_FROM_OFFLOAD). So its weights sit under every phase of an offloaded run, and it is not one
of the encoders that take turns. Bytes counted here from the shapes, not taken from the estimate: the checker's
303,981,588 fp16 parameters (bench_estimate.SYNTH); SD1.5's UNet, CLIP-L and VAE as the layout tables hold them; the
streamed layer of the UNet / CLIP-L under sequential offload is their largest matrix as the estimate's own
OFFLOAD_LAYERS rule says, so the sequential test compares against the same run without the checker."""
import sys
from pathlib import Path

from gpu_garden.memory.estimate import families, formula as E, layouts, weights as W

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

CHECKER = 303_981_588 * 2  # fp16


def _comps(checker=True, keyed=True):
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "sd1")
    if checker:
        t = B.synth("synth:sd-safety-checker")
        if not keyed:  # the same bytes without the checker's own concept embeddings: a plain CLIP vision tower
            t = {k.replace("concept_embeds", "x.proj").replace("special_care_embeds", "y.proj"): v for k, v in t.items()}
        comps += families.split_components(t, "synth:sd-safety-checker")
    return comps


def _est(policy, **kw):
    pol = {"_no_knobs": True, "runner": "diffusers", "vae_dtype": "fp16", "vae_decode": "untiled", "text_tokens": 77}
    pol.update(policy)
    return E.estimate(_comps(**kw), 512, 512, cfg=True, policy=pol)


def test_the_synth_checker_carries_its_concept_embeddings_inside_the_count():
    t = B.synth("synth:sd-safety-checker")
    assert t["concept_embeds"] == ("F16", (17, 768)) and t["special_care_embeds"] == ("F16", (3, 768))
    assert sum(B.math.prod(s) for _, s in t.values()) == 303_981_588
    assert W.diffusers_kept_on_device(t)
    assert not W.diffusers_kept_on_device(layouts.table("te_clip_l"))


def test_model_offload_keeps_the_checker_under_every_phase():
    e = _est({"models": "swap", "text_encoders": "unload"})
    bare = _est({"models": "swap", "text_encoders": "unload"}, checker=False)
    for ph in ("text_encode", "sample", "vae_decode"):
        assert e["breakdown"][ph]["weights"] - bare["breakdown"][ph]["weights"] == CHECKER, ph
    assert any("_exclude_from_cpu_offload" in a for a in e["assumptions"])
    assert e["weights"]["text_encoders"] - bare["weights"]["text_encoders"] == CHECKER  # still reported as loaded


def test_sequential_offload_keeps_the_checker_whole_not_streamed():
    e = _est({"offload": "sequential"})
    bare = _est({"offload": "sequential"}, checker=False)
    for ph in ("text_encode", "sample", "vae_decode"):
        assert e["breakdown"][ph]["weights"] - bare["breakdown"][ph]["weights"] == CHECKER, ph


def test_only_diffusers_and_only_the_checker_stay():
    # ComfyUI swaps every model; a CLIP vision tower without the checker's keys swaps like an encoder under diffusers
    for pol, kw in (({"models": "swap", "text_encoders": "unload", "runner": "comfyui"}, {}),
                    ({"models": "swap", "text_encoders": "unload"}, {"keyed": False})):
        e = _est(pol, **kw)
        bare = _est(pol, checker=False)
        assert e["breakdown"]["sample"]["weights"] == bare["breakdown"]["sample"]["weights"]
        assert not any("_exclude_from_cpu_offload" in a for a in e["assumptions"])


def test_resident_counts_the_checker_once():
    e = _est({"models": "resident", "text_encoders": "resident"})
    bare = _est({"models": "resident", "text_encoders": "resident"}, checker=False)
    assert e["breakdown"]["sample"]["weights"] - bare["breakdown"]["sample"]["weights"] == CHECKER
