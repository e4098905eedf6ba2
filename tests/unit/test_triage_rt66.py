"""Task rt66 (issue 14, deliver 4): the program around a library's failure names the run (runtime_around.AROUND). Inputs
written by hand; none taken from a corpus file.

A PyTorch error under ComfyUI's start-up line quoted up to its VRAM figure ("Total VRAM 1024 MB", the whole line being
"Total VRAM N MB, total RAM M MB") read as PyTorch's: the whole line named ComfyUI (fact total_vram), the cut one nothing.
Each test fails on the old code (main 83b9a63d): its first assertion read "pytorch". The controls in them hold on the old
code too: the whole line, a runtime's own message, no line at all, and the lines task rt66 read and left out (ComfyUI's
loader and model-management lines, which its forks print too; Go's cgo line for Ollama, review18a #2)."""
from support.triage_event import read

TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 640.00 MiB. GPU 0 has a total capacity of "
             "11.72 GiB of which 212.44 MiB is free. Of the allocated memory 10.80 GiB is allocated by PyTorch, and "
             "301.19 MiB is reserved by PyTorch but unallocated.\n")
DML = ("RuntimeError: Could not allocate tensor with 536870912 bytes. There is not enough GPU video memory available!\n")


def _runtime(text):
    return read(text)[2]


def test_comfyuis_vram_line_cut_after_its_figure_names_comfyui():
    # DirectML's fixed figure above torch-directml's refusal: the device stays DirectML's, the numbers the message's
    cause, kind, runtime, device, numbers = read("Total VRAM 1024 MB\n" + DML)
    assert (runtime, kind, device) == ("comfyui", "torch.directml", "directml")
    assert numbers == read(DML)[4]
    assert _runtime("[2026-03-01 10:00:00.123] Total VRAM 12282 MB\n" + TORCH_OOM) == "comfyui"
    # controls: the whole line named ComfyUI already (fact total_vram); no line, PyTorch's
    assert _runtime("Total VRAM 12282 MB, total RAM 31968 MB\n" + TORCH_OOM) == "comfyui"
    assert _runtime(TORCH_OOM) == "pytorch"


def test_a_runtimes_own_message_keeps_its_runtime():
    # the row stands over PyTorch only: vLLM's start-up check below the cut line stays vLLM's
    vllm = ("Total VRAM 24576 MB\nValueError: Free memory on device cuda:0 (1.2/23.64 GiB) on startup is less than desired "
            "GPU memory utilization (0.9, 21.28 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
            "processes.\n")
    assert _runtime("Total VRAM 24576 MB\n" + TORCH_OOM) == "comfyui"
    assert _runtime(vllm) == "vllm"


def test_the_cut_line_past_the_log_head_is_read():
    # the scanner reads the first 512 KiB with its head anchors; past them only anchor lines are decoded ("Total VRAM" is
    # one in the open failure's and the window's anchors)
    filler = "".join(f"step {i}: tokens 512, elapsed 0.{i % 10}s\n" for i in range(24000))
    assert len(filler) > 512 << 10
    assert _runtime(filler + "Total VRAM 1024 MB\n" + TORCH_OOM) == "comfyui"
    assert _runtime(filler + TORCH_OOM) == "pytorch"


def test_lines_read_and_left_out_name_no_runtime():
    # the row's line names ComfyUI (fails on the old code) ...
    assert _runtime("Total VRAM 8188 MB\n" + TORCH_OOM) == "comfyui"
    # ... the lines left out do not (controls, the old code's answers): ComfyUI's loader and model-management lines, which
    # Fooocus and the Forge family print from their copies of its model management
    assert _runtime("Requested to load SDXL\n" + TORCH_OOM) == "pytorch"
    assert _runtime("loaded partially; 1523.71 MB usable, 1490.02 MB loaded, 8211.40 MB offloaded, 33.69 MB buffer "
                    "reserved, lowvram patches: 0\n0 models unloaded.\n" + TORCH_OOM) == "pytorch"
    # and Go's cgo line after ggml's abort, any Go program embedding ggml (review18a #2)
    ggml = ("ggml_new_object: not enough space in the context's memory pool (needed 2171904, available 2170880)\n"
            "ggml.c:1705: GGML_ASSERT(obj_new) failed\nSIGABRT: abort\nsignal arrived during cgo execution\n")
    assert _runtime(ggml) == "llama.cpp"


def test_the_cut_line_counts_only_where_comfyuis_other_lines_do():
    # (review rev66a #3) Fooocus's early releases ran a copy of ComfyUI's backend under repositories/ComfyUI-from-StabilityAI-
    # Official: its comfy/ frames are Fooocus's script, a PyTorch run, and the cut start-up line does not overrule that;
    # a script's own line holding "Total VRAM N MB" and more after it names nothing. Both read "comfyui" on rt66's merge.
    early = ('  File "D:\\Fooocus\\repositories\\ComfyUI-from-StabilityAI-Official\\comfy\\sd.py", line 120, in decode\n'
             "    pixel_samples = self.first_stage_model.decode(samples)\n")
    assert _runtime("Total VRAM 1024 MB\nTraceback (most recent call last):\n" + early + DML) == "pytorch"
    assert _runtime("Total VRAM 8151 MB\nTraceback (most recent call last):\n" + early + TORCH_OOM) == "pytorch"
    assert _runtime("[MOKO INFERENCE] GPU found: Total VRAM 8192 MB | free VRAM 7010 MB\n" + TORCH_OOM) == "pytorch"
