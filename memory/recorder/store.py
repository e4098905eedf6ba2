"""The run store: the last MAX_RUNS runs as compact JSON lines (oldest first on disk, newest first when
read), in ComfyUI's user directory. Every write replaces the file atomically (mkstemp in the same folder,
fsync, os.replace) under an exclusive lock on "<file>.lock" (memory/filelock.py, held across processes: two
ComfyUI processes on one user directory keep each other's runs), so a crash mid-write leaves the previous file
whole; a torn or foreign line is skipped on read, never fatal. Writes go through `Writer`, a daemon thread, so
ComfyUI's worker never waits for the disk."""
import json
import logging
import os
import queue
import tempfile
import threading

from ..filelock import FileLock

log = logging.getLogger("gpu_garden")

MAX_RUNS = 200
MAX_LINE = 4 * 1024 * 1024  # a longer line is not a run this recorder wrote


def dumps(run: dict) -> str:
    return json.dumps(run, separators=(",", ":"), default=str, ensure_ascii=False)


def read_lines(f, max_line: int = MAX_LINE):
    """The lines of a text file, each read at most max_line + 1 characters at a time: a longer line (not one this
    recorder wrote: a wrong file, a torn write) is skipped chunk by chunk, never held whole in memory."""
    while True:
        line = f.readline(max_line + 1)
        if not line:
            return
        if len(line) <= max_line or line.endswith("\n"):
            if len(line) <= max_line:
                yield line
            continue
        while line and not line.endswith("\n"):  # the rest of the overlong line
            line = f.readline(max_line + 1)


def parse_lines(lines) -> list[dict]:
    out = []
    for line in lines:
        if not line.strip() or len(line) > MAX_LINE:
            continue
        try:
            run = json.loads(line)
        except ValueError:
            continue
        if isinstance(run, dict) and isinstance(run.get("prompt_id"), str) and isinstance(run.get("nodes"), list):
            out.append(run)
    return out


class RunStore:
    def __init__(self, path: str, limit: int = MAX_RUNS):
        self.path, self.limit = str(path), int(limit)
        self._lock = threading.Lock()  # this process's cache
        self._file_lock = FileLock(self.path + ".lock")  # every process's read-modify-write
        self._cache = None  # (stat key, runs oldest first)

    def _stat_key(self):
        """The file's version: os.replace gives each write a new inode, so a same-size write by another process
        within one tick of a coarse mtime clock still reads as new."""
        try:
            st = os.stat(self.path)
            return (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return None

    def _parse(self) -> list[dict]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                return parse_lines(read_lines(f))
        except FileNotFoundError:
            return []

    def _load(self) -> list[dict]:
        key = self._stat_key()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        runs = [] if key is None else self._parse()
        self._cache = (key, runs)
        return runs

    def add(self, run: dict) -> None:
        """Writers queue on the file lock only; the cache lock is held just to publish the new runs, so a reader
        (ComfyUI's worker, through the Footprint Estimate) never waits for a parse or an fsync."""
        line = dumps(run)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with self._file_lock:
            runs = [r for r in self._parse() if r.get("prompt_id") != run.get("prompt_id")]  # the file: the truth
            runs.append(json.loads(line))
            self._write(runs[-self.limit:])

    def _write(self, runs: list[dict]) -> None:
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".runs-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for r in runs:
                    f.write(dumps(r) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        key = self._stat_key()
        with self._lock:
            self._cache = (key, runs)

    def read(self, limit: int | None = None) -> list[dict]:
        with self._lock:
            runs = list(self._load())
        runs.reverse()
        return runs[:limit] if limit else runs

    def get(self, prompt_id: str) -> dict | None:
        for r in self.read():
            if r.get("prompt_id") == prompt_id:
                return r
        return None

    def clear(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with self._file_lock:
            self._write([])


class Writer:
    """One daemon thread that runs submitted jobs in order. submit() never blocks: when the queue is full
    (the disk hangs), the job is dropped and counted."""

    def __init__(self, name="gpu-garden-recorder", maxsize=64):
        self._q = queue.Queue(maxsize=maxsize)
        self.dropped = 0
        self.done = 0
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn, *args) -> bool:
        try:
            self._q.put_nowait((fn, args))
            return True
        except queue.Full:
            self.dropped += 1
            return False

    def _loop(self):
        while True:
            fn, args = self._q.get()
            try:
                fn(*args)
            except Exception:
                log.exception("[GPU Garden] recorder: a background job failed")
            finally:
                self.done += 1
                self._q.task_done()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every job submitted so far has run (tests, shutdown)."""
        ev = threading.Event()
        try:
            self._q.put((ev.set, ()), timeout=timeout)
        except queue.Full:
            return False
        return ev.wait(timeout)
