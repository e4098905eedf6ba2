"""fix34 item 2: the generic `other` guide for a failure in host RAM.

A failure whose device is the CPU (PyTorch's DefaultCPUAllocator) with the cause `other` (here a request no machine holds,
81 TiB: a size computed wrong) opened its guide with nvidia-smi. The guide variant follows the device, as mps-memory's and
the fragmentation guides' `platforms` do: guides/other-host-ram.md (platforms [cpu]) leads with the RAM. The ComfyUI panel
passes the host's backend ("cuda" on a GPU machine) in its context: the device of the failure, not the host's backend,
picks the variant. Logs written here from alloc_cpu.cpp's own messages (Linux's posix_memalign form, Windows' form) and
ComfyUI's own lines, not copied from the corpus."""
from gpu_garden.memory.triage import engine, guides

REQUEST = 89060441849856          # 81 TiB: no machine's RAM
LINUX = ("Traceback (most recent call last):\n"
         '  File "/home/ana/mesh/sample.py", line 57, in <module>\n'
         "    dist = torch.cdist(points, points)\n"
         "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
         f"to allocate {REQUEST} bytes. Error code 12 (Cannot allocate memory)\n")
COMFY = ("Total VRAM 24564 MB, total RAM 65298 MB\n"
         "pytorch version: 2.5.1+cu124\n"
         "Set vram state to: NORMAL_VRAM\n"
         "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync\n"
         "got prompt\n"
         "!!! Exception during processing !!! [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough "
         f"memory: you tried to allocate {REQUEST} bytes.\n"
         "Traceback (most recent call last):\n"
         '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
         "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
         '  File "/srv/ComfyUI/custom_nodes/region-masks/nodes.py", line 88, in run\n'
         "    index = torch.zeros((n, h, w), dtype=torch.int64)\n"
         "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to "
         f"allocate {REQUEST} bytes.\n")
CUDA = ("Traceback (most recent call last):\n"
        '  File "/home/ana/mesh/sample.py", line 57, in <module>\n'
        "    dist = torch.cdist(points, points)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 81.00 TiB. GPU 0 has a total capacity of 23.55 GiB "
        "of which 21.90 GiB is free. Including non-PyTorch memory, this process has 1.64 GiB memory in use. Of the allocated "
        "memory 1.12 GiB is allocated by PyTorch, and 0.27 GiB is reserved by PyTorch but unallocated.\n")


def _guide(text, context=None):
    res = engine.triage_text(text, context)
    ev = res["events"][-1]
    return res["cause"], ev["device_kind"], ev["guide"]


def test_a_cpu_failure_of_cause_other_opens_with_the_ram_not_nvidia_smi():
    cause, device, guide = _guide(LINUX)
    assert (cause, device) == ("other", "cpu")
    assert guide["id"] == "other-host-ram"
    first = guide["markdown"].split("\n\n1.")[1].split("\n2.")[0]
    assert "free -h" in first and "nvidia-smi" not in guide["markdown"]


def test_the_device_picks_the_variant_when_the_panel_says_the_host_is_cuda():
    # the panel's context: a CUDA host; the failure's own device is the CPU
    cause, device, guide = _guide(COMFY, {"backend": "cuda", "platform": "linux", "node_type": "RegionMasks"})
    assert (cause, device) == ("other", "cpu")
    assert guide["id"] == "other-host-ram"


def test_a_gpu_failure_of_cause_other_keeps_the_card_checklist():
    cause, device, guide = _guide(CUDA)
    assert (cause, device) == ("other", "cuda")
    assert guide["id"] != "other-host-ram"
    for backend in ("cuda", "rocm", "mps", "xpu"):
        g = guides.select("other", "pytorch", {"os": "linux", "backend": backend})
        assert g["id"] == "other" and "nvidia-smi" in g["markdown"], backend
    assert guides.select("other", "pytorch", {"os": "linux", "backend": "cpu"})["id"] == "other-host-ram"
