"""Where each device's memory is right now, split by owner: models the host holds, the rest of this
process's PyTorch memory, what PyTorch's allocator reserves but does not use, this process's memory
outside PyTorch (CUDA context, cuBLAS workspaces), other processes, and free.

Rules every backend follows: a snapshot never synchronizes a device, never initializes CUDA (or XPU)
in a process that has not, and never imports torch. A backend that fails leaves its numbers null and
says why in "notes"; snapshot() itself never raises. Backends are injectable so tests can drive each
one with fakes that return what real torch.cuda / torch.mps / pynvml calls return.
"""
import json
import os
import sys
import threading
import time

from ..errors import UserError
from ..units import fmt_bytes

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


# -- NVML ------------------------------------------------------------------------------------------
class SmiLibrary:
    """A vendor management library (pynvml, amdsmi), initialised once per process. A failure to import or
    initialise is remembered for `retry_s` seconds so a missing driver costs nothing per snapshot."""
    import_name, init_name, label, missing = "", "", "", ""

    def __init__(self, module=None, retry_s=60.0):
        self._module, self._ready, self._error, self._failed_at = module, False, None, 0.0
        self._retry_s = retry_s
        self._lock = threading.Lock()

    def get(self):
        """-> (module or None, reason or None)."""
        if self._ready:
            return self._module, None
        with self._lock:
            if self._ready:
                return self._module, None
            if self._error and time.monotonic() - self._failed_at < self._retry_s:
                return None, self._error
            try:
                if self._module is None:
                    import importlib
                    import warnings
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # the old `pynvml` wrapper warns on import
                        self._module = importlib.import_module(self.import_name)
                getattr(self._module, self.init_name)()
                self._ready, self._error = True, None
                return self._module, None
            except ImportError:
                self._error = f"{self.label} not available: {self.missing}"
            except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, _LibRmVersionMismatch, ...
                self._error = f"{self.label} not available: {_why(exc)}"
            self._failed_at = time.monotonic()
            return None, self._error


class Nvml(SmiLibrary):
    import_name, init_name, label = "pynvml", "nvmlInit", "NVML"
    missing = "nvidia-ml-py is not installed (NVIDIA GPUs: pip install nvidia-ml-py)"


class AmdSmi(SmiLibrary):
    import_name, init_name, label = "amdsmi", "amdsmi_init", "AMD SMI"
    missing = "amdsmi is not installed (AMD GPUs: the amdsmi package of your ROCm version)"


_NVML = Nvml()
_AMDSMI = AmdSmi()


def _text(v) -> str:
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _norm_uuid(u) -> str:
    u = _text(u).strip().lower()
    return u[4:] if u.startswith("gpu-") else u


def parse_visible_devices(value):
    """CUDA_VISIBLE_DEVICES as CUDA reads it: None (all), a list of ordinals, or a list of UUID
    prefixes ("GPU-..."/"MIG-..."). Parsing stops at the first invalid entry; a repeat empties it."""
    if value is None:
        return None
    value = value.strip()
    if value.startswith(("GPU-", "MIG-")):
        prefix, out = value[:4], []
        for elem in value.split(","):
            elem = elem.strip()
            if not elem.startswith(prefix):
                break
            if elem in out:
                return []
            out.append(elem)
        return out
    out = []
    for elem in value.split(","):
        digits = ""
        for c in elem.strip():
            if not c.isdigit():
                break
            digits += c
        if not digits:
            break
        n = int(digits)
        if n in out:
            return []
        out.append(n)
    return out


class _NvmlDevice:
    def __init__(self, nv, nvml_index):
        self.nv, self.nvml_index = nv, nvml_index
        self.handle = nv.nvmlDeviceGetHandleByIndex(nvml_index)
        self.uuid = _norm_uuid(nv.nvmlDeviceGetUUID(self.handle))
        self.name = _text(nv.nvmlDeviceGetName(self.handle))
        try:
            pci = nv.nvmlDeviceGetPciInfo(self.handle)
            self.pci = (int(pci.domain), int(pci.bus), int(pci.device))
        except Exception:
            self.pci = None

    def memory(self):
        mi = self.nv.nvmlDeviceGetMemoryInfo(self.handle)
        return int(mi.total), int(mi.free)

    def processes(self) -> dict:
        """pid -> bytes (None where the driver does not say: WDDM, some containers)."""
        out = {}
        for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            fn = getattr(self.nv, getter, None)
            if fn is None:
                continue
            for p in fn(self.handle):
                used = getattr(p, "usedGpuMemory", None)
                prev = out.get(p.pid)
                out[p.pid] = used if prev is None else max(prev, used or 0)
        return out


