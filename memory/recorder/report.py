""""Copy memory report": one run as JSON and as markdown fit for an issue on ComfyUI or a node pack.

Contents: versions, devices, launch arguments, allocator, Dynamic VRAM, per-node peaks and times, the OOM
report (if the run had one), the comparison with the previous run, watchdog warnings.

Redacted by default (redact=True): absolute paths become "<path>" (a model file keeps its name), the user's
name becomes "<user>", and only model file names survive (no input images, no output prefixes). Prompt texts
are never in a record to begin with. redact=False (the "full report" setting) keeps paths and names."""
import getpass
import json
import os
import re

from ..units import fmt_bytes
from .record import basename, is_model_file, run_peak

# POSIX: a slash not preceded by a word character or dot, then at least one segment; Windows: drive or UNC.
_POSIX = r"(?<![\w.:/~])(?:~/|/)(?:[^\s\"'<>|,;()\[\]{}=]+)"
_WIN = r"(?:[A-Za-z]:[\\/]|\\\\)[^\s\"'<>|,;()\[\]{}=]*"
_PATH_RE = re.compile(f"{_WIN}|{_POSIX}")
_URL_RE = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)


def _user_names() -> set[str]:
    names = set()
    for fn in (getpass.getuser, lambda: os.path.basename(os.path.expanduser("~"))):
        try:
            n = fn()
        except Exception:
            continue
        if n and len(n) >= 3 and n not in ("root", "user", "home"):
            names.add(n)
    return names


def _path_repl(m) -> str:
    p = m.group(0).rstrip(".")
    if p in ("/", "~"):
        return m.group(0)
    return ("<path>/" + basename(p)) if is_model_file(p) else "<path>"


def _known_roots() -> list[str]:
    """Folders whose paths may hold spaces ("C:\\Users\\John Smith", "/home/alice/My Models"): the home folder
    and the working folder (ComfyUI's), cut as a whole before the general pattern runs."""
    roots = set()
    for fn in (lambda: os.path.expanduser("~"), os.getcwd):
        try:
            r = fn().rstrip("/\\")
        except Exception:
            continue
        if len(r) > 3:
            roots.add(r)
    return sorted(roots, key=len, reverse=True)


_MODEL_EXT = re.compile(r"\.(?:safetensors|sft|gguf|ckpt|pt|pth|bin)\b", re.I)


def _root_repl(m) -> str:
    s, last = m.group(0), None
    for last in _MODEL_EXT.finditer(s):
        pass
    if last is None:
        return "\x01"
    return "\x01\x02" + basename(s[:last.end()]) + s[last.end():]  # marks, so the general pattern skips them


