"""The watchdog's rules, as plain functions: when does a running node deserve a warning?

- "stalled": the node has run far past its recorded duration (more than FACTOR times the longest recorded
  run of the same node, and at least MIN_EXTRA_S past it) and has sent no progress update for STALL_S;
- "pinned": the device's free memory has stayed under PINNED_FRACTION of its total for PINNED_S while the
  node sent no progress update for STALL_S.

The 2026 Dynamic VRAM hangs raise no error, so the OOM panel never opens for them; this is what tells the
user, with the snapshot and the hang guide (guides/hang-dynamic-vram.md). One warning per node per run."""
import math
import os
import re
from pathlib import Path

DEFAULTS = {"factor": 3.0, "min_extra_s": 60.0, "stall_s": 30.0, "pinned_fraction": 0.02, "pinned_s": 20.0,
            "interval_s": 2.0}
ENV_PREFIX = "GPU_GARDEN_WATCHDOG_"
GUIDE = Path(__file__).with_name("guides") / "hang-dynamic-vram.md"


def config(environ=None) -> dict:
    """DEFAULTS, each overridable by GPU_GARDEN_WATCHDOG_<KEY> (e.g. GPU_GARDEN_WATCHDOG_FACTOR=5)."""
    env = os.environ if environ is None else environ
    cfg = dict(DEFAULTS)
    for k in DEFAULTS:
        raw = env.get(ENV_PREFIX + k.upper())
        if raw:
            try:
                v = float(raw)
            except ValueError:
                continue
            if math.isfinite(v) and v >= 0:
                cfg[k] = v
    cfg["interval_s"] = min(max(cfg["interval_s"], 0.5), 60.0)  # 0 would spin the watchdog thread
    return cfg


def expected_durations(runs) -> dict:
    """(node id, type) -> the longest duration of that node in recorded successful runs; type alone as well."""
    out = {}
    for r in runs or ():
        if r.get("status") != "success":
            continue
        for n in r.get("nodes") or ():
            d = n.get("duration_s")
            if not isinstance(d, (int, float)):
                continue
            for key in ((str(n.get("id")), n.get("type")), n.get("type")):
                out[key] = max(out.get(key, 0.0), float(d))
    return out


def expected_for(durations: dict, node_id, node_type) -> float | None:
    v = durations.get((str(node_id), node_type))
    return v if v is not None else durations.get(node_type)


def is_pinned(free, total, cfg) -> bool:
    return isinstance(free, (int, float)) and isinstance(total, (int, float)) and total > 0 \
        and free < cfg["pinned_fraction"] * total


def check(now: float, started: float, last_progress: float, expected_s: float | None, pinned_since: float | None,
          cfg: dict) -> dict | None:
    """A warning {"reason", "elapsed_s", "expected_s", "since_progress_s"} or None. Times in seconds, one clock."""
    elapsed = now - started
    quiet = now - max(started, last_progress or started)
    if quiet < cfg["stall_s"]:
        return None
    base = {"elapsed_s": round(elapsed, 1), "expected_s": expected_s, "since_progress_s": round(quiet, 1)}
    if expected_s is not None and elapsed > max(cfg["factor"] * expected_s, expected_s + cfg["min_extra_s"]):
        return {"reason": "stalled", **base}
    if pinned_since is not None and now - pinned_since >= cfg["pinned_s"]:
        return {"reason": "pinned", **base}
    return None


def message(node_type, node_id, warning: dict) -> str:
    exp = warning.get("expected_s")
    if warning["reason"] == "stalled":
        return (f"{node_type} #{node_id} has run {warning['elapsed_s']:.0f} s (it took {exp:.1f} s before) with no "
                f"progress for {warning['since_progress_s']:.0f} s: it may be hung.")
    return (f"{node_type} #{node_id}: memory has been pinned at the device limit with no progress for "
            f"{warning['since_progress_s']:.0f} s: it may be thrashing or hung.")


def guide() -> dict:
    text = GUIDE.read_text(encoding="utf-8")
    meta, body = {}, text
    m = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if m:
        for line in m.group(1).splitlines():
            k, _, v = line.partition(":")
            meta[k.strip()] = v.strip()
        body = text[m.end():]
    return {"id": meta.get("id", GUIDE.stem), "title": meta.get("title", "Runs that hang"), "markdown": body.strip()}
