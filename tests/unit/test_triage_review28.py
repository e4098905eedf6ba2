"""review28: near-misses of rounds 67-70 a user would hit, written fresh (not copied from the corpus).

- WebGPU's device loss (native_runtimes.WEBGPU_LOST) read any word after "Device lost during": a game's audio stack or
  D3D11's swap chain ("Device lost during playback", "Device lost during Present()") was read as an in-browser model not
  fitting the GPU.
- A short paste whose longest line is llama.cpp's pre-GGUF loader line (the stock file name ggml-model-q4_1.bin) was read
  as wrapped and libstdc++'s terminate line was joined to it: the bad_alloc then sat on the loader's own line and round
  70's header reading (other: a file format this build does not read) fell back to host-ram."""
from gpu_garden.memory.triage import engine
from support.triage_event import top

THROW = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"


def test_a_game_audio_device_lost_is_no_failure():
    log = ("[2024-03-01 19:22:10] Game: loading level 3\n"
           "[2024-03-01 19:22:14] Audio: Device lost during playback, reconnecting headset\n"
           "[2024-03-01 19:22:15] Audio: reconnected\n")
    assert not engine.triage_text(log)["found"]


def test_a_d3d11_device_lost_is_no_webgpu_failure():
    log = "Windows 10 build 19045\nD3D11: Device lost during Present(), recreating swapchain\nRenderer: swapchain recreated\n"
    assert not engine.triage_text(log)["found"]


def test_webgpu_device_lost_still_read():
    """Chrome's rejection of onSubmittedWorkDone, and a promise Dawn names with its recovery tail."""
    for line in ("OperationError: Device lost during onSubmittedWorkDone\n",
                 "OperationError: Device lost during createComputePipelineAsync (do not use this error for recovery - it is "
                 "NOT guaranteed to happen on device loss)\n"):
        _, _, ev = top("Linux 6.5.0-21-generic x86_64\n" + line)
        assert ev["kind"] == "webgpu.device_lost" and ev["device_kind"] == "vulkan", ev


def test_bad_alloc_after_the_stock_ggml_file_name_is_still_the_file():
    """The loader line with the stock name is the paste's longest: the terminate line must stay a record of its own."""
    head = "main: build = 590 (0df7d63)\nmain: seed  = 1685000000\nllama.cpp: loading model from ./models/7B/ggml-model-q4_1.bin\n"
    cause, scores, ev = top(head + THROW)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    assert cause == "other", scores
    assert "header" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_array_buffer_refusal_gets_its_own_guide():
    """Round 67 named no guide for V8's refusal: host-ram's fallback, PyTorch's CPU allocator guide, was shown to a browser."""
    _, _, ev = top("Uncaught RangeError: Array buffer allocation failed\n    at new ArrayBuffer (<anonymous>)\n")
    assert ev["guide"]["id"] == "js-array-buffer", ev["guide"]["id"]


def test_a_webgpu_loss_beside_a_torch_oom_leaves_the_runtime_pytorch():
    """A log mixing a page's console and a PyTorch run: the browser's line in the same incident named webgpu (round 67's
    OWN_MESSAGE_RUNTIMES entry) though the failure read is PyTorch's own error."""
    log = ("Linux 6.5.0 x86_64\nOperationError: Device lost during onSubmittedWorkDone\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.68 GiB of "
           "which 15.50 MiB is free. Including non-PyTorch memory, this process has 23.66 GiB memory in use. Of the allocated "
           "memory 22.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n")
    _, _, ev = top(log)
    assert ev["kind"].startswith("torch."), ev["kind"]
    assert ev["runtime"] == "pytorch", ev["runtime"]
