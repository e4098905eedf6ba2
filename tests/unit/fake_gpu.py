"""Stand-ins for pynvml (nvidia-ml-py), torch.cuda, torch.mps and torch.xpu that return what the real
calls return (same names, same shapes, same exception classes by name), so the probe's logic runs
unchanged on a machine without a GPU."""
from types import SimpleNamespace

GiB, MiB = 1 << 30, 1 << 20


# -- pynvml ----------------------------------------------------------------------------------------
class NVMLError(Exception):
    """pynvml raises subclasses named NVMLError_<Code>; str() is nvmlErrorString(code)."""
    value = 999
    text = "Unknown Error"

    def __str__(self):
        return self.text


class NVMLError_DriverNotLoaded(NVMLError):
    value, text = 9, "Driver Not Loaded"


class NVMLError_LibraryNotFound(NVMLError):
    value, text = 12, "NVML Shared Library Not Found"


class NVMLError_LibRmVersionMismatch(NVMLError):
    value, text = 18, "RM has detected an NVML/RM version mismatch."


class NVMLError_NotSupported(NVMLError):
    value, text = 3, "Not Supported"


class FakeNvmlGpu:
    def __init__(self, uuid, name, pci, total, free, procs=(), graphics=()):
        self.uuid, self.name, self.pci, self.total, self.free = uuid, name, pci, total, free
        self.procs = list(procs)  # (pid, usedGpuMemory or None)
        self.graphics = list(graphics)


class FakePynvml:
    NVMLError = NVMLError

    def __init__(self, gpus, init_error=None, process_error=None):
        self.gpus, self.init_error, self.process_error = gpus, init_error, process_error
        self.init_calls = 0

    def nvmlInit(self):
        self.init_calls += 1
        if self.init_error is not None:
            raise self.init_error

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i):
        return self.gpus[i]

    def nvmlDeviceGetUUID(self, h):
        return h.uuid  # nvidia-ml-py >= 11.515 returns str ("GPU-xxxxxxxx-...")

    def nvmlDeviceGetName(self, h):
        return h.name.encode()  # older bindings return bytes

    def nvmlDeviceGetPciInfo(self, h):
        dom, bus, dev = h.pci
        return SimpleNamespace(domain=dom, bus=bus, device=dev, busId=f"{dom:08X}:{bus:02X}:{dev:02X}.0")

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(total=h.total, free=h.free, used=h.total - h.free)

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        if self.process_error is not None:
            raise self.process_error
        return [SimpleNamespace(pid=p, usedGpuMemory=m, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)
                for p, m in h.procs]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):
        return [SimpleNamespace(pid=p, usedGpuMemory=m) for p, m in h.graphics]


class AmdSmiLibraryException(Exception):
    def __init__(self, err_code, text):
        super().__init__(f"Error code:\n\t{err_code} | {text}")
        self.err_code = err_code


class FakeAmdGpu:
    def __init__(self, name, bdf, hip_id, total_mib, used_mib, procs=()):
        self.name, self.bdf, self.hip_id, self.total_mib, self.used_mib = name, bdf, hip_id, total_mib, used_mib
        self.procs = list(procs)  # (pid, vram bytes)


class FakeAmdSmi:
    """amdsmi (ROCm 6.1+): dict process list, VRAM usage in MiB, enumeration info with hip_id (6.4+)."""

    def __init__(self, gpus, init_error=None, legacy_process_handles=False):
        self.gpus, self.init_error, self.legacy = gpus, init_error, legacy_process_handles

    def amdsmi_init(self, *a):
        if self.init_error is not None:
            raise self.init_error

    def amdsmi_get_processor_handles(self):
        return list(self.gpus)

    def amdsmi_get_gpu_asic_info(self, h):
        return {"market_name": h.name, "vendor_id": "0x1002", "asic_serial": "0xD1A2B3C4D5E6F708"}

    def amdsmi_get_gpu_device_bdf(self, h):
        return h.bdf

    def amdsmi_get_gpu_enumeration_info(self, h):
        if h.hip_id is None:
            raise AmdSmiLibraryException(2, "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported")
        return {"drm_render": 128 + h.hip_id, "drm_card": h.hip_id, "hsa_id": h.hip_id + 1, "hip_id": h.hip_id}

    def amdsmi_get_gpu_vram_usage(self, h):
        return {"vram_total": h.total_mib, "vram_used": h.used_mib}

    def amdsmi_get_gpu_process_list(self, h):
        items = [{"name": "python3", "pid": pid, "mem": vram,
                  "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": vram}} for pid, vram in h.procs]
        return [SimpleNamespace(value=i) for i in items] if self.legacy else items

    def amdsmi_get_gpu_process_info(self, h, p):
        return p.value


