"""Mochi's sampling activations: its asymmetric joint block peaks in the SwiGLU MLP (phases.MOCHI_MLP_*, read from
ComfyUI's comfy/ldm/genmo/joint_model code and diffusers' MochiTransformerBlock), not at SD3.5's joint-attention
figure that every "mmdit" block used before.

TRACED is a one-off meta trace of ComfyUI 0.8.0's real GenmoMochi forward (memory/trace/tracer.trace on
model.apply_model; the model built by model_config_from_unet from AsymmDiTJoint's own state-dict shapes on the meta
device, bf16, flash attention through SDPA): latent [2, 12, 15, 60, 106] (848x480, 85 frames, cond and uncond
batched), 256 T5 tokens. It peaked in blocks.0.mlp_x at aten.mul with these activation bytes. The trace of this
family is not in the tracer's FAMILIES yet, so it is pinned here by hand."""
import pytest

from gpu_garden.memory.estimate import families, formula as E, phases

TRACED = 4_476_015_760
TOLERANCE = 0.05


def _mochi_table():
    t = {"t5_yproj.weight": ("BF16", (1536, 4096)), "x_embedder.proj.weight": ("BF16", (3072, 12, 2, 2))}
    for i in range(48):
        t[f"blocks.{i}.mlp_x.w1.weight"] = ("BF16", (16384, 3072))  # fused SwiGLU: 2 x 8192
        t[f"blocks.{i}.mlp_x.w2.weight"] = ("BF16", (3072, 8192))
    return t


def _sample_activations():
    comps = [c for c in families.split_components(_mochi_table(), "mochi") if c["role"] == "diffusion_model"]
    e = E.estimate(comps, 848, 480, 85, 1, cfg=True, policy={"_no_knobs": True})
    assert e["latent"]["shape"][2:] == [15, 60, 106]
    return e["breakdown"]["sample"]["activations"]


def check():
    err = _sample_activations() / TRACED - 1
    assert abs(err) <= TOLERANCE, f"Mochi sample activations {err:+.1%} off ComfyUI's traced forward"


def test_mochi_arch_reads_the_swiglu_width():
    arch = families.detect_family(_mochi_table())["arch"]
    assert arch["block"] == "mmdit" and arch["gated_mlp"] and arch["ffn"] == 8192


def test_mochi_sample_activations_match_comfyuis_trace():
    check()


def test_sd3_joint_blocks_keep_their_traced_units():
    assert phases.block_units({"hidden": 1536, "ffn": 6144, "block": "mmdit"}) == 24.0
    assert phases.block_units({"hidden": 1536, "ffn": 6144, "block": "mmdit", "dual_attention": True}) == 28.5


def _fused_width(detect):
    def wrong(t):
        r = detect(t)
        return dict(r, arch=dict(r["arch"], ffn=2 * r["arch"]["ffn"]))
    return wrong


MUTATIONS = [
    ("gated MLP term x2", lambda m: m.setattr(phases, "MOCHI_MLP_GATED", phases.MOCHI_MLP_GATED * 2)),
    ("hidden-sized tensors x2", lambda m: m.setattr(phases, "MOCHI_MLP_HIDDEN", phases.MOCHI_MLP_HIDDEN * 2)),
    ("SD3.5's joint-attention figure for Mochi",
     lambda m: m.setattr(phases, "block_units", (lambda f: (lambda a: f(dict(a, gated_mlp=False))))(phases.block_units))),
    ("fused w1 width read as the SwiGLU width", lambda m: m.setattr(families, "detect_family", _fused_width(families.detect_family))),
]


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_deliberate_error_breaks_the_check(monkeypatch, name, mutate):
    mutate(monkeypatch)
    with pytest.raises(AssertionError):
        check()
