"""Triage after batches 151 and 153-157 (round 68): PyTorch's caching-allocator warning when cudaMalloc itself fails
("memory allocation failed with OOM on device N while trying to allocate X bytes (free: F, total: T)", modelled on
vllm-project/vllm#55407), transformers' bitsandbytes refusal quoted as its first sentence only ("Some modules are
dispatched on the CPU or the disk...", modelled on huggingface/transformers#46823), and ggml's CUDA check's source line
("ggml-cuda.cu:NNN") naming a bare "CUDA error: out of memory" llama.cpp's (modelled on Anbeeld/beellama.cpp#145).
Figures, devices and paths made up; expected values by hand."""
from support.triage_event import top

# a tensor-parallel load on 80 GB cards: the allocator's warning, repeated, and nothing after it
ALLOC_WARN = """[rank2]:[W1103 08:14:51.512336104 CUDACachingAllocator.cpp:3941] memory allocation failed with OOM on device 2 while trying to allocate 41943040 bytes (free: 31457280, total: 85899345920).
[rank2]:[W1103 08:14:51.515907211 CUDACachingAllocator.cpp:3941] memory allocation failed with OOM on device 2 while trying to allocate 41943040 bytes (free: 31457280, total: 85899345920).
"""

# the same warning, then PyTorch's own OutOfMemoryError: the retry failed, and the error is the failure read
ALLOC_WARN_THEN_OOM = """[W1103 08:14:51.512336104 CUDACachingAllocator.cpp:3941] memory allocation failed with OOM on device 0 while trying to allocate 41943040 bytes (free: 31457280, total: 85899345920).
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 80.00 GiB of which 30.00 MiB is free. Including non-PyTorch memory, this process has 79.96 GiB memory in use. Of the allocated memory 78.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.
"""


def test_allocator_warning_alone_reads_the_cache_it_could_not_reuse():
    """Before round 68 nothing was recognised (found False)."""
    cause, causes, ev = top(ALLOC_WARN)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("torch.alloc_warn", "pytorch", "cuda"), ev
    assert ev["numbers"] == {"requested": 41943040, "free": 31457280, "total": 85899345920}, ev["numbers"]
    assert cause == "fragmentation", causes
    assert 0 < causes["activations"] < causes["fragmentation"], causes     # a buffer too large stays the runner-up


def test_allocator_warning_then_the_error_reads_the_error():
    cause, causes, ev = top(ALLOC_WARN_THEN_OOM)
    assert ev["kind"] == "torch.cuda", ev
    assert ev["numbers"]["requested"] == 40 * 2**20, ev["numbers"]


# transformers' bitsandbytes quantizer's refusal, quoted as its first sentence with the quoter's ellipsis
DISPATCH_CUT = """Loading checkpoint shards: 100%|##########| 12/12 [01:41<00:00,  8.44s/it]
ValueError: Some modules are dispatched on the CPU or the disk...
"""
DISPATCH_CUT_UNICODE = "ValueError: Some modules are dispatched on the CPU or the disk\u2026\n"
# the sentence inside other words (a log line of one's own): not the refusal
DISPATCH_PROSE = "INFO offload.py:88 - Some modules are dispatched on the CPU or the disk for the first pass, the rest stays on cuda:0\n"


def test_dispatch_refusal_cut_after_its_first_sentence_is_read():
    """Before round 68 the cut quote was not recognised (found False)."""
    for text in (DISPATCH_CUT, DISPATCH_CUT_UNICODE):
        cause, causes, ev = top(text)
        assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("transformers.dispatch", "pytorch", "cuda"), ev
        assert cause == "weights-exceed-vram", causes


def test_dispatch_sentence_in_other_words_is_not_the_refusal():
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text(DISPATCH_PROSE)["found"]


# ggml's CUDA check quoted as its error and its source line only (a speculative-decoding fork at a long context)
GGML_SOURCE_AFTER = """CUDA error: out of memory
ggml-cuda.cu:97
"""
GGML_SOURCE_BEFORE = """/src/fork/ggml/src/ggml-cuda/ggml-cuda.cu:2412: CUDA error
CUDA error: out of memory
"""
# the same bare error with no ggml line: PyTorch's as before
BARE = "RuntimeError: CUDA error: out of memory\n"


def test_ggml_cuda_source_line_names_llama_cpp():
    """Before round 68 the bare error with ggml's source line beside it read as PyTorch's run."""
    for text in (GGML_SOURCE_AFTER, GGML_SOURCE_BEFORE):
        _, _, ev = top(text)
        assert ev["runtime"] == "llama.cpp", (text, ev["runtime"])


def test_bare_cuda_error_without_ggml_stays_pytorch():
    _, _, ev = top(BARE)
    assert ev["runtime"] == "pytorch", ev["runtime"]