class _AmdDevice:
    """An AMD GPU through amdsmi: same interface as _NvmlDevice. amdsmi reports VRAM in MiB."""

    def __init__(self, smi, handle):
        self.smi, self.handle, self.uuid, self.pci, self.hip_id = smi, handle, None, None, None
        try:
            self.name = _text(smi.amdsmi_get_gpu_asic_info(handle).get("market_name") or "AMD GPU")
        except Exception:
            self.name = "AMD GPU"
        try:
            bdf = _text(smi.amdsmi_get_gpu_device_bdf(handle))  # "0000:03:00.0"
            dom, bus, rest = bdf.split(":")
            self.pci = (int(dom, 16), int(bus, 16), int(rest.split(".")[0], 16))
        except Exception:
            pass
        try:  # ROCm 6.4+: the HIP ordinal, which differs from amdsmi's order on some systems
            self.hip_id = int(smi.amdsmi_get_gpu_enumeration_info(handle)["hip_id"])
        except Exception:
            pass

    def memory(self):
        u = self.smi.amdsmi_get_gpu_vram_usage(self.handle)
        total, used = int(u["vram_total"]) * (1 << 20), int(u["vram_used"]) * (1 << 20)
        return total, max(0, total - used)

    def processes(self) -> dict:
        out = {}
        for p in self.smi.amdsmi_get_gpu_process_list(self.handle):
            if not isinstance(p, dict):  # ROCm 6.0 returns handles
                p = self.smi.amdsmi_get_gpu_process_info(self.handle, p)
            mem = (p.get("memory_usage") or {}).get("vram_mem")
            out[int(p["pid"])] = None if mem is None else int(mem)
        return out


