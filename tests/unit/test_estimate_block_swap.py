"""Block swap (ComfyUI-WanVideoWrapper's blocks_to_swap: the last N numbered blocks stay on the offload device and each
is moved onto the device only while it runs): the device holds the non-block weights, the blocks not swapped and one
whole block in flight. The expected bytes are written out from Wan2.1-T2V-1.3B's block layout (dim 1536, ffn 8960,
fp16); swapping one block too few, or counting one streamed layer or nothing in flight, breaks a test."""
import argparse

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, report

D, FFN = 1536, 8960
ATTN = 4 * (D * D + D) + 2 * D  # q, k, v, o with biases + norm_q, norm_k
BLOCK = 2 * (2 * ATTN + 2 * D + (D * FFN + FFN + FFN * D + D) + 6 * D)  # + norm3, ffn, modulation; fp16 bytes
WAN13B = 2 * 1_418_996_800


def _wan():
    n = "wan_wan2.1_t2v_1.3B_fp16"
    return families.split_components(layouts.table(n), n)


def _sample(**pol):
    e = E.estimate(_wan(), 832, 480, 33, 1, cfg=False, policy={"_no_knobs": True, **pol})
    return e, e["breakdown"]["sample"]


def test_swapped_blocks_leave_and_one_block_is_in_flight():
    _, plain = _sample()
    e, bd = _sample(block_swap=10)
    assert plain["weights"] == WAN13B
    assert bd["weights"] == WAN13B - 10 * BLOCK
    assert bd["activations"] - plain["activations"] == BLOCK
    assert any("block swap: 10 of 30 blocks" in a for a in e["assumptions"])
    _, none = _sample(block_swap=0)
    assert none["weights"] == WAN13B and none["activations"] == plain["activations"]
    _, every = _sample(block_swap=30)
    assert every["weights"] == WAN13B - 30 * BLOCK


def test_bad_block_swap_is_a_clear_error():
    with pytest.raises(UserError, match="30 numbered blocks"):
        _sample(block_swap=31)
    with pytest.raises(UserError, match="not both"):
        _sample(block_swap=5, offload_bytes=1 << 30)
    n = "wan_wan2.1_t2v_1.3B_fp16"  # the same weights with keys that number no blocks
    flat = {k.replace("blocks.", "stack_"): (v["dtype"], tuple(v["shape"])) for k, v in layouts.load(n)["tensors"].items()}
    comps = families.split_components(flat, n)
    assert [c["role"] for c in comps] == ["diffusion_model"]
    with pytest.raises(UserError, match="number its blocks"):
        E.estimate(comps, 832, 480, 33, policy={"_no_knobs": True, "block_swap": 1})


def test_cli_flag():
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x", "--block-swap", "40"]))["block_swap"] == 40
    assert report.policy_from_args(p.parse_args(["x"]))["block_swap"] is None


def test_knobs_and_a_judged_copy_keep_the_block_swap():
    """The knobs re-run the estimate with its own policy: block swap must not read there as offload bytes given too
    (it raised 'not both' on every CLI run). A knob keeps the swap: batch 1 of a batch-2 run with 10 blocks swapped
    is the batch-1 run with 10 blocks swapped."""
    e = E.estimate(_wan(), 832, 480, 33, 2, cfg=False, policy={"block_swap": 10, "budget": 4 << 30})
    knobs = {k["id"]: k for k in e["knobs"]}
    one = E.estimate(_wan(), 832, 480, 33, 1, cfg=False, policy={"_no_knobs": True, "block_swap": 10, "budget": 4 << 30})
    assert knobs["batch_1"]["peak_after"] == one["peak"]
    assert one["breakdown"]["sample"]["weights"] == WAN13B - 10 * BLOCK
    assert e["policy"]["offload_bytes"] == 10 * BLOCK  # what the swap leaves off the device (mend59), sized again by each knob


def test_block_swap_with_sequential_offload_names_both():
    with pytest.raises(UserError, match="block swap or offload sequential"):
        _sample(block_swap=5, offload="sequential")


def test_block_swap_without_a_diffusion_model_is_an_error():
    vae_only = families.split_components(layouts.table("vae_wan_2.1_vae"), "vae_wan_2.1_vae")
    assert [c["role"] for c in vae_only] == ["vae"]
    E.estimate(vae_only, 832, 480, 33, policy={"_no_knobs": True})
    with pytest.raises(UserError, match="number its blocks"):
        E.estimate(vae_only, 832, 480, 33, policy={"_no_knobs": True, "block_swap": 4})


def test_diffusers_knobs_do_not_offer_sequential_offload_over_a_block_swap():
    e = E.estimate(_wan(), 832, 480, 33, 1, cfg=False, policy={"block_swap": 10, "runner": "diffusers", "budget": 4 << 30})
    assert "sequential_offload" not in {k["id"] for k in e["knobs"]}  # the two conflict (a clear error); no knob raises