def redact_text(text, users: set[str] | None = None, roots: list[str] | None = None) -> str:
    """Paths out (URLs stay), user names out. Linear-time regexes; non-strings pass through."""
    if not isinstance(text, str):
        return text
    urls = []
    text = _URL_RE.sub(lambda m: urls.append(m.group(0)) or f"\x00{len(urls) - 1}\x00", text)
    for root in roots if roots is not None else _known_roots():
        text = re.sub(re.escape(root) + r"(?:[\\/][^\n\"'<>|]*)?", _root_repl, text)
    text = _PATH_RE.sub(_path_repl, text).replace("\x01\x02", "<path>/").replace("\x01", "<path>")
    for u in users if users is not None else _user_names():
        text = re.sub(rf"(?<![\w]){re.escape(u)}(?![\w])", "<user>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: urls[int(m.group(1))], text)


def _redact(obj, users):
    if isinstance(obj, str):
        return redact_text(obj, users)
    if isinstance(obj, list):
        return [_redact(v, users) for v in obj]
    if isinstance(obj, dict):
        return {(_redact(k, users) if isinstance(k, str) else k): _redact(v, users) for k, v in obj.items()}
    return obj


def _oom_summary(oom: dict | None) -> dict | None:
    if not oom:
        return None
    node = oom.get("node") or {}
    return {"id": oom.get("id"), "node": {"id": node.get("id"), "type": node.get("type")},
            "exception_type": oom.get("exception_type"), "message": oom.get("message"), "cause": oom.get("cause"),
            "uncertain": bool(oom.get("uncertain")), "pair": bool(oom.get("pair")),  # as the panel says it
            "alternatives": [a.get("id") for a in oom.get("alternatives") or () if isinstance(a, dict)],
            "numbers": oom.get("numbers"), "guide": (oom.get("guide") or {}).get("id")}


def _cause_words(o: dict) -> str:
    """The cause as the OOM panel states it: uncertain with both when two fit about equally (pair), the likelier with
    a question mark and the other as also possible when it is only likelier, a lone cause too weak to stand alone with
    its question mark (oom_parts.js uncertainLabel); a confident cause alone."""
    cause = o.get("cause") or "unknown"
    other = next((a for a in o.get("alternatives") or () if a != cause), None)
    if not o.get("uncertain"):
        return f"cause: {cause}"
    if not other:  # one cause fired, under triage's rank.UNCERTAIN: the panel's "(one weak sign)"
        return f"cause uncertain (one weak sign): {cause}?" if o.get("cause") else "cause not determined"
    if o.get("pair"):
        return f"cause uncertain: {cause} or {other} (two fit the evidence about equally)"
    return f"cause uncertain: {cause}? ({other} also possible)"


def build(run: dict, comparison: dict | None = None, oom: dict | None = None, redact: bool = True) -> dict:
    nodes = [{k: n.get(k) for k in ("id", "type", "duration_s", "peak", "reserved_peak", "free_before", "free_after",
                                    "models_loaded", "models_unloaded", "status")} for n in run.get("nodes") or ()]
    report = {
        "kind": "gpu-garden memory report", "version": 1, "redacted": bool(redact),
        "prompt_id": run.get("prompt_id"), "status": run.get("status"), "started": run.get("started"),
        "ended": run.get("ended"), "duration_s": run.get("duration_s"),
        "versions": run.get("versions"), "devices": run.get("devices"), "args": run.get("args"),
        "allocator": run.get("allocator"), "dynamic_vram": run.get("dynamic_vram"),
        "comfy_compiler": run.get("comfy_compiler"),
        "model_files": [basename(f) for f in run.get("model_files") or ()] if redact else run.get("model_files"),
        "latent": run.get("latent"), "models": run.get("models"), "peak": run_peak(run), "nodes": nodes,
        "cached": run.get("cached"), "error": run.get("error"), "oom": _oom_summary(oom),
        "oom_report_id": run.get("oom_report_id"), "compare": comparison, "watchdog": run.get("watchdog"),
    }
    return _redact(report, _user_names()) if redact else report


def _b(n) -> str:
    return fmt_bytes(n) if isinstance(n, (int, float)) else "—"


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def markdown(rep: dict) -> str:
    v = rep.get("versions") or {}
    lines = [f"### GPU Garden memory report — run `{rep.get('prompt_id')}` ({rep.get('status')})", ""]
    if rep.get("duration_s") is not None:
        lines.append(f"Run time {rep['duration_s']:.2f} s; nodes executed {len(rep.get('nodes') or [])}, "
                     f"cached {len(rep.get('cached') or [])}.")
        lines.append("")
    lines += ["**Versions**", ""]
    for k in ("comfyui", "frontend", "gpu_garden", "torch", "cuda", "rocm", "driver", "python", "os"):
        if v.get(k):
            lines.append(f"- {k}: {v[k]}")
    packs = v.get("custom_nodes") or {}
    if packs:
        lines.append("- custom nodes: " + ", ".join(f"{_cell(n)} {_cell(p)}" for n, p in sorted(packs.items())))
    lines += ["", "**Devices**", ""]
    for d in rep.get("devices") or []:
        lines.append(f"- {d.get('device')}: {d.get('name')} ({_b(d.get('total'))})")
    lines += ["", f"**Launch arguments:** `{' '.join(rep.get('args') or []) or '(none)'}`",
              f"**Allocator:** {json.dumps(rep.get('allocator') or {})}; **Dynamic VRAM:** "
              f"{ {True: 'on', False: 'off'}.get(rep.get('dynamic_vram'), 'unknown') }; "
              f"**Comfy Compiler:** {rep.get('comfy_compiler') or 'unknown'}", ""]
    if rep.get("model_files"):
        lines.append("**Model files:** " + ", ".join(f"`{_cell(f)}`" for f in rep["model_files"]))
    if rep.get("latent"):
        lt = rep["latent"]
        lines.append(f"**Latent:** {lt.get('width')}×{lt.get('height')}, {lt.get('frames')} frame(s), batch {lt.get('batch')}")
    lines += ["", "**Per node**", ""]
    if rep.get("dynamic_vram"):  # comfy-aimdo's VRAM pages are outside PyTorch's allocator
        lines += ["GPU peaks are PyTorch's allocator peaks: with Dynamic VRAM on they do not include the weights "
                  "(held in Dynamic VRAM's own pages).", ""]
    lines += ["| node | type | time (s) | peak | models loaded | models unloaded |", "|---|---|---:|---|---|---|"]
    for n in rep.get("nodes") or []:
        peaks = ", ".join(f"{d} {_b(b)}" for d, b in (n.get("peak") or {}).items()) or "—"
        lines.append(f"| {_cell(n.get('id'))} | {_cell(n.get('type'))} | {n.get('duration_s') or 0:.3f} | {peaks} | "
                     f"{_cell(', '.join(n.get('models_loaded') or [])) or '—'} | "
                     f"{_cell(', '.join(n.get('models_unloaded') or [])) or '—'} |")
    if rep.get("error"):
        e = rep["error"]
        lines += ["", f"**Failed in** {_cell(e.get('type'))} #{_cell(e.get('node_id'))}"
                  + (f" ({e.get('exception_type')})" if e.get("exception_type") else "")]
    if rep.get("oom"):
        o = rep["oom"]
        lines += ["", f"**Out-of-memory report** `{o.get('id')}`: {o.get('exception_type')} in {_cell((o.get('node') or {}).get('type'))}"
                  f" #{_cell((o.get('node') or {}).get('id'))}; {_cause_words(o)}", "",
                  "```", str(o.get("message") or "")[:2000], "```"]
    c = rep.get("compare")
    if c:
        prev = f" `{c['previous']}`" if c.get("previous") else ""  # none recorded: the summary says so
        lines += ["", f"**Compared with the previous run**{prev}: {c.get('summary')}"]
        for n in c.get("nodes") or []:
            if n["what"] == "time":
                lines.append(f"- {n['type']} #{n['id']}: time {n['before']:.3f} s → {n['after']:.3f} s")
            else:
                lines.append(f"- {n['type']} #{n['id']}: peak on {n['device']} {_b(n['before'])} → {_b(n['after'])}")
        lines += [f"- {w}" for w in (c.get("models_words") or []) + (c.get("change_words") or [])]  # compare.change_words
    for w in rep.get("watchdog") or []:
        lines += ["", f"**Watchdog:** {w.get('message')}"]
    lines += ["", f"<sub>{'Redacted: paths, user names and non-model file names removed.' if rep.get('redacted') else 'Full report (not redacted).'}"
              " Made by GPU Garden's flight recorder.</sub>", ""]
    return "\n".join(lines)
