"""The memory report's OOM line states the cause as the OOM panel does (ux58: the panel said "two causes fit the
evidence about equally · uncertain" with activations 41 % and fragmentation 38 %, and the report copied for an issue
said "cause: activations" alone)."""
from gpu_garden.memory.recorder import report

RUN = {"prompt_id": "p1", "status": "error", "nodes": [{"id": "14", "type": "GGTestRaiseOOM", "duration_s": 0.1}]}


def oom(**kw):
    base = {"id": "r1", "node": {"id": "14", "type": "GGTestRaiseOOM"}, "exception_type": "torch.OutOfMemoryError",
            "message": "CUDA out of memory.", "cause": "activations", "guide": {"id": "comfyui-activations"},
            "alternatives": [{"id": "activations", "confidence": 0.41}, {"id": "fragmentation", "confidence": 0.38}]}
    return dict(base, **kw)


def line(o) -> str:
    md = report.markdown(report.build(RUN, None, o))
    return next(x for x in md.splitlines() if x.startswith("**Out-of-memory report**"))


def test_a_pair_is_uncertain_with_both():
    assert line(oom(uncertain=True, pair=True)).endswith(
        "; cause uncertain: activations or fragmentation (two fit the evidence about equally)")


def test_a_likelier_cause_has_its_question_mark():
    assert line(oom(uncertain=True, pair=False)).endswith("; cause uncertain: activations? (fragmentation also possible)")


def test_a_confident_cause_stands_alone():
    assert line(oom(uncertain=False, alternatives=[])).endswith("; cause: activations")
    assert report.build(RUN, None, oom(uncertain=True, pair=True))["oom"]["alternatives"] == ["activations", "fragmentation"]
