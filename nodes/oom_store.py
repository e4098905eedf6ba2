"""Bounded, crash-safe storage of OOM reports (JSON lines), and the size bounds every report obeys.

- Text: a message longer than MAX_MESSAGE_CHARS keeps its head and tail around a marker that says how
  much was cut (bounded_text); recognition (oom_build) reads an even shorter head and tail.
- A report, stored or pushed over the websocket, is at most MAX_REPORT_BYTES of JSON (bound_report cuts
  the biggest parts first and lists what it cut in report["truncated"]).
- The file holds the last MAX_REPORTS reports. Each add rewrites it through a temporary file made by
  mkstemp in the same folder, flushed and fsynced, then os.replace'd over the old one; the whole
  read-modify-write holds an exclusive lock on "<file>.lock" (fcntl on POSIX, msvcrt on Windows), so two
  ComfyUI processes sharing a user directory never lose each other's reports or tear the file.
No ComfyUI import: unit tests drive all of it."""
import json
import os
import tempfile
import threading

from ..memory.filelock import FileLock

MAX_REPORTS = 50
MAX_REPORT_BYTES = 64 * 1024
MAX_MESSAGE_CHARS = 16 * 1024
LOCK_SUFFIX = ".lock"


def bounded_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """text itself when short enough, else its head and tail (limit characters in all) with a marker."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut by GPU Garden ...]\n{text[-tail:]}"


def _size(report: dict) -> int:
    return len(json.dumps(report, default=str, ensure_ascii=False).encode("utf-8"))


def _shrink_guide(guide):
    if not isinstance(guide, dict):
        return guide
    g = dict(guide)
    if isinstance(g.get("markdown"), str):
        g["markdown"] = bounded_text(g["markdown"], 8 * 1024)
    g.pop("faqs", None)
    return g


# Cuts tried in order until the report fits: (name, function(report) -> report).
_CUTS = (
    ("message", lambda r: {**r, "message": bounded_text(r.get("message"), 4096)}),
    ("session_history", lambda r: {**r, "session_history": (r.get("session_history") or [])[-3:]}),
    ("guide", lambda r: {**r, "guide": _shrink_guide(r.get("guide"))}),
    ("loaded_models", lambda r: {**r, "loaded_models": (r.get("loaded_models") or [])[:16]}),
    ("causes", lambda r: {**r, "causes": [{k: c.get(k) for k in ("id", "score", "title") if k in c}
                                          for c in (r.get("causes") or []) if isinstance(c, dict)][:5]}),
    ("snapshot", lambda r: {**r, "snapshot": None}),
    ("guide", lambda r: {**r, "guide": {k: (r.get("guide") or {}).get(k) for k in ("id", "title", "commands", "fixes")}
                         if isinstance(r.get("guide"), dict) else None}),
    ("message", lambda r: {**r, "message": bounded_text(r.get("message"), 1024)}),
)
_KEEP_LAST_RESORT = ("id", "version", "timestamp", "prompt_id", "node", "exception_type", "message", "cause",
                     "runtime", "device_kind", "captured", "notes")


def bound_report(report: dict, limit: int = MAX_REPORT_BYTES) -> dict:
    """The report if its JSON fits in `limit` bytes, else a copy with the largest parts cut (listed in
    report["truncated"]). Never raises on odd content (default=str)."""
    if _size(report) <= limit:
        return report
    out, cut = dict(report), []
    for name, fn in _CUTS:
        out = fn(out)
        if name not in cut:
            cut.append(name)
        out["truncated"] = cut
        if _size(out) <= limit:
            return out
    out = {k: out.get(k) for k in _KEEP_LAST_RESORT}
    out["node"] = {k: bounded_text(str(v), 256) for k, v in (report.get("node") or {}).items() if k != "path"}
    out["notes"] = [bounded_text(str(n), 512) for n in (out.get("notes") or [])][:8]
    out["truncated"] = cut + ["everything else"]
    return out


_FileLock = FileLock  # memory/filelock.py: the one cross-process lock (the run store takes it too)


def atomic_write(path: str, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new one, never a mix."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # the rename itself survives a power cut once the folder is synced (POSIX only)
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


class ReportStore:
    """The last `limit` reports as JSON lines, oldest first on disk, newest first when read."""

    def __init__(self, path: str, limit: int = MAX_REPORTS):
        self.path, self.limit = path, limit
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        self._lock = _FileLock(path + LOCK_SUFFIX)

    def add(self, report: dict) -> dict:
        """Store a bounded copy of `report`; returns what was stored."""
        report = bound_report(report)
        line = json.dumps(report, default=str, ensure_ascii=False)
        with self._lock:
            lines = self._lines()
            lines.append(line)
            atomic_write(self.path, "\n".join(lines[-self.limit:]) + "\n")
        return report

    def _lines(self) -> list[str]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                return [line.rstrip("\n") for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def read(self, limit: int | None = None) -> list[dict]:
        lines = self._lines()  # os.replace makes every read see one whole version of the file
        out = []
        for line in reversed(lines):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a torn line (a crash before this store's atomic writes) is skipped, not fatal
            if limit and len(out) >= limit:
                break
        return out


_stores: dict[str, ReportStore] = {}
_stores_lock = threading.Lock()


def store_at(path: str) -> ReportStore:
    """One ReportStore per path in this process, created under a lock (the worker thread and the
    server's loop may both ask first)."""
    with _stores_lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = ReportStore(path)
        return store
