"""act65 (issue 15, the limit fix64b left): a smaller sampler's own diffusion-model activations. ComfyUI 0.8.0 runs one
sampler at a time (comfy/sample.py:57-60 -> comfy/samplers.py:983-998 outer_sample: sampler_helpers.prepare_sampling
loads that sampler's models for its own noise shape, cleanup_models after it), so the sample phase is the run of the
sampler that holds the most: the diffusion model's activations at THAT sampler's latent + its own ControlNets (weights,
residuals at its size). Before act65 it was the estimated size's activations + the largest ControlNet set: in a hires
fix (a 512 x 512 base pass with a ControlNet, a 1024 x 1024 second pass without) act(1024) + the base pass's
ControlNet, a sum no moment of the run holds.

The graphs are fix64b's hires fix (Qwen-Image, cfg 1, ups64 sizes the second pass: VAEDecode -> ImageScaleBy x2 ->
VAEEncode -> KSampler). Each expected figure is an estimate of a graph with ONE sampler (the pass alone, at its own
size, with its own ControlNet: the one-sampler path, unchanged by act65), never the code under test's per-sampler
figure. Every test but the two guards (exact mode, no ControlNet) failed on the code before act65 (checked on a git
archive of main); the guards pass on both."""
from gpu_garden.memory.estimate import workflow

from test_estimate_fix64 import A, SMALL, SMALL_BYTES
from test_estimate_fix64b import _hires
from test_estimate_wf66 import BF16, CNET, CNET_BYTES, _file, _qwen

