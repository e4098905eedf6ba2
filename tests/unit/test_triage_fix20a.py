"""Review 20's triage findings (task fix20a): each test failed before its fix. Logs written from the review's examples
(/tmp/rv20), in the runtimes' own formats; numbers made up, expected values by hand."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage.categories import frame_category

BARRIER_OOM = ("Traceback (most recent call last):\n"
               '  File "/work/proj/code/megatron/initialize.py", line 140, in _compile_dependencies\n'
               "    torch.distributed.barrier()\n"
               "RuntimeError: CUDA error: out of memory\n")


def test_a_torchtune_frame_reads_the_same_under_site_packages_and_dist_packages():
    """Only PyTorch's own frames ("/torch/") name no cause: torchtune (and torchvision, torchaudio, torchao) is a library
    read like any other, wherever pip put it (review 20: "site-packages/torch" also matched "site-packages/torchtune")."""
    for where in ("/home/user/.venv/lib/python3.11/site-packages", "/usr/local/lib/python3.10/dist-packages"):
        assert frame_category(f"{where}/torchtune/modules/attention_utils.py", "_sdpa_or_flex_attention") == "activations", where
        assert frame_category(f"{where}/torchvision/models/vision_transformer.py", "self_attention") == "activations", where
        assert frame_category(f"{where}/torch/nn/functional.py", "scaled_dot_product_attention") is None, where


# --- 2. a hardware fault does not override a shortage the message's own numbers show ---------------------------------------
TRAIN_OOM = ("Traceback (most recent call last):\n"
             '  File "/home/user/train.py", line 88, in <module>\n'
             "    loss = model(batch).loss\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 79.15 GiB of "
             "which {free} is free. Including non-PyTorch memory, this process has 76.02 GiB memory in use. Of the allocated "
             "memory 74.10 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated.\n")
XID = "[ 1021.553210] NVRM: Xid (PCI:0000:3b:00): {code}, pid=1812, name=python, {what}\n"


def _fault_named(ev):
    return any("hardware fault" in e for c in ev["causes"] for e in c["evidence"])


def test_a_hardware_xid_beside_a_shown_shortage_keeps_the_shortage_first():
    """Xid 48 (a double-bit ECC error) beside PyTorch holding 74.1 of 79.15 GiB and an 8 GiB request over 3.12 GiB free: the
    message's own numbers show the shortage; the fault is named, below it."""
    oom = TRAIN_OOM.format(req="8.00 GiB", free="3.12 GiB")
    plain, _ = last_event(oom)
    res, ev = last_event(XID.format(code=48, what="An uncorrectable double bit error (DBE) has been detected on GPU.") + oom)
    assert res["cause"] == plain["cause"] == "activations", ev["causes"][:2]
    assert _fault_named(ev), ev["causes"]
    assert ev["causes"][0]["confidence"] >= 0.7, ev["causes"][:2]      # 0.78 without the Xid line


def test_a_hardware_xid_beside_free_memory_covering_the_request_is_the_card():
    oom = TRAIN_OOM.format(req="2.00 GiB", free="3.12 GiB")
    res, ev = last_event(XID.format(code=48, what="An uncorrectable double bit error (DBE) has been detected on GPU.") + oom)
    assert res["cause"] == "other" and "hardware fault" in ev["causes"][0]["evidence"][0], ev["causes"][:2]


@pytest.mark.parametrize("code, what, hardware", [
    (63, "Row Remapper: New row (0x0000000000a1f2c0) Marked for Remapping, reset gpu to activate.", False),
    (92, "High single-bit ECC error rate", False),
    (93, "Non-fatal violation of provisioned InfoROM wear limit.", False),
    (62, "Internal micro-controller halt", True),
    (154, "GPU recovery action changed from 0x0 (None) to 0x1 (Reset Required).", True),
    (64, "Row Remapper: Failed to remap row.", True),
])
def test_which_xid_codes_are_a_hardware_fault(code, what, hardware):
    """Beside a bare driver error (no numbers): only the codes of a failing card or memory read as a hardware fault."""
    res, ev = last_event(XID.format(code=code, what=what) + BARRIER_OOM)
    assert _fault_named(ev) == hardware, (code, ev["causes"][:2])


# --- 3. ggml's placed buffers read as the weights only when they fill the room the log gives --------------------------------
STREAM_OOM = ("CUDA error: out of memory\n"
              "  current device: 0, in function ggml_cuda_stream at ggml/src/ggml-cuda/common.cuh:1012\n"
              "  cudaStreamCreateWithFlags(&streams[device][stream], 0x01)\n")


