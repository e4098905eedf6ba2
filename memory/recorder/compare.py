"""Compare two recorded runs: which nodes' peak or time moved by more than THRESHOLD, and what changed in
between (versions, launch arguments, allocator, Dynamic VRAM, Comfy Compiler, models, model files, latent size).

Tiny absolute changes are noise, not regressions: a time change under MIN_TIME_S or a peak change under
MIN_BYTES is not named, whatever its percentage."""
THRESHOLD = 0.10
MIN_TIME_S = 0.05
MIN_BYTES = 16 * 1024 ** 2


def _executed(run: dict) -> dict:
    return {(str(n.get("id")), n.get("type")): n for n in run.get("nodes") or () if isinstance(n, dict)}


def pick_previous(runs: list[dict], current: dict) -> dict | None:
    """The newest run before `current` of the same workflow (same node ids and types); else the newest earlier
    run that executed at least one of the same nodes. `runs` newest first, as the store reads them."""
    started = current.get("started") or 0
    earlier = [r for r in runs if r.get("prompt_id") != current.get("prompt_id") and (r.get("started") or 0) <= started]
    same = [r for r in earlier if r.get("graph") and r.get("graph") == current.get("graph")]
    if same:
        return same[0]
    mine = set(_executed(current))
    for r in earlier:
        if mine & set(_executed(r)):
            return r
    return None


def _change(before, after) -> float | None:
    if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return None
    if before == 0:
        return None if after == 0 else float("inf")
    return (after - before) / before


def node_changes(prev: dict, cur: dict) -> list[dict]:
    out = []
    a, b = _executed(prev), _executed(cur)
    for key in b:
        if key not in a:
            continue
        n0, n1 = a[key], b[key]
        t0, t1 = n0.get("duration_s"), n1.get("duration_s")
        ch = _change(t0, t1)
        if ch is not None and abs(ch) > THRESHOLD and abs(t1 - t0) >= MIN_TIME_S:
            out.append({"id": key[0], "type": key[1], "what": "time", "device": None, "before": t0, "after": t1,
                        "change": round(ch, 4) if ch != float("inf") else None})
        p0, p1 = n0.get("peak") or {}, n1.get("peak") or {}
        for dev in sorted(set(p0) & set(p1)):
            ch = _change(p0[dev], p1[dev])
            if ch is not None and abs(ch) > THRESHOLD and abs(p1[dev] - p0[dev]) >= MIN_BYTES:
                out.append({"id": key[0], "type": key[1], "what": "peak", "device": dev, "before": p0[dev],
                            "after": p1[dev], "change": round(ch, 4) if ch != float("inf") else None})
    return out


def _dict_diff(before: dict, after: dict) -> list[dict]:
    out = []
    for k in sorted(set(before or {}) | set(after or {})):
        v0, v1 = (before or {}).get(k), (after or {}).get(k)
        if v0 != v1:
            out.append({"key": k, "before": v0, "after": v1})
    return out


def _flat_versions(v: dict) -> dict:
    flat = {k: val for k, val in (v or {}).items() if k != "custom_nodes"}
    for name, ver in ((v or {}).get("custom_nodes") or {}).items():
        flat["custom_nodes/" + name] = ver
    return flat


def _set_diff(before, after) -> dict:
    b, a = set(before or ()), set(after or ())
    return {"added": sorted(a - b), "removed": sorted(b - a)}


def _model_keys(run: dict) -> list[str]:
    return [f"{m.get('name')} [{m.get('dtype')}]" for m in run.get("models") or () if isinstance(m, dict)]


def _model_what(m: dict) -> str:
    """A recorded model as a user reads it: its label ("text encoder (SD1 CLIP)") and class name, or the name alone
    (runs recorded before the label existed)."""
    name, label = m.get("name") or "a model", m.get("label")
    return f"{label}, {name}" if label and label != name else name


def model_words(prev: dict, cur: dict) -> list[str]:
    """What changed in the models between two runs, one sentence each, or ["no model change"]. A run's models are
    those loaded at any time during it (the recorder notes them at its start and end and at each node), so one
    missing from this run was unloaded before it started and stayed out."""
    def by_name(run):
        return {m.get("name"): m for m in run.get("models") or () if isinstance(m, dict)}
    a, b = by_name(prev), by_name(cur)
    out = [f"{_model_what(b[n])} loaded in this run, not in the previous one" for n in sorted(set(b) - set(a), key=str)]
    out += [f"{_model_what(a[n])} unloaded before this run (it was loaded in the previous one)"
            for n in sorted(set(a) - set(b), key=str)]
    for n in sorted(set(a) & set(b), key=str):
        d0, d1 = a[n].get("dtype"), b[n].get("dtype")
        if d0 != d1 and d0 and d1:
            out.append(f"{_model_what(b[n])} now in {d1} (it was {d0})")
    return out or ["no model change"]


