"""Wrap triage's window.window_lines so a test can check, call by call, that the reused window lines equal a fresh
line_starts pass over the same bytes (the scan's reuse must never change what is found)."""


def check_window_lines(monkeypatch) -> list:
    """Patch window.window_lines; returns the list that gets one bool per call (True: equal to line_starts)."""
    from gpu_garden.memory.triage import window as W

    real, calls = W.window_lines, []

    def checked(scan, raw, needles):
        got = real(scan, raw, needles)
        calls.append(got == W.line_starts(raw, needles))
        return got
    monkeypatch.setattr(W, "window_lines", checked)
    return calls
