"""The triage of one log text and its last event, for tests that check how a runtime's own lines are read."""


def last_event(text: str):
    from gpu_garden.memory.triage import engine
    res = engine.triage_text(text)
    assert res["found"], text
    return res, res["events"][-1]


def top(text: str):
    """(cause, {cause id: confidence}, last event): what the answer names and how the causes scored."""
    res, ev = last_event(text)
    return res["cause"], {c["id"]: c["confidence"] for c in ev["causes"]}, ev
