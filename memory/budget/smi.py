"""Vendor management libraries (NVML for NVIDIA, AMD SMI for ROCm): initialised once per process, the
driver's view of each device and of the processes using it, and CUDA_VISIBLE_DEVICES parsing."""
import threading
import time

from .common import _why

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
    missing = "nvidia-ml-py is not installed (NVML reads NVIDIA cards only; with one, pip install nvidia-ml-py)"


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
