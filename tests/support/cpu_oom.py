"""The fixW2 walk's CPU out-of-memory (ComfyUI --cpu, GGTestRaiseOOM's "cpu" message) and the host snapshot of that
host, as memory/budget/common.cpu_device gives it: shared by the triage unit test and the OOM panel's web test."""
GiB = 1024 ** 3
CPU_OOM = ("RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
           "to allocate 40000000000000 bytes. Error code 12 (Cannot allocate memory)\n")
# what memory/budget/common.cpu_device gives on a 23.54 GiB host with 10.71 GiB held by other programs (the walk's figures)
CPU_SNAP = {"devices": [{"index": 0, "name": "CPU (host RAM)", "backend": "cpu", "device": "cpu", "total": round(23.54 * GiB),
                         "free": round(8.11 * GiB), "other_processes": round(10.71 * GiB), "torch_reserved": None}],
            "host_ram": {}, "sampled_at": 0.0}
