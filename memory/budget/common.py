"""What every backend of the probe shares: the device entry (one dict per device, bytes or None), the
allocator-stats reader for CUDA and XPU, host RAM (psutil or /proc) and host RAM as a device."""
import os

NUMBERS = ("total", "free", "torch_allocated", "torch_reserved", "reserved_unallocated",
           "this_process_other", "other_processes")


def device_entry(index, name, backend, device, **numbers) -> dict:
    d = {"index": index, "name": name, "backend": backend, "device": device}
    for k in NUMBERS:
        v = numbers.get(k)
        d[k] = None if v is None else int(v)
    if d["reserved_unallocated"] is None and d["torch_reserved"] is not None and d["torch_allocated"] is not None:
        d["reserved_unallocated"] = max(0, d["torch_reserved"] - d["torch_allocated"])
    d["models"] = []
    d["notes"] = list(numbers.get("notes") or ())
    return d


def model_label(m: dict) -> str:
    """The one name a user reads for a loaded model in text: the label the host gave it (nodes/host_models.model_label:
    "text encoder (SD1 CLIP)", "VAE"), else its class name (a snapshot made before labels, or without a host).
    web/lib/format.js modelLabel reads the same field with the same fallback."""
    return str(m.get("label") or m.get("name") or "model")


def _allocator_stats(backend, i, notes) -> tuple:
    """(allocated, reserved) from torch.cuda/torch.xpu memory_stats; (None, None) with a note when unavailable."""
    try:
        stats = backend.memory_stats(i)
        return stats.get("allocated_bytes.all.current", 0), stats.get("reserved_bytes.all.current", 0)
    except Exception as exc:
        notes.append(f"PyTorch allocator stats unavailable: {_why(exc)}")
        return None, None


def _why(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- host RAM --------------------------------------------------------------------------------------
class Host:
    """Host RAM and this process's resident memory, through psutil (or /proc on Linux without it)."""

    def __init__(self, psutil_module=None):
        self._psutil = psutil_module
        self._proc = None

    def _ps(self):
        if self._psutil is None:
            try:
                import psutil  # declared dependency; cheap after the first import
            except ImportError:
                psutil = False
            self._psutil = psutil
        return self._psutil

    def ram(self) -> dict:
        ps = self._ps()
        if ps:
            vm = ps.virtual_memory()
            return {"total": int(vm.total), "available": int(vm.available)}
        info = {}
        with open("/proc/meminfo") as f:  # psutil missing: Linux only
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    info[key] = int(rest.split()[0]) * 1024
        return {"total": info["MemTotal"], "available": info["MemAvailable"]}

    def rss(self) -> int:
        ps = self._ps()
        if ps:
            if self._proc is None:
                self._proc = ps.Process()
            return int(self._proc.memory_info().rss)
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cpu_device(host: Host, models_bytes: int = 0, notes=(), only=True) -> dict:
    """Host RAM as a device: the only budget without a GPU, and where models run on the CPU.
    "this process" = resident memory outside the listed models."""
    notes = (["no GPU backend: this is host RAM"] if only else ["host RAM (models run on the CPU)"]) + list(notes)
    total = avail = rss = None
    try:
        ram = host.ram()
        total, avail = ram["total"], ram["available"]
        rss = host.rss()
    except Exception as exc:
        notes.append(f"host memory unavailable: {_why(exc)}")
    this_other = others = None
    if rss is not None:
        this_other = max(0, rss - models_bytes)
        if total is not None and avail is not None:
            others = max(0, total - avail - max(rss, models_bytes))
    return device_entry(0, "CPU (host RAM)", "cpu", "cpu", total=total, free=avail, this_process_other=this_other,
                        other_processes=others, notes=notes)
