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
import time

from .. import term
from ..errors import UserError
from ..units import fmt_bytes
from .common import NUMBERS, Host, _why, cpu_device, device_entry, model_label  # noqa: F401 - the probe's public names
from .cuda import CudaBackend
from .mps_xpu import MpsBackend, XpuBackend
from .smi import AmdSmi, Nvml, SmiLibrary, parse_visible_devices  # noqa: F401


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
    """Free memory on `device` ("cuda:0", "mps", "cpu", ...; default the first device): what a node downstream
    plans with. 0 when unknown, also for a device the snapshot does not list (DirectML, an XPU the probe could not
    read): another card's free memory would be a wrong answer, 0 makes a downstream plan careful. "cpu" (ComfyUI
    under --cpu) is host RAM even where the snapshot lists a GPU."""
    devs = list(snap.get("devices", ()))
    if device is not None:
        key = _device_key(device)
        mine = [d for d in devs if _device_key(d.get("device")) == key]
        if not mine and key[0] == "cpu":
            avail = (snap.get("host_ram") or {}).get("available")
            return int(avail) if avail is not None else 0
        devs = mine
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
            out.append(f"     model {model_label(m)}: {fmt_bytes(m['bytes'])}{flag}")
        for n in d["notes"]:
            out += term.wrap_lines([f"     note: {n}"])
    ram = snap["host_ram"]
    out.append(f"host RAM: {fmt_bytes(ram.get('available'))} available of {fmt_bytes(ram.get('total'))}")
    return "\n".join(out)


def demo_section(as_json: bool = False):
    snap = snapshot()
    return snap if as_json else format_table(snap)


MAX_WATCH_S = 86400


def run_cli(args) -> int:
    watch = getattr(args, "watch", None)
    if watch is not None and not 0 < watch <= MAX_WATCH_S:  # nan and inf too: time.sleep(inf) overflows
        raise UserError(f"--watch needs a positive number of seconds up to {MAX_WATCH_S} (a day), got {watch:g}")
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
