"""Review 20b's triage findings (task fix20c): each test failed before its fix. Logs written in the runtimes' own formats
(PyTorch's 2.1+ CUDA message, Python's platform string and uname's kernel name as WSL 2 prints them, llama.cpp's load
lines); numbers made up, expected values by hand."""
import pytest

from support.triage_event import last_event

# --- 3. WSL runs CUDA over the Windows host's WDDM: the system-commit reading counts a log that shows WSL ----------------
REFUSED = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.55 GiB "
           "of which 8.20 GiB is free. {procs}Of the allocated memory 14.87 GiB is allocated by PyTorch, and 297.67 MiB is "
           "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
FRAME = ('Traceback (most recent call last):\n'
         '  File "/home/ana/ComfyUI/execution.py", line 496, in execute\n'
         '    output_data = get_output_data(obj, input_data_all)\n')
WSL_LINES = [
    "Platform: Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35\n",     # Python's platform.platform()
    "Linux DESKTOP-7QK2 5.15.167.4-microsoft-standard-WSL2 #1 SMP Tue Nov 5 00:21:55 UTC 2024 x86_64 GNU/Linux\n",  # uname -a
]
PROCESS = "Including non-PyTorch memory, this process has 15.18 GiB memory in use. "


@pytest.mark.parametrize("wsl", WSL_LINES)
def test_no_process_listed_on_a_wsl_log_is_the_system_commit(wsl):
    """A Linux-looking log (a /home path, a Linux kernel) that shows WSL: its CUDA goes through the host's WDDM, so a
    512 MiB request refused with 8.2 GiB free and no process listed is the commit charge, as on Windows."""
    res, ev = last_event(wsl + FRAME + REFUSED.format(procs=""))
    assert ev["platform"]["os"] == "linux", ev["platform"]          # the paths say Linux; WSL is what counts
    assert res["cause"] == "host-ram" and ev["guide"]["id"] == "os-host-ram", (ev["causes"][:2], ev["guide"]["id"])
    assert "WSL" in ev["guide"]["markdown"].split("**Mechanism.**")[0], ev["guide"]["markdown"][:400]


@pytest.mark.parametrize("wsl", WSL_LINES)
def test_a_wsl_log_whose_message_lists_the_process_keeps_the_drivers_refusal(wsl):
    res, ev = last_event(wsl + FRAME + REFUSED.format(procs=PROCESS))
    assert res["cause"] == "other" and "host-ram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:2]


def test_the_same_log_without_wsl_keeps_the_drivers_refusal():
    res, ev = last_event("Platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.39\n" + FRAME + REFUSED.format(procs=""))
    assert res["cause"] == "other" and "host-ram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:2]


# --- 4. ggml's placed buffers against the room of the same devices -----------------------------------------------------
STREAM_OOM = ("CUDA error: out of memory\n"
              "  current device: 0, in function ggml_cuda_stream at ggml/src/ggml-cuda/common.cuh:1012\n"
              "  cudaStreamCreateWithFlags(&streams[device][stream], 0x01)\n")
TWO_LISTED = ("Available devices:\n"                        # llama.cpp's device list (--list-devices form)
              "  CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23512 MiB free)\n"
              "  CUDA1: NVIDIA GeForce RTX 4090 (24080 MiB, 23600 MiB free)\n")


def _bufs(per_device):
    lines = "load_tensors: offloaded 49/49 layers to GPU\n"
    lines += "".join(f"load_tensors:        {d} model buffer size = {m:.2f} MiB\n" for d, (m, _) in per_device.items())
    lines += "load_tensors:   CPU_Mapped model buffer size =   417.66 MiB\n"
    return lines + "".join(f"llama_kv_cache:      {d} KV buffer size = {k:.2f} MiB\n" for d, (_, k) in per_device.items())


def test_a_two_gpu_log_with_the_buffers_on_one_card_compares_that_card():
    """Two cards listed free, the model and KV on CUDA0 alone: 22900 + 512 MiB of CUDA0's 23512 free leaves 100 MiB, under
    the 1 GiB --fit margin: the weights fill that card (the sum over both cards, 47112 MiB, read it half empty)."""
    res, ev = last_event(TWO_LISTED + _bufs({"CUDA0": (22900.0, 512.0)}) + STREAM_OOM)
    assert res["cause"] == "weights-exceed-vram", ev["causes"][:3]
    assert "22.96 GiB the log gives as the room" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]


def test_a_two_gpu_log_split_over_both_cards_compares_both():
    # 22100 + 21900 + 2 x 512 = 45024 MiB of 47112 listed free: 2088 MiB left, more than 2 x 1 GiB: not filled
    res, ev = last_event(TWO_LISTED + _bufs({"CUDA0": (22100.0, 512.0), "CUDA1": (21900.0, 512.0)}) + STREAM_OOM)
    assert "weights-exceed-vram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:3]
    # 22900 + 22900 + 2 x 512 = 46824 MiB: 288 MiB left of the two cards' room: filled
    res, ev = last_event(TWO_LISTED + _bufs({"CUDA0": (22900.0, 512.0), "CUDA1": (22900.0, 512.0)}) + STREAM_OOM)
    assert res["cause"] == "weights-exceed-vram", ev["causes"][:3]


def test_buffers_on_a_card_the_log_gives_no_figure_for_give_no_room():
    one = "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23512 MiB free\n"
    res, ev = last_event(one + _bufs({"CUDA0": (22900.0, 512.0), "CUDA1": (22900.0, 512.0)}) + STREAM_OOM)
    assert "weights-exceed-vram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:3]


def test_one_cards_total_is_no_room_for_buffers_on_two():
    """The card total (one card's) is the room only for buffers on one device; summed over two cards it is no reading."""
    from collections import OrderedDict
    from gpu_garden.memory.triage.case import Case
    from gpu_garden.memory.triage.predicates import ggml_placed, ggml_room
    from gpu_garden.memory.units import GiB, MiB
    x = Case()
    x.kind, x.total, x.f = "cuda.driver", 24 * GiB, {"ggml_devices": {}, "ggml_bufs": OrderedDict(
        [("model:CUDA0", 20000 * MiB), ("model:CUDA1", 20000 * MiB), ("model:CPU_Mapped", 400 * MiB)])}
    x.placed_model = 40000 * MiB
    assert ggml_room(x) is None and not ggml_placed(x)
    del x.f["ggml_bufs"]["model:CUDA1"]
    x.placed_model = 23600 * MiB                         # 976 MiB left of 24 GiB: within the margin
    assert ggml_room(x) == 24 * GiB and ggml_placed(x)
