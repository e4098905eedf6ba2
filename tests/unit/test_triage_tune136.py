"""Triage after batches 136-139 (round 65): comfy-aimdo's file reader raising "hostbuf_file_reader_read failed" with no
line that says its copy ran out of memory (a fault of the reader, not a shortage: Comfy-Org/ComfyUI#14239, fixed by
comfy-aimdo 0.4.8), and llama.cpp's --mlock warning on Windows ("failed to VirtualLock N-byte buffer (after previously
locking M bytes)") naming the run llama.cpp's (modelled on h2oai/h2ogpt#620). Paths, node names and figures made up;
expected values by hand."""
from support.triage_event import top

# a Windows portable ComfyUI with Dynamic VRAM: a Load Image -> VAE Encode workflow, the reader's Python error and nothing else
READER_ONLY = """Requested to load AutoencoderKL
loaded completely; 95367431640625005117571072.00 MB usable, 159.87 MB loaded, full load: True
!!! Exception during processing !!! hostbuf_file_reader_read failed
Traceback (most recent call last):
  File "D:\\ai\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 530, in execute
    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj, input_data_all)
RuntimeError: hostbuf_file_reader_read failed
"""

# the same reader, whose C side said first that its device copy ran out of memory (CUresult 2): that line leads the failure
# and is read as pinned host RAM (round 30); the Python line after it changes nothing
READER_OOM = """Requested to load WAN21
aimdo: src/hostbuf.c:288 hostbuf_read_file_slice: device copy failed result=2
!!! Exception during processing !!! hostbuf_file_reader_read failed
RuntimeError: hostbuf_file_reader_read failed
"""


def test_aimdo_reader_failure_alone_is_a_fault_not_host_ram():
    """Before round 65 the bare line was read as pinned host RAM running out (host-ram 0.87)."""
    cause, causes, ev = top(READER_ONLY)
    assert (ev["kind"], ev.get("form"), ev["runtime"]) == ("comfy.pinned_host", "reader", "comfyui"), ev
    assert cause == "other", causes
    assert causes.get("host-ram", 0) < causes["other"], causes      # its 64 MiB staging allocation stays the runner-up
    assert ev["guide"]["id"] == "comfyui-aimdo-fault", ev["guide"]


def test_aimdo_reader_failure_after_an_out_of_memory_copy_stays_host_ram():
    cause, causes, ev = top(READER_OOM)
    assert cause == "host-ram", causes


# llama-cpp-python (a GGML llama 13B, CUDA build) on Windows with use_mlock: llama.cpp's mlock warning is the failure read
VIRTUALLOCK = """llama.cpp: loading model from C:\\models\\llama-2-13b-chat.ggmlv3.q4_0.bin
llama_model_load_internal: mem required  = 9031.70 MB (+ 1608.00 MB per state)
warning: failed to VirtualLock 4194304-byte buffer (after previously locking 905969664 bytes): The paging file is too small for this operation to complete.
"""

# PyTorch's own paging-file failure on Windows (a DataLoader worker importing torch): no llama.cpp line, PyTorch's run
TORCH_PAGING = """Traceback (most recent call last):
  File "C:\\proj\\train.py", line 3, in <module>
    import torch
OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.
"""


def test_llama_cpp_virtuallock_warning_names_llama_cpp():
    """Before round 65 the paging-file refusal was PyTorch's whatever printed it."""
    cause, causes, ev = top(VIRTUALLOCK)
    assert (cause, ev["kind"], ev["runtime"]) == ("host-ram", "os.paging_file", "llama.cpp"), (causes, ev["runtime"])


def test_paging_file_without_llama_cpp_stays_pytorch():
    cause, causes, ev = top(TORCH_PAGING)
    assert (cause, ev["runtime"]) == ("host-ram", "pytorch"), (causes, ev["runtime"])
