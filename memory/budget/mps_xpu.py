"""Apple silicon (torch.mps, unified memory) and Intel GPUs (torch.xpu)."""
from .common import Host, _allocator_stats, _why, device_entry

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
