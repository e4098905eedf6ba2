"""The caching allocator's cache kept through sampling (estimate/sample_cache.py): the tracer's forward excess (its
allocator model's reserved beyond allocated, less the weights' packing) worked out by hand, the traced ratios
recomputed from the trace figures their comment records, and where the term goes (peak_device, not the verdict's
peak). Counting the weights' packing as the forward's, a mistyped ratio, no floor at the margin, or the term in `peak`
breaks a test."""
import pytest

from gpu_garden.memory.estimate import families, formula as E, layouts, sample_cache as SC, spec
from gpu_garden.memory.trace import allocator as ta

MiB = 1 << 20


def test_forward_excess_leaves_out_the_weights_packing():
    # a 3 MiB weight takes a 20 MiB segment (17 MiB cached after loading); the forward allocates 30 MiB, frees it and
    # allocates 40 MiB, which neither free block (30, 17) can hold: a third segment
    r = ta.replay([0, 1, ~1, 2, ~2], [3 * MiB, 30 * MiB, 40 * MiB], loaded=1)
    assert r["loaded_allocated"] == 3 * MiB and r["loaded_reserved"] == 20 * MiB
    assert r["allocated_peak"] == 43 * MiB and r["reserved_peak"] == 90 * MiB
    assert r["forward_excess"] == (90 - 43) * MiB - (20 - 3) * MiB        # 30 MiB, the forward's own
    assert ta.replay([0, 1, ~1, 2, ~2], [3 * MiB, 30 * MiB, 40 * MiB])["forward_excess"] == 47 * MiB  # nothing loaded


def test_tracer_marks_where_the_weights_end():
    torch = pytest.importorskip("torch")
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        m = torch.nn.Linear(8, 8)
    r = trace(m, torch.empty(2, 8, device="meta"))
    al = r["allocator"]
    assert al["loaded_allocated"] == 512 + 512                         # weight 256 B and bias 32 B, each rounded to 512
    assert al["loaded_reserved"] == 2 * MiB                            # one small-pool segment
    assert al["forward_excess"] == (al["reserved_peak"] - al["allocated_peak"]) - (2 * MiB - 1024)


# the trace figures sample_cache's comment records: (forward_excess, activations) per FIT trace
TRACED = {
    ("sd1", False): [(13_766_144, 137_227_536), (63_507_968, 546_762_000)], ("sd1", True): [(3_280_384, 1_137_569_040)],
    ("sdxl", False): [(161_857_024, 333_020_432)],
    ("sd3", False): [(42_664_960, 202_291_216), (195_904_512, 752_007_184)],
    ("flux1", False): [(422_178_816, 388_893_194)], ("flux1", True): [(862_056_448, 2_180_385_290)],
    ("wan21", False): [(379_571_200, 1_322_317_840)], ("wan22", False): [(501_406_720, 1_538_289_680)],
}


@pytest.mark.parametrize("family,naive", sorted(TRACED))
def test_ratios_are_the_pooled_traces(family, naive):
    xs = TRACED[(family, naive)]
    assert SC.ratio(family, naive) == round(sum(e for e, _ in xs) / sum(a for _, a in xs), 3)


def test_slack_beyond_the_margin_by_hand():
    assert SC.cached_slack_bytes("flux1", 1_000_000_000) == 1_036_000_000     # (1.086 - 0.05) x 1e9
    assert SC.cached_slack_bytes("wan21", 1_000_000_000) == 237_000_000      # (0.287 - 0.05) x 1e9
    assert SC.cached_slack_bytes("sd1", 1_000_000_000, naive=True) == 0      # 0.003: the margin stays the floor
    assert SC.cached_slack_bytes("sdxl", 1_000_000_000, naive=True) == 0     # no math trace: the margin alone
    assert SC.cached_slack_bytes("qwen-image", 1_000_000_000) == 0           # not traced


def _flux(**pol):
    comps = [c for c in families.split_components(layouts.table("flux_flux1-dev"), "flux1-dev") if c["role"] == "diffusion_model"]
    return E.estimate(comps, 1024, 1024, cfg=False, policy={"_no_knobs": True, **pol})


def test_peak_device_holds_the_cache_and_the_verdicts_peak_does_not():
    e = _flux()
    bd = e["breakdown"]["sample"]
    assert bd["cached_slack"] == int((1.086 - spec.FRAGMENTATION) * bd["activations"])
    assert bd["allocator_margin"] == int(spec.FRAGMENTATION * bd["activations"])   # the verdict keeps the flat margin
    assert e["peak"] == e["phases"]["sample"] == bd["weights"] + bd["activations"] + bd["allocator_margin"] + bd["fixed"]
    assert e["peak_phase"] == "sample"
    assert e["peak_device"] == (bd["weights"] + bd["activations"] + bd["allocator_margin"] + bd["cached_slack"]
                                + e["fixed"]["cuda_context"])
    assert e["peak_torch"] == bd["weights"] + bd["activations"]


def test_no_cache_when_accelerate_empties_it():
    e = _flux(runner="diffusers", offload="sequential")
    assert e["breakdown"]["sample"]["cached_slack"] == 0


def test_only_where_the_caching_allocator_holds_the_memory():
    for dev in ("cpu", "mps"):
        assert _flux(device=dev)["breakdown"]["sample"]["cached_slack"] == 0
    assert _flux(device="rocm")["breakdown"]["sample"]["cached_slack"] > 0
