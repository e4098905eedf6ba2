"""Triage round 120 (batches 637, 639, 642, 644, 645): message forms written by hand from the runtimes' own wording, with the
expected values worked out by hand.

1. PyTorch's out-of-memory message quoted from its second sentence, the head's "CUDA out of memory." left out: a line that is
   only "Tried to allocate N" and the next opening with the capacity sentence are joined as PyTorch prints them (paste).
2. ggml's CUDA/HIP allocation failure quoted with its status on a line of its own: "allocating N MiB on device D:" then
   "cudaMalloc failed: out of memory" (indented or not) joined into ggml's one line, so the request is read."""
from support.regex_time import assert_each_fast
from support.triage_event import read
from gpu_garden.memory.triage import paste
from gpu_garden.memory.triage.paste import _GGML_ALLOC_END, _GGML_STATUS_OPEN, _TORCH_CAP_OPEN, _TORCH_REQ_BARE

G = 1 << 30
M = 1 << 20

# 1. the request alone on its line, the capacity sentence after it (a write-up quoting the message a sentence a line)
HEADLESS = ("Tried to allocate 2.50 GiB\n"
            "GPU 1 has a total capacity of 39.39 GiB of which 1.25 GiB is free.\n"
            "this process has 38.14 GiB memory in use.\n")


def test_request_line_and_capacity_sentence_read_as_pytorch_message():
    cause, kind, runtime, device, nums = read(HEADLESS)
    assert (runtime, device) == ("pytorch", "cuda"), kind
    assert nums["requested"] == int(2.5 * G)
    assert nums["total"] == int(39.39 * G)
    assert nums["free"] == int(1.25 * G)
    assert nums["this_process"] == int(38.14 * G)
    assert cause == "activations"


def test_request_line_with_period_joined_too():
    text = "Tried to allocate 512.00 MiB.\nGPU 0 has a total capacity of 23.65 GiB of which 100.00 MiB is free.\n"
    joined = paste.undo(text.encode()).decode()
    assert "Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 100.00 MiB is free." in joined
    _, _, _, _, nums = read(text)
    assert nums["requested"] == 512 * M and nums["free"] == 100 * M


def test_request_line_without_capacity_sentence_is_not_joined():
    # a request line followed by a line of something else stays as it was (no capacity sentence opening the next line)
    text = "Tried to allocate 2.50 GiB\nthe run then stopped at step 40 of 100 with the loss at 2.31\n"
    assert paste.undo(text.encode()) == text.encode()
    # and a line that merely mentions the request in prose is not a bare request line
    assert not _TORCH_REQ_BARE.match(b"we saw it: Tried to allocate 2.50 GiB")


# 2. ggml's line broken after "on device N:"
GGML_SPLIT = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 256.50 MiB on device 1:\n"
              "    cudaMalloc failed: out of memory\n"
              "srv  update_slots: decode() failed: failed to allocate compute pp buffers\n")


def test_ggml_status_on_next_line_gives_the_request():
    _, _, runtime, device, nums = read(GGML_SPLIT)
    assert (runtime, device) == ("llama.cpp", "cuda")
    assert nums.get("requested") == int(256.5 * M)


def test_ggml_status_unindented_and_hip_joined():
    text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 64.00 MiB on device 0:\nhipMalloc failed: out of memory\n"
    joined = paste.undo(text.encode()).decode()
    assert "allocating 64.00 MiB on device 0: hipMalloc failed: out of memory" in joined
    text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 64.00 MiB on device 0:\ncudaMalloc failed: out of memory\n"
    assert read(text)[4].get("requested") == 64 * M


def test_ggml_line_followed_by_something_else_not_joined():
    text = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 64.00 MiB on device 0:\nsome other line\n"
    assert paste.undo(text.encode()) == text.encode()


def _b(texts):
    return [t.encode() for t in texts]      # paste's patterns read bytes


def test_round120_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (_TORCH_REQ_BARE.match, _b([" " * 16 + "Tried to allocate " + "1" * n, "Tried to allocate 1" + " " * n,
                                    "Tried to allocate " + "9." * (n // 2)])),
        (_TORCH_CAP_OPEN.match, _b(["GPU " + "1" * n, " " * 16 + "GPU 1 has a total " + "x" * n])),
        (_GGML_ALLOC_END.search, _b(["allocating " * (n // 11), "allocating 1 MiB on device " + "1" * n,
                                     "allocating 1 MiB on device 1:" + " " * n + "x", "allocating " + "1." * (n // 2)])),
        (_GGML_STATUS_OPEN.match, _b([" " * n + "cudaMalloc failed", "cudaMalloc failed: " + "x" * n])),
        (paste.undo, [("allocating 1 MiB on device 0:\n" + " cudaMalloc failed: out of memory\n").encode() * (n // 64),
                      ("Tried to allocate 1 GiB\nGPU 0 has a total capacity of 2 GiB of which 1 GiB is free.\n").encode()
                      * (n // 96)]),
    ])


# 2b. the same two lines already joined as a terminal's cut (the status's indent kept after the colon): normalised to ggml's form
WRAPPED = ("resolve_fused_ops: layer 3 is assigned to device CPU but fused Gated Delta Net\n"
           "  (chunked) is assigned to device CUDA0 (usually due to missing support)\n"
           "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 121.50 MiB on device 0:\n"
           "  cudaMalloc failed: out of memory\n")


def test_ggml_status_joined_with_its_indent_still_read():
    # (rev11 S3) read as it is: error_patterns.GGML_MALLOC takes the indent (test_triage_rev11 reads the one-line form)
    _, _, runtime, _, nums = read(WRAPPED)
    assert runtime == "llama.cpp" and nums.get("requested") == int(121.5 * M)