def _ggml(model_mib, kv_mib, free_mib=None):
    return ((f"llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - {free_mib} MiB free\n"
             if free_mib else "")
            + "load_tensors: offloaded 29/29 layers to GPU\n"
            f"load_tensors:        CUDA0 model buffer size = {model_mib:.2f} MiB\n"
            "load_tensors:   CPU_Mapped model buffer size =   136.12 MiB\n"
            f"llama_kv_cache:        CUDA0 KV buffer size = {kv_mib:.2f} MiB\n" + STREAM_OOM)


def test_a_small_model_on_a_card_with_room_is_not_the_weights():
    """Review 20: 468 MiB of weights and 112 MiB of KV on a card that listed 23512 MiB free, then a stream-creation OOM,
    read weights-exceed-vram 0.43: the buffers are 2.5 % of the room."""
    res, ev = last_event(_ggml(468.45, 112.0, free_mib=23512))
    assert "weights-exceed-vram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:3]


def test_placed_buffers_within_the_fit_margin_of_the_room_are_the_weights():
    # 21900 + 1024 = 22924 MiB placed of 23512 free: 588 MiB left, under llama.cpp's 1 GiB --fit margin
    res, ev = last_event(_ggml(21900.0, 1024.0, free_mib=23512))
    assert res["cause"] == "weights-exceed-vram", ev["causes"][:3]
    # 20000 + 1024 = 21024 MiB: 2488 MiB left, more than the margin: the card was not filled by them
    res, ev = last_event(_ggml(20000.0, 1024.0, free_mib=23512))
    assert res["cause"] != "weights-exceed-vram", ev["causes"][:3]


def test_no_room_in_the_log_gives_no_weights_reading():
    """Without a free figure or a card total, nothing in the log says the buffers filled the card."""
    res, ev = last_event(_ggml(468.45, 112.0))
    assert "weights-exceed-vram" not in {c["id"] for c in ev["causes"]}, ev["causes"][:3]


# --- 1. the system-commit (WDDM) reading needs a log that shows Windows --------------------------------------------------
def _refused(frame="", req="512.00 MiB", free="8.20 GiB", prefix=""):
    return (frame + f"{prefix}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity "
            f"of 23.55 GiB of which {free} is free. Of the allocated memory 14.87 GiB is allocated by PyTorch, and 297.67 MiB "
            "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


DOCKER = ('Traceback (most recent call last):\n'
          '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1532, in _call_impl\n'
          '    return forward_call(*args, **kwargs)\n')
VLLM = ("INFO 05-12 10:01:12 [__init__.py:239] Automatically detected platform cuda.\n"
        '(VllmWorker rank=0 pid=231) ERROR 05-12 10:03:40 [multiproc_executor.py:470]   File '
        '"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 2011, in _dummy_sampler_run\n')


@pytest.mark.parametrize("log", [
    _refused(DOCKER),                                           # a Docker image's Python (Debian's dist-packages): Linux
    _refused(VLLM, req="1.16 GiB", free="12.50 GiB", prefix="(VllmWorker rank=0 pid=231) ERROR 05-12 10:03:40 "
             "[multiproc_executor.py:470] "),                   # a vLLM worker in a container
    _refused(),                                                 # the message alone: no OS shown
])
def test_no_process_listed_without_windows_shown_is_not_the_system_commit(log):
    """PyTorch lists processes only in its Linux builds, and a Linux process can list none (ROCm, NVML answering with none):
    no process listed, with no Windows in the log, keeps the driver's refusal (other), not host-ram and the paging file."""
    res, ev = last_event(log)
    assert res["cause"] == "other" and ev["guide"]["id"] != "os-host-ram", (ev["causes"][:2], ev["guide"]["id"])
    assert "host-ram" not in {c["id"] for c in ev["causes"]}, ev["causes"]


@pytest.mark.parametrize("frame", [
    '  File "C:\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 496, in execute\n',
    '  File "E:\\apps\\Fooocus\\modules\\async_worker.py", line 803, in worker\n',
    "Warning: [WinError 5] Access is denied\n",                # Python's Windows error, no path
])
def test_the_same_message_on_a_log_that_shows_windows_is_the_system_commit(frame):
    res, ev = last_event(_refused(frame))
    assert ev["platform"]["os"] == "windows", ev["platform"]
    assert res["cause"] == "host-ram" and ev["guide"]["id"] == "os-host-ram", (ev["causes"][:2], ev["guide"]["id"])


def test_a_debian_dist_packages_path_shows_linux():
    res, ev = last_event(_refused(DOCKER))
    assert ev["platform"]["os"] == "linux", ev["platform"]
