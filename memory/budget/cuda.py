"""NVIDIA and AMD (ROCm) devices: torch.cuda's allocator numbers matched with the driver's (NVML / AMD SMI)."""
import os

from .common import _allocator_stats, _why, device_entry
from .smi import _AMDSMI, _NVML, _AmdDevice, _NvmlDevice, _norm_uuid, _text, parse_visible_devices

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