# -- backends --------------------------------------------------------------------------------------
class CudaBackend:
    """NVIDIA through torch.cuda (allocator stats, only once this process initialized CUDA) and NVML
    (driver view, per-process use; works without torch). On ROCm (hip=True) torch.cuda is HIP and
    NVML does not apply."""

    def __init__(self, cuda=None, nvml=None, *, hip=False, env=None, pid=None):
        self.cuda, self.hip = cuda, hip
        self.nvml = nvml if nvml is not None else (_AMDSMI if hip else _NVML)  # amdsmi on ROCm
        self.env = os.environ if env is None else env
        self.pid = os.getpid() if pid is None else pid
        self.name = "rocm" if hip else "cuda"
        self.smi_label = "AMD SMI" if hip else "NVML"

    def _torch_ready(self) -> bool:
        try:
            return self.cuda is not None and bool(self.cuda.is_initialized())
        except Exception:
            return False

    def _nvml_devices(self, notes):
        """All NVML devices in NVML order, or None."""
        if self.nvml is None:
            return None
        nv, err = self.nvml.get()
        if nv is None:
            notes.append(err)
            return None
        try:
            if self.hip:
                devs = [_AmdDevice(nv, h) for h in nv.amdsmi_get_processor_handles()]
                if all(d.hip_id is not None for d in devs):
                    devs.sort(key=lambda d: d.hip_id)
                return devs
            return [_NvmlDevice(nv, i) for i in range(nv.nvmlDeviceGetCount())]
        except Exception as exc:
            notes.append(f"{self.smi_label} failed: {_why(exc)}")
            return None

    def _visible(self, nvml_devs, notes):
        """NVML devices in CUDA order when torch cannot tell (CUDA_VISIBLE_DEVICES applied; on ROCm
        HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES, after ROCR_VISIBLE_DEVICES)."""
        var = self.env.get("CUDA_VISIBLE_DEVICES")
        if self.hip:
            rocr = parse_visible_devices(self.env.get("ROCR_VISIBLE_DEVICES"))
            if rocr is not None:
                if rocr and isinstance(rocr[0], int):
                    nvml_devs = [nvml_devs[n] for n in rocr if n < len(nvml_devs)]
                else:
                    notes.append("ROCR_VISIBLE_DEVICES by UUID is not mapped; showing all AMD GPUs")
            var = self.env.get("HIP_VISIBLE_DEVICES", var)
        vis = parse_visible_devices(var)
        if vis is None:
            out = list(nvml_devs)
        elif vis and isinstance(vis[0], str):
            if vis[0].startswith("MIG-"):
                notes.append("CUDA_VISIBLE_DEVICES names MIG instances; NVML shows whole GPUs")
                return []
            out = []
            for cand in vis:
                hits = [d for d in nvml_devs if d.uuid.startswith(_norm_uuid(cand))]
                if len(hits) != 1:
                    break
                out.append(hits[0])
        else:
            out = []
            for n in vis:
                if n >= len(nvml_devs):
                    break
                out.append(nvml_devs[n])
        if not self.hip and len(out) > 1 and len({d.name for d in out}) > 1 and self.env.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
            notes.append("CUDA may number these GPUs fastest-first, not in this (PCI bus) order; "
                         "set CUDA_DEVICE_ORDER=PCI_BUS_ID to make the indices agree")
        return out

    def _match(self, props, nvml_devs, index, visible):
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            u = _norm_uuid(uuid)
            for d in nvml_devs:
                if d.uuid == u:
                    return d
        pci = tuple(getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id"))
        if None not in pci:
            for d in nvml_devs:
                if d.pci == pci:
                    return d
        return visible[index] if index < len(visible) else None

    def devices(self):
        notes, out = [], []
        torch_ready = self._torch_ready()
        nvml_devs = self._nvml_devices(notes)
        if not torch_ready and nvml_devs is None:
            return out, notes
        visible = self._visible(nvml_devs, notes) if nvml_devs is not None else []
        if torch_ready:
            try:
                count = int(self.cuda.device_count())
            except Exception as exc:
                notes.append(f"torch.cuda.device_count failed: {_why(exc)}")
                count = 0
            try:
                alloc_backend = self.cuda.get_allocator_backend()
            except Exception:
                alloc_backend = None
            for i in range(count):
                out.append(self._torch_device(i, nvml_devs, visible, alloc_backend))
        else:
            for i, d in enumerate(visible):
                out.append(self._nvml_device(i, d, None, None))
        return out, notes

    def _torch_device(self, i, nvml_devs, visible, alloc_backend):
        notes, name, alloc = [], f"{self.name} device {i}", None
        reserved = props = None
        try:
            props = self.cuda.get_device_properties(i)
            name = props.name
        except Exception as exc:
            notes.append(f"device properties unavailable: {_why(exc)}")
        alloc, reserved = _allocator_stats(self.cuda, i, notes)
        if alloc_backend == "cudaMallocAsync":
            notes.append("allocator: cudaMallocAsync (reserved = the CUDA memory pool's reserved memory)")
        nd = self._match(props, nvml_devs, i, visible) if nvml_devs is not None and props is not None else None
        if nd is not None:
            return self._nvml_device(i, nd, alloc, reserved, name=name, notes=notes)
        total = free = None
        if nvml_devs is not None:
            notes.append(f"no {self.smi_label} device matches this GPU's UUID or PCI address")
        # cudaMemGetInfo needs a context on the device; PyTorch holding memory there means one exists,
        # and asking for it then neither creates a context nor synchronizes.
        if reserved:
            try:
                free, total = self.cuda.mem_get_info(i)
            except Exception as exc:
                notes.append(f"cudaMemGetInfo failed: {_why(exc)}")
        if total is None and props is not None:
            total = getattr(props, "total_memory", None)
        if self.hip and nvml_devs is None:
            notes.append("other processes: not measured without amdsmi")
        return device_entry(i, name, self.name, f"cuda:{i}", total=total, free=free, torch_allocated=alloc,
                            torch_reserved=reserved, notes=notes)

    def _nvml_device(self, i, nd, alloc, reserved, name=None, notes=None):
        notes = list(notes or ())
        total = free = this_other = others = None
        try:
            total, free = nd.memory()
        except Exception as exc:
            notes.append(f"{self.smi_label} memory info failed: {_why(exc)}")
        try:
            procs = nd.processes()
        except Exception as exc:
            procs = None
            notes.append(f"{self.smi_label} process list failed: {_why(exc)}")
        if procs is not None:
            found_me = self.pid in procs
            mine = procs.pop(self.pid, None)
            unknown = [pid for pid, used in procs.items() if used is None]
            if unknown:
                notes.append("the driver does not report per-process memory here (e.g. Windows WDDM)")
            if not found_me and reserved:
                # We hold memory here, yet NVML lists no process with our pid: its pids are from another
                # namespace (a container). Our own use cannot be told apart from the others'.
                notes.append(f"this process is not in {self.smi_label}'s process list (container pid namespace?); "
                             "other processes and non-PyTorch use are not separable")
            else:
                if not unknown:
                    others = sum(procs.values())
                if found_me and mine is not None:
                    this_other = mine if reserved is None else max(0, mine - reserved)
        return device_entry(i, name or nd.name, self.name, f"cuda:{i}", total=total, free=free,
                            torch_allocated=alloc, torch_reserved=reserved, this_process_other=this_other,
                            other_processes=others, notes=notes)


class MpsBackend:
    """Apple silicon through torch.mps. Unified memory: the device budget is Metal's recommended working
    set; free = min(that budget minus what the driver holds for this process, host RAM available)."""
    name = "mps"

    def __init__(self, mps, host=None):
        self.mps, self.host = mps, host or Host()

    def devices(self):
        notes = ["unified memory: shared with the CPU; other processes are not measured by Metal"]
        alloc = driver = total = free = None
        try:
            alloc = self.mps.current_allocated_memory()
            driver = self.mps.driver_allocated_memory()
        except Exception as exc:
            notes.append(f"torch.mps memory stats failed: {_why(exc)}")
        try:
            total = self.mps.recommended_max_memory()
        except Exception as exc:
            notes.append(f"recommended_max_memory unavailable (PyTorch < 2.3?): {_why(exc)}")
        try:
            avail = self.host.ram()["available"]
        except Exception:
            avail = None
        if total is not None and driver is not None:
            free = max(0, total - driver)
            if avail is not None:
                free = min(free, avail)
        return [device_entry(0, "Apple GPU (Metal)", "mps", "mps", total=total, free=free, torch_allocated=alloc,
                             torch_reserved=driver, notes=notes)], []


class XpuBackend:
    """Intel GPUs through torch.xpu (only once this process initialized XPU)."""
    name = "xpu"

    def __init__(self, xpu):
        self.xpu = xpu

    def devices(self):
        out = []
        try:
            if not self.xpu.is_initialized():
                return [], []
            count = int(self.xpu.device_count())
        except Exception as exc:
            return [], [f"XPU failed: {_why(exc)}"]
        for i in range(count):
            notes, name, total, free, alloc, reserved = [], f"xpu device {i}", None, None, None, None
            try:
                props = self.xpu.get_device_properties(i)
                name, total = props.name, props.total_memory
            except Exception as exc:
                notes.append(f"device properties unavailable: {_why(exc)}")
            alloc, reserved = _allocator_stats(self.xpu, i, notes)
            try:
                free, total = self.xpu.mem_get_info(i)
            except Exception as exc:
                notes.append(f"free memory unavailable (set ZES_ENABLE_SYSMAN=1?): {_why(exc)}")
            out.append(device_entry(i, name, "xpu", f"xpu:{i}", total=total, free=free, torch_allocated=alloc,
                                    torch_reserved=reserved, notes=notes))
        return out, []


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


def default_backends(host=None) -> list:
    """What this process can ask without side effects. torch is used only if it is already imported."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "cuda"):
        # the vendor libraries alone: the CLI, or a host without torch (/dev/kfd: the ROCm kernel driver)
        return [CudaBackend(None)] + ([CudaBackend(None, hip=True)] if os.path.exists("/dev/kfd") else [])
    hip = bool(getattr(getattr(torch, "version", None), "hip", None))
    backends = [CudaBackend(torch.cuda, hip=hip)]
    try:
        if torch.backends.mps.is_available():
            backends.append(MpsBackend(torch.mps, host))
    except Exception:
        pass
    if hasattr(torch, "xpu"):
        backends.append(XpuBackend(torch.xpu))
    return backends


# -- snapshot --------------------------------------------------------------------------------------
_HOST = Host()


def _device_key(dev: str):
    dev = str(dev or "").strip().lower()
    kind, _, idx = dev.partition(":")
    return kind, int(idx) if idx.isdigit() else 0


def snapshot(models=None, *, backends=None, host=None) -> dict:
    """One dict per device plus host RAM, in bytes; missing numbers are None. `models`: the host's loaded
    models as dicts with "name", "bytes" and "device" ("cuda:0", "mps", "cpu", ...)."""
    host = host or _HOST
    sampled_at = time.time()
    if backends is None:
        backends = default_backends(host)
    devices, notes = [], []
    for b in backends:
        try:
            devs, bnotes = b.devices()
            devices.extend(devs)
            notes.extend(n for n in bnotes if n)
        except Exception as exc:
            notes.append(f"{getattr(b, 'name', type(b).__name__)} backend failed: {_why(exc)}")
    models = [m for m in (models or ()) if isinstance(m, dict)]
    cpu_models = [m for m in models if _device_key(m.get("device"))[0] == "cpu"]
    if not devices or cpu_models:
        on_cpu = sum(int(m.get("bytes") or 0) for m in cpu_models)
        devices.append(cpu_device(host, on_cpu, notes if not devices else (), only=not devices))
    by_key = {}
    for d in devices:
        by_key.setdefault(_device_key(d["device"]), d)
    for m in models:
        d = by_key.get(_device_key(m.get("device")))
        if d is not None:
            entry = {k: v for k, v in m.items() if k != "device"}
            entry["name"], entry["bytes"] = str(m.get("name") or "model"), int(m.get("bytes") or 0)
            d["models"].append(entry)
    try:
        host_ram = host.ram()
    except Exception as exc:
        host_ram = {"total": None, "available": None}
        notes.append(f"host memory unavailable: {_why(exc)}")
    return {"devices": devices, "host_ram": host_ram, "sampled_at": sampled_at, "notes": notes}


def free_bytes(snap: dict, device: str | None = None) -> int:
    """Free memory on `device` ("cuda:0", "mps", ...; default the first device): what a node downstream
    plans with. 0 when unknown."""
    devs = list(snap.get("devices", ()))
    if device is not None:
        key = _device_key(device)
        devs = [d for d in devs if _device_key(d.get("device")) == key] or devs
    for d in devs:
        if d.get("free") is not None:
            return int(d["free"])
    return 0


# -- text ------------------------------------------------------------------------------------------
def _g(n) -> str:
    return "—" if n is None else f"{n / (1 << 30):.2f}"


COLUMNS = (("total", "total"), ("free", "free"), ("models", None), ("torch other", None),
           ("reserved-unalloc", "reserved_unallocated"), ("this proc other", "this_process_other"),
           ("other procs", "other_processes"))


def model_bytes(d: dict) -> int:
    return sum(int(m.get("bytes") or 0) for m in d.get("models", ()))


def torch_other(d: dict):
    if d.get("torch_allocated") is None:
        return None
    return max(0, d["torch_allocated"] - model_bytes(d))


def format_table(snap: dict) -> str:
    """Numbers in GiB; "—" = not measured on this backend."""
    head = ["#", "device", "backend"] + [c for c, _ in COLUMNS]
    rows = []
    for d in snap["devices"]:
        vals = []
        for col, key in COLUMNS:
            vals.append(_g(model_bytes(d) if col == "models" else torch_other(d) if col == "torch other" else d.get(key)))
        rows.append([str(d["index"]), d["name"], d["backend"]] + vals)
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap["sampled_at"]))
    out = [f"GPU Garden memory budget, {when} (GiB)", line(head)]
    for d, r in zip(snap["devices"], rows):
        out.append(line(r))
        for m in d["models"]:
            flag = " (partially loaded)" if m.get("partial") else ""
            out.append(f"     model {m['name']}: {fmt_bytes(m['bytes'])}{flag}")
        for n in d["notes"]:
            out.append(f"     note: {n}")
    ram = snap["host_ram"]
    out.append(f"host RAM: {fmt_bytes(ram.get('available'))} available of {fmt_bytes(ram.get('total'))}")
    return "\n".join(out)


def demo_section(as_json: bool = False):
    snap = snapshot()
    return snap if as_json else format_table(snap)


def run_cli(args) -> int:
    watch = getattr(args, "watch", None)
    if watch is not None and not watch > 0:
        raise UserError(f"--watch needs a positive number of seconds, got {watch}")
    as_json = getattr(args, "json", False)
    clear = watch is not None and not as_json and sys.stdout.isatty()
    while True:
        snap = snapshot()
        if as_json:
            # one JSON document per line under --watch (JSON Lines), pretty otherwise
            print(json.dumps(snap) if watch else json.dumps(snap, indent=2), flush=True)
        else:
            if clear:
                sys.stdout.write("\x1b[H\x1b[2J")
            print(format_table(snap) + ("" if clear or watch is None else "\n"), flush=True)
        if watch is None:
            return 0
        time.sleep(watch)