def set_words(key: str, d: dict | None) -> str | None:
    """A set change as words: "args: added --lowvram; removed --cpu", naming only the sides that hold something."""
    d = d or {}
    parts = [f"{side} {', '.join(map(str, d[side]))}" for side in ("added", "removed") if d.get(side)]
    return f"{key}: " + "; ".join(parts) if parts else None


def value_words(key: str, v) -> str:
    """A compared setting as words: a latent "64x64" (frames, batch when more than one), an object "k v, k v"."""
    if v is None:
        return "—"
    if key == "latent" and isinstance(v, dict) and v.get("width") and v.get("height"):
        frames, batch = v.get("frames") or 1, v.get("batch") or 1
        return f"{v['width']}x{v['height']}" + (f", {frames} frames" if frames > 1 else "") + (f", batch {batch}" if batch > 1 else "")
    if isinstance(v, dict):
        return ", ".join(f"{k} {x}" for k, x in v.items()) or "—"
    return str(v)


def change_words(changed: dict) -> list[str]:
    """The version, set, setting and allocator changes as lines, one wording for the sidebar (web/recorder.js) and the
    exported report: "version torch: 2.9.0 → 2.10.0", "allocator backend: — → cudaMallocAsync" (a side not recorded: —)."""
    both = lambda key, d: f"{value_words(key, d['before'])} → {value_words(key, d['after'])}"
    lines = [f"version {d['key']}: {both(d['key'], d)}" for d in changed.get("versions") or ()]
    lines += [w for w in (set_words(key, changed.get(key)) for key in ("args", "model_files", "devices")) if w]
    lines += [f"{key}: {both(key, changed[key])}" for key in ("latent", "dynamic_vram", "comfy_compiler") if changed.get(key)]
    return lines + [f"allocator {d['key']}: {both(d['key'], d)}" for d in changed.get("allocator") or ()]


def what_changed(prev: dict, cur: dict) -> dict:
    changed = {
        "versions": _dict_diff(_flat_versions(prev.get("versions")), _flat_versions(cur.get("versions"))),
        "args": _set_diff(prev.get("args"), cur.get("args")),
        "allocator": _dict_diff(prev.get("allocator"), cur.get("allocator")),
        "dynamic_vram": None if prev.get("dynamic_vram") == cur.get("dynamic_vram") else
        {"before": prev.get("dynamic_vram"), "after": cur.get("dynamic_vram")},
        # a run recorded before the field existed says nothing about the compiler: no change shown
        "comfy_compiler": None if "comfy_compiler" not in prev or "comfy_compiler" not in cur
        or prev["comfy_compiler"] == cur["comfy_compiler"] else
        {"before": prev["comfy_compiler"], "after": cur["comfy_compiler"]},
        "models": _set_diff(_model_keys(prev), _model_keys(cur)),
        "model_files": _set_diff(prev.get("model_files"), cur.get("model_files")),
        "latent": None if prev.get("latent") == cur.get("latent") else
        {"before": prev.get("latent"), "after": cur.get("latent")},
        "devices": _set_diff([d.get("name") for d in prev.get("devices") or ()],
                             [d.get("name") for d in cur.get("devices") or ()]),
    }
    return changed


def nothing_changed(changed: dict) -> bool:
    for v in changed.values():
        if isinstance(v, list) and v:
            return False
        if isinstance(v, dict) and (v.get("added") or v.get("removed") or "before" in v):
            return False
    return True


def compare(prev: dict | None, cur: dict) -> dict:
    if prev is None:
        return {"previous": None, "current": cur.get("prompt_id"), "nodes": [], "changed": None,
                "summary": "no earlier run of this workflow is recorded"}
    nodes = node_changes(prev, cur)
    changed = what_changed(prev, cur)
    names = sorted({f"{n['type']} #{n['id']}" for n in nodes})
    summary = (f"{len(names)} node(s) changed by more than {int(THRESHOLD * 100)} %: " + ", ".join(names)) if names \
        else f"no node's peak or time changed by more than {int(THRESHOLD * 100)} %"
    if not nothing_changed(changed):
        parts = [k for k, v in changed.items() if v and (not isinstance(v, dict) or v.get("added") or v.get("removed")
                                                           or "before" in v)]
        summary += "; in between: " + ", ".join(parts) + " changed"
    return {"previous": prev.get("prompt_id"), "current": cur.get("prompt_id"), "nodes": nodes, "changed": changed,
            "models_words": model_words(prev, cur), "change_words": change_words(changed), "summary": summary}
