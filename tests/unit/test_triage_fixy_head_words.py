"""(fixY, from rev53) In a log's first 512 KiB (the whole of a short paste) the scanner decodes only the lines holding a
HEAD_ANCHORS entry (scan.py HEAD); ERROR_WORDS reach the idle scan after it. fixV's "kv_cache_init() failed for" was in
ERROR_WORDS alone, so a short paste of it was never read (rev53 anchored it). Every ERROR_WORDS entry either holds a head
anchor itself, or is listed below with a line in its own program's form that holds one (its form always carries "emory",
"llocat", "_STATUS_", ...), the line taken from the unseen corpus where one exists. A word added to ERROR_WORDS alone, with no
anchor and no line here, fails the first test: anchor it (scan_words.ANCHORS) or show its form's anchor here."""
import pytest

from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.scan_words import ERROR_WORDS, HEAD_ANCHORS

# word -> (a line in its form, found as a failure when pasted alone). Lines from tests/unit/corpus/unseen unless marked
# "(form)": no corpus line holds the word, the line is the recogniser's own form (error_patterns.CUDNN, other_patterns'
# "Cannot allocate memory (os error 12)", error_patterns.GGML_CANN_MALLOC). Ollama's offload lines are its layout (a plan
# the rules read beside a failure), not a failure alone.
BY_FORM = {
    "cache blocks": ("No available memory for the cache blocks.", True),
    "on startup is less": ("Free memory on device cuda:0 (3.25/23.43 GiB) on startup is less than desired GPU memory utilization "
                           "(0.96, 22.49 GiB)", True),
    "less than desired": ("ValueError: Free memory ... less than desired", True),
    "HostAlloc failed": ("pipeline error: cuMemHostAlloc failed: out of memory", True),
    "_ALLOC_FAILED": ("CUDA error: CUBLAS_STATUS_ALLOC_FAILED", True),
    "NOT_ENOUGH_WORKSPACE": ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_ENOUGH_WORKSPACE", True),     # (form)
    "error 1455": ("OSError: Le fichier de pagination est insuffisant... (os error 1455)", True),
    "Error 1455": ("OSError [WinError 1455]: the paging file is too small", True),
    "device copy failed": ("aimdo: src/hostbuf.c:283 hostbuf_read_file_slice: device copy failed result=2", True),
    "unable to mmap": ("Failed to load model with Error: unable to mmap 4965799096 bytes from file "
                       "<Llama-3.2-3B-Instruct/model-00001-of-00002.safetensors>: Cannot allocate memory", True),
    "Errno 12": ("OSError [Errno 12] Cannot allocate memory", True),
    "That was not possible. There are": ("RESOURCE_EXHAUSTED: Attempting to allocate 128.00M. That was not possible. There are "
                                         "87.93M free.", True),
    "mem_buffer != NULL": ("GGML_ASSERT(ctx->mem_buffer != NULL) failed", True),
    "os error 12": ("Error: Cannot allocate memory (os error 12)", True),     # (form)
    "8007000E": ("8007000E Not enough memory resources are available to complete this operation", True),
    "ailed to cudaMalloc ": ("Faiss assertion 'cudaMalloc(p, size) == cudaSuccess' failed in void faiss::gpu::allocMemorySpace("
                             "faiss::gpu::MemorySpace, void**, size_t) at utils/MemorySpace.cpp:20; details: Failed to cudaMalloc "
                             "16000000000 bytes", True),
    "in AlignedAlloactor": ("RuntimeError: RuntimeError: Out of workspace memory in AlignedAlloactor", True),
    "exceeds ceiling": ("omlx.scheduler - WARNING - Prefill force-stopped at 1441 tokens: memory 42.8GB exceeds ceiling 42.0GB", True),
    "aclrtMalloc failed": ("ggml_backend_cann_buffer_type_alloc_buffer: allocating 512.00 MiB on device 0: aclrtMalloc failed: "
                           "EL0004: Failed to allocate memory.", True),     # (form)
    "bytes failed, device store has": ("INFO DeviceMemoryEventHandler: Device allocation of 345571976 bytes failed, device store "
                                       "has 0 bytes. Total RMM allocated is 9319438848 bytes.", True),
    "Unexpected bus error encountered in worker": ("ERROR: Unexpected bus error encountered in worker. This might be caused by "
                                                   "insufficient shared memory (shm).", True),
    "preflight safety guard": ("Error: Prefill context too large for available memory (preflight safety guard, kv_len=66461, "
                               "min_chunk=32): predicted peak would require ~25.53 GB (current 25.07 GB + KV 338.09 MB + "
                               "min-chunk transient 137.32 MB) but prefill safety cap is 25.27 GB (90% of effective ceiling "
                               "28.08 GB).", True),
    "rtMalloc fail": ("Call rtMalloc fail, purpose: page caching, type = 2, size:4110811136, device_id:0[FUNC:Alloc]"
                      "[FILE:device_allocator.cc][LINE:70]", True),
    "smaller than requested bytes": ("onnxruntime::BFCArena::AllocateRawInternal Available memory of 0 is smaller than requested "
                                     "bytes of 701267968", True),
    "cudaSafeCall() failed": ("[PB Error][src/likehood_test.cu:1056] cudaSafeCall() failed: out of memory, exiting.", True),
    "complete replay buffer": ("UserWarning: This system does not have apparently enough memory to store the complete replay "
                               "buffer 14.10GB > 12.06GB", True),
    "at or below SIG": ("low memory! at or below SIGTERM limits: mem 15.00%", True),
    "VmRSS": ('sending SIGTERM to process ... "python": badness 853, VmRSS 9853 MiB', True),
    "exited prematurely: signal 9": ("billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 4.", True),
    "total capacity; ": ("GPU 0; 15.72 GiB total capacity; 1.49 GiB already allocated; 832.00 KiB free", True),
    "msg=offload": ('level=INFO source=server.go:168 msg=offload library=rocm layers.requested=-1 layers.model=33 '
                    'memory.available="[22.9 GiB]"', False),
    'msg="offload to ': ('level=INFO source=memory.go:309 msg="offload to cuda" layers.requested=-1 layers.model=33 '
                         'memory.available="[4.6 GiB]" memory.required.full="35.3 GiB"', False),
    "exceeds the maximum threadgroup": ("Threadgroup memory size (53760) exceeds the maximum threadgroup", True),
    "would run from system RAM": ("Failed to load model: About 10 GB of this model does not fit in GPU memory and would run from "
                                  "system RAM. Only about 10 GB is available and 2 GB of that is kept free for the rest of the "
                                  "system, leaving about 8 GB usable.", True),
}


def _anchored(text: str) -> bool:
    return any(a in text.encode() for a in HEAD_ANCHORS)


def test_every_error_word_is_anchored_in_the_head_or_shows_its_forms_anchor():
    loose = [w for w in ERROR_WORDS if not _anchored(w) and w not in BY_FORM]
    assert not loose, f"ERROR_WORDS with no head anchor and no line in BY_FORM (a short paste of them is never read): {loose}"
    assert not [w for w in BY_FORM if _anchored(w)], "a listed word holds an anchor now: drop it from BY_FORM"
    assert set(BY_FORM) <= set(ERROR_WORDS)


@pytest.mark.parametrize("word", sorted(BY_FORM))
def test_the_words_form_holds_a_head_anchor_and_a_short_paste_of_it_is_read(word):
    line, failure = BY_FORM[word]
    assert word in line and _anchored(line), (word, line)
    assert bool(engine.triage_text(line + "\n")["found"]) is failure, (word, line)