class Forbidden(AssertionError):
    pass


# -- torch.cuda ------------------------------------------------------------------------------------
class FakeCuda:
    """torch.cuda after (or before) initialization. Calls that would initialize CUDA or need a context
    raise Forbidden unless the test allows them."""

    def __init__(self, devices, initialized=True, allocator="native"):
        self.devices, self.initialized, self.allocator = devices, initialized, allocator
        self.calls = []

    def _guard(self, name):
        self.calls.append(name)
        if not self.initialized:
            raise Forbidden(f"torch.cuda.{name} called before CUDA was initialized")

    def is_initialized(self):
        return self.initialized

    def device_count(self):
        self._guard("device_count")
        return len(self.devices)

    def get_device_properties(self, i):
        self._guard("get_device_properties")
        return self.devices[i]["props"]

    def memory_stats(self, i):
        self._guard("memory_stats")
        d = self.devices[i]
        return {"allocated_bytes.all.current": d["allocated"], "reserved_bytes.all.current": d["reserved"],
                "num_alloc_retries": 0}

    def mem_get_info(self, i):
        self._guard("mem_get_info")
        d = self.devices[i]
        if not d["reserved"]:
            raise Forbidden("mem_get_info on a device without a context would create one")
        return d["free"], d["props"].total_memory

    def get_allocator_backend(self):
        return self.allocator

    def synchronize(self, *a):
        raise Forbidden("a snapshot must never synchronize")


def cuda_props(name, uuid, total, pci=(0, 0, 0)):
    return SimpleNamespace(name=name, uuid=uuid, total_memory=total, major=8, minor=9, multi_processor_count=128,
                           pci_domain_id=pci[0], pci_bus_id=pci[1], pci_device_id=pci[2])


# -- torch.mps / torch.xpu -------------------------------------------------------------------------
class FakeMps:
    def __init__(self, allocated, driver, recommended, fail=None):
        self.allocated, self.driver, self.recommended, self.fail = allocated, driver, recommended, fail

    def current_allocated_memory(self):
        if self.fail:
            raise self.fail
        return self.allocated

    def driver_allocated_memory(self):
        return self.driver

    def recommended_max_memory(self):
        return self.recommended


class FakeXpu:
    def __init__(self, devices, initialized=True, sysman=True):
        self.devices, self.initialized, self.sysman = devices, initialized, sysman

    def is_initialized(self):
        return self.initialized

    def device_count(self):
        if not self.initialized:
            raise Forbidden("device_count before init")
        return len(self.devices)

    def get_device_properties(self, i):
        return SimpleNamespace(name=self.devices[i]["name"], total_memory=self.devices[i]["total"])

    def memory_stats(self, i):
        d = self.devices[i]
        return {"allocated_bytes.all.current": d["allocated"], "reserved_bytes.all.current": d["reserved"]}

    def mem_get_info(self, i):
        if not self.sysman:
            raise RuntimeError("The device (Intel(R) Arc(TM) A770 Graphics) doesn't support querying the "
                               "available free memory. You can file an issue at https://github.com/pytorch/pytorch/issues "
                               "to help us prioritize its implementation.")
        return self.devices[i]["free"], self.devices[i]["total"]


class FakeHost:
    def __init__(self, total=32 * GiB, available=20 * GiB, rss=3 * GiB):
        self.total, self.available, self._rss = total, available, rss

    def ram(self):
        return {"total": self.total, "available": self.available}

    def rss(self):
        return self._rss


class StaticNvml:
    """The probe's Nvml holder, already resolved to a fake module (or to a failure)."""

    def __init__(self, module=None, error=None):
        self.module, self.error = module, error

    def get(self):
        return (self.module, None) if self.module is not None else (None, self.error)
