"""The triage of one log text and its last event, for tests that check how a runtime's own lines are read."""


def last_event(text: str):
    from gpu_garden.memory.triage import engine
    res = engine.triage_text(text)
    assert res["found"], text
    return res, res["events"][-1]
