"""web50 item 8: in exact mode the Footprint Estimate's verdict and peak rest on the traced sampling step, not on the
formula's activations (the face read FITS beside a traced sample peak 38 % higher). The node passes the traced
activations as policy sample_activations (nodes/estimate.py); the formula puts them in the sample phase in place of
its own, keeps the weights, fixed costs and the streamed layer, and judges on them. Ignoring the key breaks both."""
from gpu_garden.memory.estimate import families, formula as E, layouts, verdict
from gpu_garden.memory.units import GiB

TRACED = 3 * GiB  # a traced step far above the formula's SD1.5 512x512 activations (a few hundred MiB)


def _sd15():
    return families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "sd15")


def _est(policy, budget):
    est = E.estimate(_sd15(), 512, 512, cfg=True, policy=dict({"models": "resident", "text_encoders": "resident"}, **policy))
    return verdict.finish(est, budget)


def test_traced_activations_replace_the_formulas_in_the_sample_phase():
    formula, traced = _est({}, 8 * GiB), _est({"sample_activations": TRACED}, 8 * GiB)
    assert formula["breakdown"]["sample"]["activations"] < GiB
    assert traced["breakdown"]["sample"]["activations"] == TRACED
    assert traced["breakdown"]["sample"]["weights"] == formula["breakdown"]["sample"]["weights"]
    # the phase grows by exactly the difference in activations (or more: the allocator margin scales with them)
    grew = traced["phases"]["sample"] - formula["phases"]["sample"]
    assert grew >= TRACED - formula["breakdown"]["sample"]["activations"]
    assert any(a.startswith("sample activations as traced from the loaded model (exact mode): 3.00 GiB")
               for a in traced["assumptions"])


def test_the_verdict_follows_the_traced_step():
    """A budget the formula's step fits in and the traced one does not: FITS on the formula, not on the trace."""
    formula = _est({}, 4 * GiB)
    assert formula["verdict"] == "fits", (formula["verdict"], formula["peak"])
    traced = _est({"sample_activations": TRACED}, 4 * GiB)
    assert traced["verdict"] == "does not fit" and traced["peak_phase"] == "sample", (traced["verdict"], traced["peak"])
    assert traced["peak"] >= formula["peak"] + GiB