# a ControlNet of twelve controlnet_blocks (width 3072, bf16): 12 x (3072 x 3072 + 3072) x 2 = 226,566,144 bytes; its
# residuals at 512 x 512 (1024 tokens), cfg 1: 12 x 3072 x 1024 x 1 x 2 = 75,497,472
HUGE = {**{f"controlnet_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(12)},
        **{f"controlnet_blocks.{i}.bias": (BF16, (3072,)) for i in range(12)}}
HUGE_BYTES, HUGE_RESIDUALS_512 = 226_566_144, 75_497_472
H = "cn_huge.safetensors (ControlNetLoader)"
FILES = {"cn_big.safetensors": CNET, "cn_small.safetensors": SMALL, "cn_huge.safetensors": HUGE}


def _models(tmp_path):
    d = _qwen(tmp_path / "models")
    for name, tensors in FILES.items():
        _file(d / "controlnet" / name, tensors)
    return d


def _one(d, size, cn=None, policy=None):
    """The pass alone: EmptySD3LatentImage size x size -> one KSampler (with ControlNet `cn` or none) -> decoded."""
    wf = _hires()
    for k in ("20", "21", "4", "6", "30"):
        wf.pop(k)
    wf["7"]["inputs"]["images"] = ["5", 0]
    wf["2"]["inputs"].update(width=size, height=size)
    if cn:
        wf["10"]["inputs"]["control_net_name"] = cn
    else:
        for k in ("10", "12"):
            wf.pop(k)
        wf["3"]["inputs"].update(positive=["1", 0], negative=["1", 0])
    return workflow.estimate_workflow(wf, d, policy=policy)


def _hires_with(d, base, second=None, policy=None):
    wf = _hires(second)
    wf["10"]["inputs"]["control_net_name"] = base
    return workflow.estimate_workflow(wf, d, policy=policy)


def _figures(e, phase="sample"):
    b = e["breakdown"][phase]
    return e["phases"][phase], b["weights"], b["activations"]


def test_second_pass_without_controlnet_is_the_peak(tmp_path):
    """The issue's case: ControlNet A on the 512 x 512 base pass, none on the 1024 x 1024 second pass. The base pass's
    run (act(512) 75,759,616 + A's 113,670,144 + its residuals 31,457,280, with 5 % on the activations) holds less
    than the second pass's (act(1024) 292,814,848 x 1.05): the sample phase is the second pass alone. The old code
    added A's weights and 512 residuals to act(1024): 113,670,144 + 31,457,280 x 1.05 more."""
    d = _models(tmp_path)
    got, second = _hires_with(d, "cn_big.safetensors"), _one(d, 1024)
    assert (got["width"], got["height"]) == (1024, 1024)
    assert _figures(got) == _figures(second)
    assert _figures(got, "sample_naive_attention") == _figures(second, "sample_naive_attention")
    assert "side_models" not in got["breakdown"]["sample"]  # A is not on the device in the second pass's run
    assert got["breakdown"]["sample"]["sampler"] == {"index": 1, "size": [1024, 1024], "batch": 1}
    assert any(x.startswith("2 samplers, run one at a time, each counted at its own latent with its own ControlNets "
                            f"(KSampler (node 3) at 512x512 with {A}; KSampler (node 4) at 1024x1024): the sample phase is "
                            "KSampler (node 4)'s run, the diffusion model's activations at 1024x1024 (no ControlNet)")
               for x in got["assumptions"]), got["assumptions"]
    assert not any(x.startswith("2 samplers, each with its own ControlNets") for x in got["assumptions"])  # said once


def test_base_pass_with_a_large_controlnet_is_the_peak(tmp_path):
    """A ControlNet of twelve blocks on the base pass: its run, act(512) + 226,566,144 + 75,497,472 of residuals
    (385,386,086 with the margin), holds more than the second pass's act(1024) (307,455,590): the sample phase is the
    base pass's, the diffusion model's activations at 512 x 512 (the old code: at 1024 x 1024, 217,055,232 more)."""
    d = _models(tmp_path)
    got, base = _hires_with(d, "cn_huge.safetensors"), _one(d, 512, "cn_huge.safetensors")
    assert (got["width"], got["height"]) == (1024, 1024)
    assert _figures(got) == _figures(base)
    assert got["breakdown"]["sample"]["side_models"] == {H: {"weights": HUGE_BYTES, "activations": HUGE_RESIDUALS_512}}
    assert got["breakdown"]["sample"]["sampler"] == {"index": 0, "size": [512, 512], "batch": 1}
    assert any(x.endswith("the sample phase is KSampler (node 3)'s run, the diffusion model's activations at 512x512 "
                          f"and its ControlNets' weights and residuals ({H})") for x in got["assumptions"])


def test_the_naive_attention_phase_takes_its_own_largest_run(tmp_path):
    """With the n x n scores held whole the 1024 x 1024 pass's scores (16x the 512 pass's) outweigh the huge
    ControlNet: sample_naive_attention is the second pass's run, while the sample phase is the base pass's."""
    d = _models(tmp_path)
    got, second = _hires_with(d, "cn_huge.safetensors"), _one(d, 1024)
    assert _figures(got, "sample_naive_attention") == _figures(second, "sample_naive_attention")
    assert got["breakdown"]["sample_naive_attention"]["sampler"]["index"] == 1
    assert got["breakdown"]["sample"]["sampler"]["index"] == 0


def test_second_pass_with_its_own_controlnet_is_the_peak(tmp_path):
    """A on the base pass, B on the second: act(1024) + B's weights and residuals at 1024 x 1024 is the larger run,
    the second pass's alone (the old code: act(1024) + A's set, chosen by the ControlNets' size alone)."""
    d = _models(tmp_path)
    got, second = _hires_with(d, "cn_big.safetensors", "cn_small.safetensors"), _one(d, 1024, "cn_small.safetensors")
    assert _figures(got) == _figures(second)
    assert second["breakdown"]["sample"]["weights"] - _one(d, 1024)["breakdown"]["sample"]["weights"] == SMALL_BYTES


def test_models_resident_keeps_both_sets_weights_and_the_larger_runs_activations(tmp_path):
    """--models resident: every ControlNet's weights stay on the device; the activations are the larger run's. Huge on
    the base pass (act(512) + 75,497,472), B on the second (act(1024) + 50,331,648): the second's, B's residuals at
    1024 x 1024 (the old code: huge's residuals, the larger, on act(1024))."""
    d = _models(tmp_path)
    pol = {"models": "resident"}
    got = _hires_with(d, "cn_huge.safetensors", "cn_small.safetensors", pol)
    second = _one(d, 1024, "cn_small.safetensors", pol)
    _, w, a = _figures(got)
    assert w == second["breakdown"]["sample"]["weights"] + HUGE_BYTES
    assert a == second["breakdown"]["sample"]["activations"]
    assert got["breakdown"]["sample"]["side_models"][H] == {"weights": HUGE_BYTES, "activations": 0}


def test_traced_activations_keep_every_sampler_at_the_traced_figure(tmp_path):
    """Exact mode (policy sample_activations: the loaded model's step traced at the estimated size) has no figure at
    another size: every sampler's activations are the traced ones and the set is chosen as before act65 (A's, at its
    512 x 512 residuals). A guard: it passes on the old code too."""
    d = _models(tmp_path)
    traced = 500_000_000
    got = _hires_with(d, "cn_big.safetensors", policy={"sample_activations": traced})
    assert got["breakdown"]["sample"]["activations"] == traced + 31_457_280
    assert got["breakdown"]["sample"]["side_models"][A]["weights"] == CNET_BYTES


def test_a_hires_fix_without_controlnets_keeps_the_second_passs_figures(tmp_path):
    """No ControlNet on either pass: the larger pass's run is the estimated size's, as before act65, and no line is
    added (a guard: it passes on the old code too)."""
    d = _qwen(tmp_path / "models")
    wf = _hires()
    for k in ("10", "12"):
        wf.pop(k)
    wf["3"]["inputs"].update(positive=["1", 0], negative=["1", 0])
    got, second = workflow.estimate_workflow(wf, d), _one(d, 1024)
    assert _figures(got) == _figures(second)
    assert not any("run one at a time" in x for x in got["assumptions"])
