"""Live memory per device, split by owner. `probe.snapshot()` samples every backend and returns the wire
form (plain JSON-able dict; `probe.format_table` prints it). Backends: cuda.py (NVIDIA/ROCm: torch.cuda +
NVML/AMD SMI from smi.py), mps_xpu.py (Apple, Intel), common.py (device entry, host RAM)."""
