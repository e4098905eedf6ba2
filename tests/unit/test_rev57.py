"""Review rev57 (session 56's merges): each test fails on the code before its fix; each names the deliberate error
that breaks it (checked by reverting)."""
from gpu_garden.memory.recorder import report

RUN = {"prompt_id": "p1", "status": "error", "nodes": [{"id": "14", "type": "GGTestRaiseOOM", "duration_s": 0.1}]}
OOM = {"id": "r1", "node": {"id": "14", "type": "GGTestRaiseOOM"}, "exception_type": "torch.OutOfMemoryError",
       "message": "CUDA out of memory.", "cause": "activations", "guide": {"id": "comfyui-activations"}}


def oom_line(**kw) -> str:
    md = report.markdown(report.build(RUN, None, dict(OOM, **kw)))
    return next(x for x in md.splitlines() if x.startswith("**Out-of-memory report**"))


# ux58 made the report's OOM line say "uncertain" as the panel does, but only with two alternatives. Triage's answer is
# also uncertain when one cause fired too weakly to stand alone (rank.NOT_DETERMINED; engine.py: alternatives then
# name that cause alone, or none): the panel says "cause uncertain (one weak sign): activations?" (oom_parts.js
# uncertainLabel) and the CLI "Cause: uncertain - activations (..., one sign alone)" (triage/render.py), while the
# report said "cause: activations" as if confident. Breaks if a lone uncertain cause is stated alone (the old code).
def test_a_lone_weak_cause_is_uncertain_in_the_report():
    for alts in ([], [{"id": "activations", "confidence": 0.4}]):
        assert oom_line(uncertain=True, alternatives=alts).endswith(
            "; cause uncertain (one weak sign): activations?"), alts
    assert oom_line(uncertain=True, alternatives=[], cause=None).endswith("; cause not determined")
    assert oom_line(uncertain=False, alternatives=[]).endswith("; cause: activations")
