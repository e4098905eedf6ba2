"""fix65 (rev65a #1 and #4): each sampler's run at its own batch, and the per-sampler figure's untested parts.

#1: ComfyUI sizes each sampler's run on its own noise shape, batch included (comfy/samplers.py:984 outer_sample ->
prepare_sampling(noise.shape) -> comfy/sampler_helpers.py:137 estimate_memory, l.121 memory_required([noise_shape[0] *
2] + ...)), so a graph's
sample phase can be no lower than any of its samplers' runs estimated alone. Before fix65 control_feeds.latents
dropped the batch its latent node sets and every sampler ran at the estimate's batch: two branches (1024 x 1024 batch
1 without ControlNet, 720 x 720 batch 2 with a twelve-block one) counted the second branch's run at batch 1. A
sampler whose run is larger than the estimated size's (more tokens or a larger batch) was counted at the estimated
size; now it is counted at its own.
#4: the run of an offloaded layer / swapped block in flight (`held`) in the per-sampler figure, and the allocator
margin on the diffusion model's activations when two runs are compared, were not caught by any test.

Every expected figure is an estimate of a graph with ONE sampler (that branch alone: the one-sampler path), never the
per-sampler figure of the code under test. The graphs are rev65a's reproductions (/tmp/rev65a/test_batch.py,
test_policies.py, test_howline.py) made real tests: Qwen-Image, cfg 1."""
import pytest

from gpu_garden.memory.estimate import workflow

from test_estimate_act65 import HUGE, _hires_with, _one
from test_estimate_wf66 import _file, _qwen

H = "cn_huge.safetensors (ControlNetLoader)"


def _models(tmp_path):
    d = _qwen(tmp_path / "models")
    _file(d / "controlnet" / "cn_huge.safetensors", HUGE)
    return d


def _branch(size, batch, cn):
    """One branch: EmptySD3LatentImage size x size (batch) -> KSampler (with the twelve-block ControlNet, or none) ->
    decoded, saved. Node ids are the branch's size, so two branches join into one graph."""
    k = str(size * 10 + batch)
    pos = [k + "30", 0]
    wf = {k + "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": size, "height": size, "batch_size": batch}},
          k + "30": {"class_type": "CLIPTextEncode", "inputs": {"text": "x"}},
          k + "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": pos, "negative": pos,
                    "latent_image": [k + "2", 0], "seed": 1, "steps": 20, "cfg": 1.0, "sampler_name": "euler",
                    "scheduler": "simple", "denoise": 1.0}},
          k + "5": {"class_type": "VAEDecode", "inputs": {"samples": [k + "3", 0]}},
          k + "7": {"class_type": "SaveImage", "inputs": {"images": [k + "5", 0], "filename_prefix": k}}}
    if cn:
        wf[k + "10"] = {"class_type": "ControlNetLoader", "inputs": {"control_net_name": "cn_huge.safetensors"}}
        wf[k + "12"] = {"class_type": "ControlNetApplyAdvanced", "inputs": {
            "control_net": [k + "10", 0], "positive": pos, "negative": pos, "strength": 1.0, "start_percent": 0.0,
            "end_percent": 1.0}}
        wf[k + "3"]["inputs"].update(positive=[k + "12", 0], negative=[k + "12", 1])
    return wf


def _graph(*branches, policy=None, d=None, **typed):
    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_dm.safetensors", "weight_dtype": "default"}}}
    for b in branches:
        wf.update(_branch(*b))
    return workflow.estimate_workflow(wf, d, policy=policy, **typed)


def _figures(e, phase="sample"):
    b = e["breakdown"][phase]
    return e["phases"][phase], b["weights"], b["activations"]


def _larger(*alone, phase="sample"):
    return _figures(max(alone, key=lambda e: e["phases"][phase]), phase)


@pytest.mark.parametrize("small", [(720, 2), (360, 8)], ids=["720x720 batch 2", "360x360 batch 8"])
def test_a_smaller_latent_with_a_larger_batch_runs_at_its_own_batch(tmp_path, small):
    """rev65a's reproduction: 1024 x 1024 batch 1 (no ControlNet) and size x size batch B with the twelve-block
    ControlNet (w x h x b under 1024 x 1024: the estimate is at 1024 x 1024 batch 1). The graph's sample phase is the
    larger branch's run alone; before fix65 the second branch's run was counted at batch 1 (its activations 2x, 8x
    under: 295.8 M against 591.6 M alone at 720 x 720 batch 2)."""
    d = _models(tmp_path)
    got = _graph((1024, 1, False), (*small, True), d=d)
    big, second = _graph((1024, 1, False), d=d), _graph((*small, True), d=d)
    assert (got["width"], got["height"], got["batch"]) == (1024, 1024, 1)
    for phase in ("sample", "sample_naive_attention"):
        assert _figures(got, phase) == _larger(big, second, phase=phase), phase
    assert _figures(got) == _figures(second)  # the second branch's run: more than the first's (a 226 MB ControlNet)
    assert got["breakdown"]["sample"]["sampler"] == {"index": 1, "size": list(small[:1] * 2), "batch": small[1]}
    assert got["breakdown"]["sample"]["side_models"] == second["breakdown"]["sample"]["side_models"]
    line = next(x for x in got["assumptions"] if x.startswith("2 samplers, run one at a time"))
    assert f"at {small[0]}x{small[0]}, batch {small[1]} with {H}" in line, line


