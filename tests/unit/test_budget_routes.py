"""nodes/budget_routes.py without a host: the interval rules and a push loop that survives errors."""
import asyncio
import threading

import pytest

from gpu_garden.nodes import budget_routes as br


def test_interval_only_for_connected_client_ids_within_limits():
    connected = {"page-1": object()}
    assert br.parse_interval({"client_id": "page-1", "ms": 1}, connected) == ("page-1", br.MIN_MS)
    assert br.parse_interval({"client_id": "page-1", "ms": 10**9}, connected) == ("page-1", br.MAX_MS)
    assert br.parse_interval({"client_id": "", "ms": 500}, connected) == (None, 500)
    with pytest.raises(LookupError):
        br.parse_interval({"client_id": "someone-else", "ms": 500}, connected)
    for bad in ({"client_id": "page-1", "ms": "fast"}, {"client_id": "page-1", "ms": True},
                {"client_id": "page-1", "ms": float("nan")}, {"client_id": 5, "ms": 500},
                {"client_id": "x" * 200, "ms": 500}, ["page-1", 500]):
        with pytest.raises(ValueError):
            br.parse_interval(bad, connected)


class FakeServer:
    def __init__(self):
        self.sockets = {"page-1": object()}
        self.sockets_metadata = {"page-1": {"feature_flags": {"x": True}}}
        self.sent = []

    async def send_json(self, event, data, sid):
        self.sent.append((event, sid))


def test_push_loop_goes_on_after_errors(monkeypatch):
    calls = {"n": 0}

    def flaky_snapshot():
        calls["n"] += 1
        if calls["n"] <= 2:
            raise RuntimeError("driver busy")
        return {"devices": [], "notes": []}

    real_sids = br.browser_sids

    def flaky_sids(server):  # the code before the old loop's try: an error there ended pushing for good
        calls["sids"] = calls.get("sids", 0) + 1
        if calls["sids"] == 1:
            raise KeyError("sockets_metadata changed shape")
        return real_sids(server)

    monkeypatch.setattr(br, "browser_sids", flaky_sids)
    monkeypatch.setattr(br, "current_snapshot", flaky_snapshot)
    monkeypatch.setattr(br, "ERROR_PAUSE_S", 0)
    monkeypatch.setattr(br, "push_interval_ms", lambda connected: 1)
    monkeypatch.setitem(br._state, "intervals", {})
    monkeypatch.setitem(br._state, "last", None)  # what this loop pushes is no one's budget afterwards
    server = FakeServer()

    async def run():
        task = asyncio.ensure_future(br.push_loop(server))
        for _ in range(2000):
            await asyncio.sleep(0.001)
            if len(server.sent) >= 2:
                break
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    t = threading.Thread(target=lambda: asyncio.run(run()))
    t.start()
    t.join(30)
    assert calls["n"] >= 3 and server.sent[:2] == [(br.EVENT, "page-1")] * 2
    assert br.FEATURE.working is True and "driver busy" in br.FEATURE.last_error
