"""A dense [B, N, N] attention mask (policy attention_mask "dense"): diffusers 0.32.0's HunyuanVideoTransformer3DModel
builds torch.zeros(batch, N, N, dtype=bool) over image + text tokens, and torch 2.5's SDPA converts it to the query
dtype at every call (convert_boolean_attn_mask). Expected figures by hand from those shapes, not from the estimate."""
import pytest

from gpu_garden.memory.estimate import formula as E
from support.hunyuan_table import HV_ARCH, hv_dit
from gpu_garden.memory.errors import UserError

# FastVideo's FastHunyuan run (1280x720, 45 frames, text length 256): 12 latent frames of 90 x 160, 2 x 2 patches
# -> 12 x 45 x 80 = 43,200 image tokens + 256 text tokens
N = 12 * 45 * 80 + 256



def _act(cfg=False, **pol):
    comps = hv_dit()
    e = E.estimate(comps, 1280, 720, 45, 1, cfg=cfg, policy={"_no_knobs": True, "arch": HV_ARCH, "text_tokens": 256,
                                                             "runner": "diffusers", **pol})
    return e["breakdown"]["sample"]["activations"], e


def test_mask_adds_bool_and_bf16_copy():
    with_mask, e = _act(attention_mask="dense")
    without, _ = _act()
    assert N == 43_456
    assert with_mask - without == 43_456 * 43_456 * (1 + 2) == 5_665_271_808  # 1 byte bool + 2 bytes bf16 per pair
    assert any("[B, N, N] attention mask" in a for a in e["assumptions"])


def test_mask_scales_with_dtype():
    # (batch 1 only: diffusers 0.32.0's [B, N, N] mask does not broadcast against SDPA's [B, H, N, N] scores for B > 1,
    # so a CFG batch of two is a run that raises, not one to size)
    f32, _ = _act(attention_mask="dense", compute_bytes=4)
    f32_0, _ = _act(compute_bytes=4)
    assert f32 - f32_0 == N * N * (1 + 4)


def test_no_mask_by_default_and_bad_value_refused():
    a, _ = _act()
    b, _ = _act(attention_mask="none")
    assert a == b
    with pytest.raises(UserError, match="attention mask"):
        _act(attention_mask="full")


def test_naive_attention_row_holds_the_whole_mask():
    # the n^2 scores held whole (sample_naive_attention) do not shrink the mask: it is held beside them, whole
    _, with_mask = _act(attention_mask="dense")
    _, without = _act()
    row = lambda e: e["breakdown"]["sample_naive_attention"]["activations"]  # noqa: E731
    assert row(with_mask) - row(without) == 43_456 * 43_456 * 3 == 5_665_271_808