def test_cfg_batches_each_samplers_own_batch(tmp_path):
    """cfg on, cond and uncond batched (x2, --cfg): the second branch's run is its batch 2 x 2 in the model, its
    ControlNet's residuals too, as that branch estimated alone (the CFG factor is the estimate's, applied to each
    sampler's batch)."""
    d = _models(tmp_path)
    got = _graph((1024, 1, False), (720, 2, True), d=d, cfg=True)
    big, second = _graph((1024, 1, False), d=d, cfg=True), _graph((720, 2, True), d=d, cfg=True)
    assert second["latent"]["batch_in_model"] == 4
    for phase in ("sample", "sample_naive_attention"):
        assert _figures(got, phase) == _larger(big, second, phase=phase), phase
    assert got["breakdown"]["sample"]["side_models"] == second["breakdown"]["sample"]["side_models"]


def test_a_typed_batch_is_every_samplers_batch(tmp_path):
    """--batch 3 overrides every latent node's batch: each branch runs at batch 3, at its own size (a guard: the
    estimate's batch was every sampler's before fix65 too)."""
    d = _models(tmp_path)
    got = _graph((1024, 1, False), (720, 2, True), d=d, batch=3)
    big, second = _graph((1024, 1, False), d=d, batch=3), _graph((720, 2, True), d=d, batch=3)
    assert got["batch"] == 3
    for phase in ("sample", "sample_naive_attention"):
        assert _figures(got, phase) == _larger(big, second, phase=phase), phase


def test_a_sampler_with_more_tokens_than_the_estimate_is_counted_at_its_own_size(tmp_path):
    """720 x 720 batch 4 (the estimated size: w x h x b the largest) and 1024 x 1024 batch 1 with the ControlNet: the
    second run has more tokens than the estimated size. Each is counted at its own size, the larger run is the phase
    (before fix65 the 1024 x 1024 run was counted at 720 x 720 batch 4)."""
    d = _models(tmp_path)
    got = _graph((720, 4, False), (1024, 1, True), d=d)
    a, b = _graph((720, 4, False), d=d), _graph((1024, 1, True), d=d)
    assert (got["width"], got["height"], got["batch"]) == (720, 720, 4)
    for phase in ("sample", "sample_naive_attention"):
        assert _figures(got, phase) == _larger(a, b, phase=phase), phase


@pytest.mark.parametrize("pol", [{}, {"attention": "math"}, {"attention_mask": "dense"}, {"offload_bytes": 8 << 30},
                                 {"block_swap": 20}, {"offload": "sequential"}, {"models": "resident"}],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
def test_a_hires_fix_is_its_larger_pass_under_every_policy(tmp_path, pol):
    """rev65a #4 (its test_policies.py): the hires fix (512 x 512 base pass with the twelve-block ControlNet, 1024 x
    1024 second pass without) under each policy is the larger pass estimated alone. Catches the per-sampler figure
    leaving out `held` (the offloaded layer or swapped block in flight: offload_bytes, block_swap, sequential)."""
    d = _models(tmp_path)
    got = _hires_with(d, "cn_huge.safetensors", policy=dict(pol))
    a, b = _one(d, 512, "cn_huge.safetensors", dict(pol)), _one(d, 1024, None, dict(pol))
    for phase in ("sample", "sample_naive_attention"):
        g = got["breakdown"][phase]["activations"]
        assert g in (a["breakdown"][phase]["activations"], b["breakdown"][phase]["activations"]), phase
        if not pol.get("models"):  # resident: every ControlNet's weights stay, not a one-pass graph's figure
            assert got["phases"][phase] == max(a["phases"][phase], b["phases"][phase]), phase


def test_runs_are_compared_with_the_margin_on_the_models_activations(tmp_path):
    """512 x 512 with the twelve-block ControlNet against 1152 x 1152 without: alone, the second's run is the larger
    (369,688,576 x 1.05 = 388,173,004 against 151,257,088 x 1.05 + 226,566,144 = 385,386,086). Compared without the
    5 % margin on the diffusion model's activations (75,759,616 at 512, 369,688,576 at 1152) the first would win
    (75,759,616 + 226,566,144 + 75,497,472 x 1.05 = 381,598,105 against 369,688,576) and the phase would be 2,786,918
    under the second run alone (rev65a #4: that mutation passed every test before fix65; this test fails on it)."""
    d = _models(tmp_path)
    got = _graph((512, 1, True), (1152, 1, False), d=d)
    a, b = _graph((512, 1, True), d=d), _graph((1152, 1, False), d=d)
    assert b["phases"]["sample"] > a["phases"]["sample"]
    assert _figures(got) == _figures(b)
    assert got["breakdown"]["sample"]["sampler"]["index"] == 1


def test_the_sample_line_names_the_counted_runs_tokens(tmp_path):
    """rev65a's minor point (its test_howline.py): where the base pass's run is the sample phase (the twelve-block
    ControlNet on the 512 x 512 pass), the "sample: ..." line names that run's tokens (the 512 x 512 pass alone's
    line), not the estimated 1024 x 1024's."""
    d = _models(tmp_path)
    got, base = _hires_with(d, "cn_huge.safetensors"), _one(d, 512, "cn_huge.safetensors")
    assert got["breakdown"]["sample"]["sampler"]["index"] == 0
    want = next(x for x in base["assumptions"] if x.startswith("sample: "))
    line = next(x for x in got["assumptions"] if x.startswith("sample: "))
    assert line.startswith(want), (line, want)
