"""Per-node memory readings for the flight recorder, cheap enough for every node of every run.

- CUDA, ROCm, XPU: the allocator's peak since the last boundary (max_memory_allocated / max_memory_reserved,
  then reset_peak_memory_stats); free from mem_get_info; one device sync per node, at its end, so the
  node's queued kernels count toward its own time and peak.
- MPS: the driver's allocated memory, sampled (MPS keeps no peak).
- Host RAM ("cpu"): this process's peak RSS, sampled by one light thread that runs only while a node runs;
  free = available RAM. On a CPU-only host this is the node's peak.

Peaks are read at every boundary (node start and end) and folded into every open node by the caller, so
a node that contains others (a subgraph expansion, an async node) still gets the whole window's peak.
"""
import os
import threading
import time

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class _ProcReader:
    """Linux fast paths (a kept descriptor and one pread: ~1 us for RSS, ~15 us for MemAvailable, against
    ~20 us and ~60 us through psutil); None elsewhere, where psutil is used."""

    def __init__(self):
        self.statm = self.meminfo = None
        try:
            self.statm = os.open("/proc/self/statm", os.O_RDONLY)
            self.meminfo = os.open("/proc/meminfo", os.O_RDONLY)
            self.rss(), self.available()
        except (OSError, AttributeError, ValueError, IndexError):
            self.statm = self.meminfo = None

    def rss(self) -> int:
        return int(os.pread(self.statm, 128, 0).split()[1]) * _PAGE

    def available(self) -> int:
        for line in os.pread(self.meminfo, 4096, 0).splitlines():
            if line.startswith(b"MemAvailable:"):
                return int(line.split()[1]) * 1024
        raise ValueError("no MemAvailable")


class Sampler:
    """One daemon thread; sample() reads RSS (and MPS driver memory) every `interval` s while active."""

    def __init__(self, read, interval=0.01):
        self._read, self.interval = read, interval
        self._active = threading.Event()
        self.peak = read()
        self.samples = 0
        self._thread = threading.Thread(target=self._loop, name="gpu-garden-rss", daemon=True)
        self._thread.start()

    def _loop(self):
        while True:
            self._active.wait()
            try:
                v = self._read()
            except Exception:
                v = 0
            if v > self.peak:
                self.peak = v
            self.samples += 1
            time.sleep(self.interval)

    def start(self):
        self._active.set()

    def stop(self):
        self._active.clear()

    def take(self) -> int:
        """Peak since the last take (including now); the next window starts at the current value."""
        now = self._read()
        peak = max(self.peak, now)
        self.peak = now
        return peak


class Meter:
    """Readings for ComfyUI's compute device plus host RAM. Built from torch + the compute device (nodes/host_models.py)."""

    def __init__(self, torch=None, device=None, psutil=None, sample_interval=0.01):
        if psutil is None:
            import psutil
        self.psutil = psutil
        self.proc = psutil.Process()
        self._fast = _ProcReader() if os.path.exists("/proc/self/statm") else None
        if self._fast is not None and self._fast.statm is None:
            self._fast = None
        self.torch = torch
        self.device = device
        self.kind = getattr(device, "type", "cpu") if device is not None else "cpu"
        self.mod = None
        if torch is not None and self.kind in ("cuda", "xpu"):
            self.mod = getattr(torch, self.kind, None)
        self.key = self._key()
        self._mps = torch.mps if (torch is not None and self.kind == "mps") else None
        self.sampler = Sampler(self._rss, sample_interval)
        self.mps_sampler = Sampler(self._mps_driver, sample_interval) if self._mps is not None else None

    def _key(self) -> str:
        if self.kind == "cpu":
            return "cpu"
        idx = getattr(self.device, "index", None)
        if idx is None and self.mod is not None:
            try:
                idx = self.mod.current_device()
            except Exception:
                idx = 0
        return f"{self.kind}:{idx}" if idx is not None else self.kind

    def _rss(self) -> int:
        if self._fast is not None:
            return self._fast.rss()
        return self.proc.memory_info().rss

    def _available(self) -> int:
        if self._fast is not None:
            try:
                return self._fast.available()
            except (OSError, ValueError):
                pass
        return int(self.psutil.virtual_memory().available)

    def _mps_driver(self) -> int:
        return int(self._mps.driver_allocated_memory())

    # -- at boundaries ------------------------------------------------------------------------------
    def begin(self):
        self.sampler.start()
        if self.mps_sampler:
            self.mps_sampler.start()

    def idle(self):
        self.sampler.stop()
        if self.mps_sampler:
            self.mps_sampler.stop()

    def sync(self):
        if self.mod is not None:
            self.mod.synchronize(self.device)

    def take_peaks(self) -> tuple[dict, dict]:
        """({device: peak allocated}, {device: peak reserved}) since the last call; resets the window."""
        peak, reserved = {"cpu": self.sampler.take()}, {}
        if self.mod is not None:
            peak[self.key] = int(self.mod.max_memory_allocated(self.device))
            reserved[self.key] = int(self.mod.max_memory_reserved(self.device))
            self.mod.reset_peak_memory_stats(self.device)
        elif self.mps_sampler is not None:
            peak[self.key] = self.mps_sampler.take()
        return peak, reserved

    def free(self) -> dict:
        out = {"cpu": self._available()}
        if self.mod is not None and hasattr(self.mod, "mem_get_info"):
            out[self.key] = int(self.mod.mem_get_info(self.device)[0])
        elif self._mps is not None:
            try:
                total = int(self._mps.recommended_max_memory())
                out[self.key] = max(0, total - self._mps_driver())
            except Exception:
                pass
        return out

    def device_free_total(self) -> tuple:
        """(free, total) of the compute device (host RAM on CPU) for the watchdog's "pinned" rule."""
        if self.mod is not None and hasattr(self.mod, "mem_get_info"):
            free, total = self.mod.mem_get_info(self.device)
            return int(free), int(total)
        vm = self.psutil.virtual_memory()
        return int(vm.available), int(vm.total)
