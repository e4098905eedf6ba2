"""The out-of-memory messages of PyTorch's allocators, ComfyUI, comfy-aimdo, torch-directml, vLLM, llama.cpp and
Ollama, as regular expressions: the data parse.py's recognisers read (other runtimes' are in other_runtimes.py).
The exact strings come from the runtimes' sources (see the comments per pattern). Every pattern is linear on
adversarial input (tests/unit/test_triage_fuzz.py)."""
import re

# --- sizes ---------------------------------------------------------------------------------------
# The lookbehind starts a number only at its first digit: a search through a long run of digits then
# tries each run once instead of once per digit (quadratic).
SIZE_RX = r"(?<![\d.])-?\d+(?:\.\d+)?\s?(?:bytes|[KMGT]iB|[KMGT]B|B)"
SZ = f"({SIZE_RX})"

# --- errors ----------------------------------------------------------------------------------------
# (round 68) the caching allocator's warning when cudaMalloc itself fails (c10/cuda/CUDACachingAllocator.cpp, TORCH_WARN in
# recent releases: "[W904 ...CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 6 while trying to
# allocate 20971520 bytes (free: 16252928, total: 287428640768)."): the allocator then frees its cached blocks and tries
# again, and raises OutOfMemoryError only if that fails too. Plain byte counts, the device's free and total
TORCH_ALLOC_WARN = re.compile(r"memory allocation failed with OOM on device (\d{1,3}) while trying to allocate (\d{1,20}) bytes"
                              r" \(free: (\d{1,20}), total: (\d{1,20})\)")
# (a quote may cut it with an ellipsis after the capacity: "has a total capacity of 28.56 GiB ..."; (round 97) the sentences it
# kept after the ellipsis are read: "... 89.06 GiB is allocated by PyTorch", "… 4.95 GiB allocated in private pools")
# ((round 95) or close its string there: "... has a total capacity of 23.98 GiB"", ComfyUI's execution_error printed as fields)
# c10/cuda/CUDACachingAllocator.cpp (2.2+, "capacty" in 2.1); hipified for ROCm; XPU has its own copy. Releases that
# streamed the int8 DeviceIndex without static_cast<int> print it as a character: GPU 0 reads "GPU  has" (a NUL byte).
TORCH_NEW = re.compile(
    r"(?P<dev>CUDA|HIP|XPU) out of memory\. Tried to allocate " + SZ.replace("(", "(?P<req>", 1)
    + r"\. (?:GPU|Device) (?P<gpu>\d{1,20}|[\x00-\x1f]?) has a total capac(?:i)?ty of " + SZ.replace("(", "(?P<total>", 1)
    + r"(?: of which " + SZ.replace("(", "(?P<free>", 1) + r" is free)?(?:\.(?P<rest>.*)|,?\s{1,4}(?=\.{3}|…)|[\"']?$)")
# ((round 103) the ellipsis after a comma the quoter kept: "has a total capacity of 22.06 GiB, ... this process has N memory in use.")
# (round 97) its second sentence opening a quote, the first ("CUDA out of memory. Tried to allocate N.") left out: "GPU 0 has a
# total capacity of 184.31 GiB of which 405.69 MiB is free." at the line's start, the free figure with it (the capacity and the free
# figure in these words are the caching allocator's alone), or right after PyTorch's exception type, where the type names it
TORCH_CAP_OPEN = re.compile(
    r"(?:^[ \t]{0,16}|\btorch\.(?:cuda\.)?OutOfMemoryError:[ \t]{0,4}(?:(?:CUDA|HIP|XPU) out of memory\.[ \t]{0,4}(?:\.{3}|\u2026)[ \t]{0,4})?)(?:GPU|Device) (?P<gpu>\d{1,20}) has a total capac(?:i)?ty of "
    + SZ.replace("(", "(?P<total>", 1) + r"(?: of which " + SZ.replace("(", "(?P<free>", 1) + r" is free)?(?:\.(?P<rest>.*)|\s*$"
    # ((round 101) or cut there by the quoter's ellipsis, the sentences kept after it: "... is free ... this process has N memory
    # in use ... Tried to allocate M", as TORCH_NEW's cut)
    r"|[ \t]{1,4}(?=\.{3}|\u2026))")
# (round 101) the request's sentence kept after a quote's ellipsis, at any place among the sentences kept ((rev2 B3) or after a
# kept sentence's own period: "... this process has N memory in use. Tried to allocate M.")
TORCH_REQ_CUT = re.compile(r"[.\u2026][ \t]{0,4}Tried to allocate " + SZ)   # (searched: an ellipsis's last dot is a dot)
TORCH_REQ_AFTER = re.compile(r"^\s{0,4}Tried to allocate " + SZ + r"\.")
POOLS_CUT = re.compile(r"(?:\.{2,3}|…) ?" + SZ + r" allocated in private pools \(e\.g\., (?:CUDA|HIP) Graphs\)")
# ((round 100) or cut after "memory" at the quote's end: "Process 142129 has 63.03 GiB memory")
# ((round 101) "memory" and "in use" may meet without their space where a line break between them was rejoined: "memoryin use")
PROC = re.compile(r"Process (\d{1,20}) has " + SZ + r"(?: memory(?: ?in use|[ \t]*$)| ?(?=\.{3}|\u2026))")
# (round 99) or "Process has N memory in use", the sentence quoted without its "Including non-PyTorch memory, this" and with no
# PID ("Process had" in a note's past tense): a listed other process always names its PID, so this is the process's own figure
SELF = re.compile(r"(?:[Tt]his p|\bP)rocess ha[sd] " + SZ + r" memory ?in use")
# (a quote may stop at "allowed", the end of its line)
ALLOWED = re.compile(SZ + r" allowed(?:;|\s*$)")
# (a quote may stop after any of its parts: "is allocated by PyTorch.", after the private pools, or whole; it may elide
# "Of the allocated memory" with an ellipsis ("is free... 24.38 GiB is allocated by PyTorch") and stop after "and N is
# reserved": the message's only "is reserved" is "is reserved by PyTorch but unallocated", so N is that figure)
OF_ALLOC = re.compile(r"(?:Of the allocated memory |(?:\.{2,3}|…) ?)" + SZ + r" is allocated by PyTorch(?:, with " + SZ
                      + r" allocated in private pools \(e\.g\., (?:CUDA|HIP) Graphs\))?(?:, and " + SZ
                      + r" is reserved(?: by PyTorch but unallocated)?)?")
# <= 2.0: "(GPU 0; 10.76 GiB total capacity; 4.29 GiB already allocated; 10.12 MiB free; 4.46 GiB reserved in total by PyTorch)"
# (a quote that breaks the message after its request may drop the bracket: "Tried to allocate 20.00 MiB" on one line, "GPU 0;
# 8.00 GiB total capacity; ... reserved in total by PyTorch" on the next, karpathy/nanoGPT#236: paste.py's unwrapping joins
# the two where the joined line reads as this message; an issue title may lose the space before the bracket, "Tried to
# allocate 256.00 MiB(GPU 0; ...", facebookresearch/splitnet#11; a paste may lose the space after a figure's semicolon,
# "34.18 GiB already allocated;111.19 MiB free", salesforce/ALBEF#6: each "; " inside the bracket takes "; " or ";")
# torch_musa (Moore Threads; torch_musa/csrc/core/MUSACachingAllocator.cpp) prints this form for its MUSA devices:
# "MUSA out of memory. Tried to allocate X (GPU 0; T total capacity; A already allocated; F free; R reserved in total by PyTorch)"
TORCH_OLD = re.compile(
    r"(?P<dev>CUDA|HIP|MUSA) out of memory\. ?Tried to allocate (?P<req>" + SIZE_RX + r")\.? ?\(?(?:GPU|device) (?P<gpu>\d{1,20}); ?(?P<total>" + SIZE_RX
    + r") total capacity; ?(?P<alloc>" + SIZE_RX + r") already allocated; ?(?P<free>" + SIZE_RX + r") free; ?(?:(?P<allowed>" + SIZE_RX
    + r") allowed; ?)?(?P<reserved>" + SIZE_RX + r") (?P<what>reserved in total by Py[Tt]orch|cached)\)?")
# (round 98) its bracket quoted without the sentence before it, opening a line: "GPU 0; 15.72 GiB total capacity; 1.49 GiB already
# allocated; 832.00 KiB free" (the "(" and the reserved figure kept or not; a quote of the failed run's figures alone). The
# semicolon-separated capacity, allocated and free figures in these words are the <= 2.0 caching allocator's alone
TORCH_BRACKET_OPEN = re.compile(
    r"^[ \t]{0,16}\(?(?:GPU|device) (?P<gpu>\d{1,20}); ?(?P<total>" + SIZE_RX + r") total capacity; ?(?P<alloc>" + SIZE_RX
    + r") already allocated; ?(?P<free>" + SIZE_RX + r") free(?:; ?(?:(?P<allowed>" + SIZE_RX + r") allowed; ?)?(?P<reserved>" + SIZE_RX
    + r") (?P<what>reserved in total by Py[Tt]orch|cached))?")
# intel-extension-for-pytorch: "(GPU 0; 15.11 GiB total capacity; 13.40 GiB already allocated; 13.90 GiB reserved in total by PyTorch)"
XPU_OLD = re.compile(r"(?:XPU out of memory\.|Current platform can NOT allocate memory block with size larger than 4GB!) Tried to allocate (?P<req>" + SIZE_RX + r") \(GPU\s+(?P<gpu>\d{1,20}); (?P<total>" + SIZE_RX
                      + r") total capacity; (?P<alloc>" + SIZE_RX + r") already allocated; (?P<reserved>" + SIZE_RX + r") reserved in total by PyTorch\)")
# PyTorch <= 1.0 (THC): the caching allocator's failure, without numbers
TORCH_THC = re.compile(r"cuda runtime error \(2\) : out of memory")
# (c10/cuda/CUDACachingAllocator.cpp and CUDAMallocAsyncAllocator.cpp refuse any size of 1 EiB (2^60 bytes) or more before
# trying: "CUDA out of memory. Tried to allocate more than 1EB memory." No card holds that; the size was computed wrong)
# ((round 95) a quote of the <= 2.0 form cut after the card's capacity keeps it: "Tried to allocate 36.00 GiB (GPU 0; 47.54 GiB
# total capacity)", group total; (round 97) or cut inside the bracket after it: "(GPU 0; 7.80 GiB total capacity; 6.45"; (trfix) the
# figures it kept before the cut are read: "...; 22.80 GiB already allocated; 5.06 MiB free" (groups alloc, free)
TORCH_BARE = re.compile(r"(?P<dev>CUDA|HIP|XPU|MUSA) out of memory\.(?: Tried to allocate (?:(?P<req>" + SIZE_RX + r")"
                        r"(?: ?\(GPU \d{1,20}; ?(?P<total>" + SIZE_RX + r") total capacity[);]"
                        r"(?: ?(?P<alloc>" + SIZE_RX + r") already allocated(?:; ?(?P<free>" + SIZE_RX + r") free|[ \t]{0,4}$))?)?|(?P<eb>more than 1EB memory)))?")
# c10/cuda/CUDAMallocAsyncAllocator.cpp. Its second half alone is the same message: a GUI dialog (Krita's) or a narrow
# terminal breaks it after the device ("Allocation on device 0" / "would exceed allowed memory. (out of memory)"); a quote
# may drop its "(out of memory)" and keep the device (group 2)
# (a quote may also drop the device number and the full stop: "Allocation on device would exceed allowed memory (out of memory)")
ASYNC = re.compile(r"(?:Allocation on device(?: (\d{1,20}))?\s*)?would exceed allowed memory\.? \(out of memory\)"
                   r"|Allocation on device (\d{1,20}) would exceed allowed memory\.")
# ComfyUI often shows only the first words of that message ("torch.OutOfMemoryError: Allocation on device ")
# Linear time: no two adjacent quantifiers may share characters (`\s*:?\s*` splits a run of blanks in
# n ways, and `search` retries that at every start: quadratic). Every optional separator is `\s*(?::\s*)?`.
ASYNC_CUT = re.compile(r"(?:OutOfMemoryError|!!!|Exception Message:\**|^|:|^\s*[A-Z]\w*)\s*(?::\s*)?Allocation on device\s*$")
# (the colons are padded with blanks; a dialog that reflows the block drops them: "Requested 666.02 MiB")
ASYNC_FIELDS = {
    "allocated": re.compile(r"Currently allocated\s*(?::\s*)?" + SZ),
    "requested": re.compile(r"Requested\s*(?::\s*)?" + SZ),
    "device_limit": re.compile(r"Device limit\s*(?::\s*)?" + SZ),
    "free": re.compile(r"Free \(according to CUDA\)\s*(?::\s*)?" + SZ),
}
# "PyTorch limit (set by user-supplied memory fraction)" and its value, on the same line or the next
ASYNC_LIMIT = re.compile(r"PyTorch limit \(set by user-supplied memory fraction\)\s*:\s*" + SZ)
ASYNC_LIMIT_NEXT = re.compile(r"\A\s*:\s*" + SZ)
# aten/src/ATen/mps/MPSAllocator.mm: each figure's label as the message prints it, spelled once here
# (quoted without its last sentence, "Tried to allocate N on private pool", the request unknown: groups 4-5 None)
MPS_LABELS = {"allocated": "MPS allocated: ", "other_allocations": "other allocations: ", "max_allowed": "max allowed: ",
              "requested": "Tried to allocate "}
_MPS_L = {k: re.escape(v) for k, v in MPS_LABELS.items()}
MPS_HEAD = r"MPS backend out of memory \(" + _MPS_L["allocated"] + SZ
# the message itself, by its own form: its figures opened ("(MPS allocated: N", a cut quote too), or its words where a
# message stands, at the line's start or right after an exception's type ("RuntimeError: ", "torch.OutOfMemoryError: ",
# "Error: "), so one cut or wrapped there is still MPS's; never by what follows the words: advice names them mid-sentence
# ("to avoid MPS backend out of memory: set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0", "... out of memory errors")
# (round 95) or its figures alone, opening a line as MPSAllocator labels them, the allocated figure and the cap on the same line
# ("MPS allocated: 8.73 GB, max allowed: 9.07 GB", a quote that kept the figures and not the words): no other message prints them
MPS_OPEN = re.compile(MPS_HEAD + r"|(?:^[ \t]{0,16}|(?<![\w.])[\w.]{0,60}(?:Error|Exception):[ \t]{0,4})MPS backend out of memory"
                      r"|^[ \t]{0,16}" + _MPS_L["allocated"] + SZ + r"(?=[^\n]{0,200}?" + _MPS_L["max_allowed"] + r")")
MPS = re.compile(MPS_HEAD + r", " + _MPS_L["other_allocations"] + SZ
                 + r"(?:, " + _MPS_L["max_allowed"] + SZ + r")?\)(?:\. " + _MPS_L["requested"] + SZ + r" on (private|shared) pool)?")
# (a quote may elide its middle: "MPS backend out of memory (MPS allocated: 8.23 GiB ... max allowed: 8.00 GiB)"; the line is
# an OOM when the message opens its figures (MPS_OPEN), so each figure the quote kept is read on its own; the words alone may
# be advice)
MPS_FIELDS = {k: re.compile(v + SZ) for k, v in _MPS_L.items()}
# c10/core/impl/alloc_cpu.cpp
# (some tracebacks show the message without its "DefaultCPUAllocator: " prefix: RVC-Project/Retrieval-based-Voice-Conversion-WebUI#2696)
# (round 82) TH's allocator, in Lua Torch (torch7's lib/TH/THGeneral.c) and in PyTorch before ATen replaced it (TH/THGeneral.c,
# aten/src/TH/THGeneral.cpp): THAlloc's and THRealloc's "$ Torch: not enough memory: you tried to allocate %dGB. Buy new RAM!"
# ("reallocate" from THRealloc), the size in whole GiB (size/1073741824, so a small request prints 0GB and reads no figure)
CPU = re.compile(r"(?:DefaultCPUAllocator: not enough memory|can't allocate memory|(?<![\w-])not enough memory(?=: you tried to (?:re)?allocate))"
                 r"(?:: you tried to (?:re)?allocate (?:(\d{1,20}) bytes|(\d{1,9})GB\. Buy new RAM!))?")
# Python's own host-RAM failure, and numpy's ("Unable to allocate 3.00 GiB for an array with shape ...")
# (round 90) not when its message is a GPU runtime's out-of-memory head ("MemoryError: CUDA out of memory", a library that
# raises Python's MemoryError type with PyTorch's device message; HIP, XPU and MUSA the same): the device's memory ran out,
# not the host's; the line is read as that message is without the type (torch_readers._torch_bare, else parse._generic)
PY_MEMORY = re.compile(r"(?:^|\s|\]\s)(?:numpy\.core\._exceptions\._ArrayMemoryError|_ArrayMemoryError|MemoryError)\b"
                       r"(?::(?!\s*(?:CUDA|HIP|XPU|MUSA) out of memory\b)\s*(.*))?$")
# numpy prints a size of three whole digits with a bare point ("Unable to allocate 738. MiB", numpy/core/_exceptions.py,
# _size_to_string's "{:.3g}" with "#"): the point stays outside the group, which holds the figure as a size (round 64)
NP_SZ = r"((?<![\d.])\d{1,20}(?:\.\d{1,20})?)\.?(\s?(?:bytes|[KMGT]iB|[KMGT]B|B))"
NP_ALLOC = re.compile(r"Unable to allocate " + NP_SZ + r" for an array")
# numpy's whole message without its type name in front (an app that prints str(e) under its own prefix, kaixxx/noScribe#147):
# numpy/core/src/multiarray/ctors.c raises _ArrayMemoryError whose str() is "Unable to allocate 3.60 GiB for an array with
# shape (1, 1200623, 201) and data type complex128"; the shape and the dtype make it numpy's (round 61)
NP_ALLOC_FULL = re.compile(r"Unable to allocate " + NP_SZ + r" for an array with shape \([\d, ]{0,200}\) and data type \w{1,40}")
# (ggml's CUDA backend names itself GGML_CUDA_NAME: "ROCm" in HIP builds, ggml-cuda.h: "ROCm error: out of memory")
DRIVER = re.compile(r"\b(CUDA|HIP|ROCm) error: out of memory|\bCUDA (driver) error: out of memory|\b(cudaErrorMemoryAllocation|hipErrorOutOfMemory)\b")
# (ggml's CUDA check prints cuBLAS's status string instead: "CUDA error: the resource allocation failed ... in function
# cublas_handle": ollama/ollama#6515, LostRuins/koboldcpp#1780)
CUBLAS = re.compile(r"CUBLAS_STATUS_ALLOC_FAILED|CUDA error: the resource allocation failed")
CUDNN = re.compile(r"CUDNN_STATUS_ALLOC_FAILED|CUDNN_STATUS_NOT_ENOUGH_WORKSPACE|Unable to find a valid cuDNN algorithm to run convolution")
NVML = re.compile(r"NVML_SUCCESS == r INTERNAL ASSERT FAILED")
# (rev13 S1) never the name an old torch fails to import or find ("ImportError: cannot import name 'OutOfMemoryError' from
# 'torch.cuda'", "AttributeError: module 'torch' has no attribute 'OutOfMemoryError'": torch < 2.5 has no torch.OutOfMemoryError),
# nor its traceback's source line "from torch.cuda import OutOfMemoryError"; (rev14 D2) nor the name Python suggests after
# it ("... has no attribute 'OutOfMemoryError'. Did you mean: 'OutOfMemoryError'?")
TORCH_OOM_TYPE = re.compile(r"(?<!import name ')(?<!no attribute ')(?<!import )(?<!Did you mean: ')\b(?:torch\.(?:cuda\.)?OutOfMemoryError|OutOfMemoryError)\b")
# PyTorch's exception type right before its "Tried to allocate N" with "CUDA out of memory." and the card's figures cut or
# retyped ("torch.OutOfMemoryError: Tried to allocate 12.60 GiB. GPU had ..."): the request is PyTorch's own words (round 64)
# (round 78) also quoted with an ellipsis standing for the cut "CUDA out of memory." ("torch.OutOfMemoryError: ... Tried to
# allocate 800.00 MiB ... 182.88 MiB is free", a Markdown write-up's elided quotation)
TORCH_TYPE_REQ = re.compile(r"\btorch\.(?:cuda\.)?OutOfMemoryError:\s{0,4}(?:(?:\.{3}|\u2026)\s{0,4})?Tried to allocate " + SZ)
# the card's free figure of PyTorch's message kept after a cut request, its "GPU N has a total capacity of T" elided ("... M is
# free") or kept from "of which" on; bounded, after the request only (round 78)
TORCH_CUT_FREE = re.compile(r"(?:\bof which|(?:\.{3}|\u2026))\s{1,4}" + SZ + r" is free\b")
# ComfyUI execution.py, comfy/sd.py; comfy-aimdo (Dynamic VRAM)
COMFY_OOM = re.compile(r"Got an OOM, unloading all loaded models\.?")  # (quoted without its full stop too)
COMFY_TIP = re.compile(r"This error means you ran out of memory on your GPU\.")
# (quoted with "VAE" dropped from its first half: "when regular decoding, retrying with tiled VAE decoding", Acly/krita-ai-diffusion#86)
COMFY_VAE = re.compile(r"Ran out of memory when regular (?:VAE )?(decoding|encoding), retrying with tiled VAE (?:decoding|encoding)"
                        r"(?: with tile size (\d{1,20}) and overlap (\d{1,20}))?|Encountered Out of Memory during VAE (decoding|encoding); Retrying with Tiled VAE")
# ComfyUI 0.8.0's attention (comfy/ldm/modules/attention.py:380/385, diffusionmodules/model.py:275/327, sub_quadratic_attention.py:173):
# an OOM caught inside the attention call and retried (cache emptied, more slices, softmax in place, slice attention): a warning
COMFY_ATTN_RETRY = re.compile(r"out of memory error, (?:emptying cache|increasing steps) and trying again|ran out of memory while running "
                              r"softmax in\s{1,4}_get_attention_scores_no_kv_chunking|scaled_dot_product_attention OOMed: switched to slice attention")
# comfy-aimdo (comfy_aimdo/model_vbar.py, vram_buffer.py, src/model-vbar.c, src/vrambuf.c): its VBAR raises
# MemoryError("VBAR OOM") for VRAM, so these are tried before Python's MemoryError
AIMDO = re.compile(r"VRAM Allocation failed(?: \((?:non OOM|OOM|error)\))?|Fault failed: -?\d+|VRAM reservation failed"
                    r"|\bVBAR (?:OOM|allocation failed)|VRAM grow failed(?:: (\d{1,20}) bytes)?|Could not rese?r?ve Virtual Address space")
# comfy-aimdo's check of its own CUDA driver calls (src/plat.h check_cu_impl) logs "CUDA API FAILED : <call> : <error string>"
# for every result but success and CUDA_ERROR_OUT_OF_MEMORY (older builds: "CUDA API FAILED (600): err = <call>: ..."): the
# line is never a shortage but a call the driver refused (aimdo 0.2.4 aligned the sizes its hook reserves: ComfyUI PR 12727)
# (the error string, cuGetErrorString's, is what follows the line's last colon: parse.py reads it without a regex)
AIMDO_CUDA = re.compile(r"CUDA API FAILED(?: \((\d{1,6})\))?\s?:\s?(?:err = )?(\w{1,48})\(")
AIMDO_CUDA_ERROR = re.compile(r"[a-z][a-z ]{0,79}")
# the Comfy Compiler (ComfyUI PR 15861, 2026; comfy-aimdo >= 0.5): aimdo's memory compiler records the model's allocations
# once and replays them; comfy_aimdo/malloc_graph.py raises this when the recording (or starting it) fails: an allocation
# pattern it cannot plan (a custom node allocating inside the compiled forward, a "rogue"), not a lack of memory
COMFY_COMPILER = re.compile(r"aimdo memory compile error(?:: ([a-z ]{1,60}))?")
# comfy-aimdo's pinned host buffer (ComfyUI pinned memory): the failure is in page-locked system RAM
# (comfy-aimdo's file reader reads a slice into its pinned staging buffer and copies it to the card with cuMemcpyHtoDAsync,
# src/hostbuf-file-reader.c; later builds log "hostbuf_read_file_slice: device copy failed result=N" where the Python side
# raises "hostbuf_file_reader_read failed": the same pinned staging path). Only result=2, CUDA_ERROR_OUT_OF_MEMORY: any other
# CUresult is a fault of the device or context (700: an illegal address left by an earlier kernel), not a shortage)
# ((fix66d) "ModelMMAP allocation failed" is the model file's mapping, not pinned RAM: aimdo_forms.py)
PINNED_HOST = re.compile(r"HostBuffer(?:\.\w+| allocation) failed|cudaHostAlloc failed"
                          r"|\bhostbuf_\w{1,60}: device copy failed result=2\b"
                          r"|\bCRITICAL\b.{0,40}\bHost OOM\b|^\s*Host OOM\s*$")
# comfy-aimdo's Python side of the same reader (comfy_aimdo/host_buffer.py) raises RuntimeError("hostbuf_file_reader_read
# failed") whenever src/hostbuf-file-reader.c returns false: a bad device or pointer, the file read, a CUDA event call, the
# copy, or its one 64 MiB cuMemAllocHost staging window. Only that last is a shortage, and CHECK_CU logs the others at DEBUG
# only: the line alone names the reader's failure, not a lack of RAM (comfy-aimdo 0.4.8, PR #58, fixed such a failure by
# giving each device its own ring buffer). parse.py reads it as comfy.pinned_host with form "reader"
AIMDO_READER = re.compile(r"hostbuf_file_reader_read failed")
# torch-directml (AMD/Intel GPUs on Windows): no allocator numbers, only the size of the one tensor
# (a quote may elide the second sentence: "Could not allocate tensor with 471859200 bytes. There ... available!")
# ((round 105) or quote the head alone, the line ending at "bytes" or "bytes.": "Could not allocate tensor with 3218341696 bytes")
DML = re.compile(r"Could not allocate tensor with (\d{1,20}) bytes(?:\. (?:There is not enough GPU video memory available|There\s?(?:\.{3}|…))"
                 r"|\.?[ \t]{0,8}$)|DML allocator out of memory")
# vLLM: v0 raise_if_cache_size_invalid, v1 kv_cache_utils / gpu_worker. v1's worker logs "Available KV cache memory: X GiB"
# and check_enough_kv_cache_memory raises this error whenever X <= 0 (vllm-ascend's worker logs and checks the same): a
# negative figure is that failure even where a quote stops before the error line
VLLM_NOBLOCKS = re.compile(r"No available memory for the cache blocks|Available KV cache memory: -\d")
# (a quote may elide its end: "... that can be stored in ... when initializing the engine": group 2 None)
VLLM_V0_LEN = re.compile(r"The model's max seq len \((\d{1,20})\) is larger than the maximum number of tokens that can be stored in "
                         r"(?:KV cache \((\d{1,20})\)|(?:\.{3}|…))")
VLLM_V1_LEN = re.compile(r"max seq len \((\d{1,20})\), \(?(\d{1,12}(?:\.\d{1,12})? Gi?B) KV cache is needed, which is larger than the available KV cache memory \((-?\d{1,12}(?:\.\d{1,12})? Gi?B)\)"
                          r"(?:\. Based on the available memory, the estimated maximum model length is (\d{1,20}))?")
VLLM_V1_LEN_SHORT = re.compile(r"(?<![\d.])\(?(\d{1,12}(?:\.\d{1,12})? Gi?B) KV cache is needed, which is larger than the available KV cache memory \((-?\d{1,12}(?:\.\d{1,12})? Gi?B)\)"
                                r"(?:\. Based on the available memory, the estimated maximum model length is (\d{1,20}))?")
# vLLM >= 0.17 (config/compilation.py resolve_cudagraph_mode_and_sizes, vllm#34094): a hybrid model (Mamba, GDN, KDA
# layers) keeps one state block per decoding sequence, allocated at start-up from the same budget as the KV cache; full
# decode CUDA graphs for max_num_seqs sequences need that many blocks
VLLM_MAMBA = re.compile(r"max_num_seqs \((\d{1,20})\) exceeds available Mamba cache blocks \((\d{1,20})\)")
# (round 83) the device it names is torch's device string ("cuda:0", "xpu:0" on Intel's XPU build): group 1, its type
VLLM_STARTUP = re.compile(r"[Ff]ree memory on device(?: ([a-z]{1,12})?\S{0,12})? \(([\d.]+)/([\d.]+) GiB\) on startup is less than desired GPU memory utilization \(([\d.]+), ([\d.]+) GiB\)")
# (tri70) the same check made by a launcher before vLLM starts: club-3090's scripts/preflight.sh (preflight_compose_gpu_fit) reads
# nvidia-smi's total and free per card and refuses when free < gpu_memory_utilization x total x 0.98, the check vLLM makes at start
# (its comment says so): "[preflight] ERROR: GPU N has F GiB free, but this config needs ~D GiB/card" (F and D to one decimal, GiB of
# 1024 MiB). Nothing of the job is loaded yet; groups: free, the share it needs per card
VLLM_LAUNCHER_GATE = re.compile(r"(?:\[preflight\] )?ERROR: GPU \d{1,3} has (\d{1,6}(?:\.\d{1,3})?) GiB free, but this config needs "
                                r"~(\d{1,6}(?:\.\d{1,3})?) GiB/card")
# (fixZ) vLLM's CPU worker (v1/worker/cpu_worker.py, 0.20.2) checks the NUMA node's RAM three times, each a ValueError with
# format_gib's figures (round(b / 2**30, 2)): "Available memory on node N (avail/total GiB) on startup is less than desired CPU
# memory utilization (util, requested GiB)", and at the KV cache's allocation "... on kv cache allocation is less than requested
# memory for kv (kv GiB)" (--kv-cache-memory-bytes given) or "(kv/requested GiB)" (kv = the worker's share less its own RSS,
# negative when the RSS passed the share). Groups: node, available, total, "startup"/"kv cache", util, requested, kv, share
_G = r"(-?\d{1,9}(?:\.\d{1,9})?)"
VLLM_CPU_NODE = re.compile(r"Available memory on node (\d{1,4}) \(" + _G + "/" + _G + r" GiB\) on (startup|kv cache) ?(?:allocation )?is less "
                           r"than (?:desired CPU memory utilization \(" + _G + ", " + _G + r" GiB\)|requested memory for kv \(" + _G
                           + "(?:/" + _G + r")? GiB\))")
# the same check quoted with its numbers elided ("ValueError: Free memory ... less than desired"): no numbers
VLLM_STARTUP_CUT = re.compile(r"\b[Ff]ree memory (?:\.\.\.|\u2026) ?(?:on startup )?(?:is )?less than desired")
# (round 116) the same check's head alone, a quote that stops after the figures ("Free memory on device xpu:0 (5.0/31.89 GiB)"
# ending the line): torch's device:index name and the GiB pair as vLLM prints them (CatBoost's "on device #0" is not this form)
VLLM_STARTUP_HEAD = re.compile(r"[Ff]ree memory on device ([a-z]{1,12}):\d{1,3} \((\d{1,9}(?:\.\d{1,9})?)/(\d{1,9}(?:\.\d{1,9})?) GiB\)\s{0,8}$")
# vLLM v1 (v1/worker/gpu_model_runner.py _dummy_sampler_run, _dummy_pooler_run): the sampler (or pooler) run with max_num_seqs
# dummy requests after the KV cache was sized did not fit what gpu_memory_utilization left outside it (vllm-project/vllm#14452,
# llm-d/llm-d#787)
# (a quote may elide what follows the sampler: group 2 None)
VLLM_WARMUP = re.compile(r"CUDA out of memory occurred when warming up (sampler|pooler)(?:(?: \(task='?\w*'?\))? with (\d{1,20}) dummy requests)?")
VLLM_PROFILE = re.compile(r"Error in memory profiling\. Initial free memory ([\d.]+) GiB, current free memory ([\d.]+) GiB")
# SGLang (srt/model_executor/model_runner.py, pool_configurator.py): after the weights, mem_fraction_static x the card left no
# room for the KV pool; at run time the pool has no free slots for a prefill or decode batch (mem_cache/common.py)
# (round 72) quoted cut after its first words, as the RuntimeError SGLang raises ("RuntimeError: Not enough memory" and the
# line's end: ai-dynamo/nixl#2007)
SGLANG_POOL = re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static\.?(?: Current value: \S*?mem_fraction_static=([\d.]+))?")
# (review30) the cut quote on its own: any Python program may raise RuntimeError("Not enough memory"), so the cut form is its
# own reader (form "cut"), read as SGLang's only where no frame of another program comes with it (env.guess_runtime)
SGLANG_POOL_CUT = re.compile(r"\bRuntimeError: Not enough memory\.?\s*$")
# (the default page size's allocator says only "Out of memory. Try to lower your batch size.": sgl-project/sglang-jax#113 form)
SGLANG_KV = re.compile(r"(?:\b(Prefill|Decode) out of memory|\bOut of memory)\. Try to lower your batch size")
# TensorRT-LLM's PyTorch executor (_torch/pyexecutor/py_executor_creator.py): an OOM while one component was created, then
# a table: "The following component could not be created: KV cache", "Total GPU memory (GiB): 95.00",
# "Free GPU memory before component creation attempt (GiB): 16.95" (read by parse.add_block_fields)
TRTLLM_EXECUTOR = re.compile(r"Executor creation failed (?:due to insufficient GPU memory|with an error which might indicate insufficient GPU memory)")
TRTLLM_FIELDS = {
    # ends at the line's end, or at a literal "\n" where a log holds the message's repr on one line
    "component": re.compile(r"The following component could not be created: ([^\\\n]{1,120}?)\s*(?:\\n|$)"),
    "total": re.compile(r"Total GPU memory \(GiB\): ([\d.]+)"),
    "free": re.compile(r"Free GPU memory before component creation attempt \(GiB\): ([\d.]+)"),
}
# llama.cpp / ggml
# ggml before its allocators (2023): a graph's context is a fixed host pool; the batch's tensors overflowed it
# (ymcui/Chinese-LLaMA-Alpaca#526: lower -b). ggml_new_object's form (2024) is the context's own metadata: a size bug.
# ggml.c's scratch buffer (2023: "not enough space in the scratch memory", later "... scratch memory pool (needed N,
# available M)") is another fixed host buffer the program sized from its own tables; both are quoted without numbers too
# (round 84) the context pool's line quoted without its function's name, where a line starts, with both numbers ("not enough
# space in the context's memory pool (needed N, available M)"): ggml's words, the function that printed them not named
GGML_CTX_POOL = re.compile(r"ggml_new_(tensor_impl|object): not enough space in the (context's memory pool|scratch memory)(?: pool)?"
                           r"(?: \(needed (\d{1,20}), available (\d{1,20})\))?"
                           r"|^\s{0,8}not enough space in the (context's memory pool) \(needed (\d{1,20}), available (\d{1,20})\)")
# ggml's graph allocator (ggml-alloc.c) placing a tensor inside a buffer it had already sized (a measure pass, 2023-24:
# "ggml_tallocr_alloc: not enough space in the buffer (needed N, largest block available M)" then GGML_ASSERT; 2024 on,
# ggml_dyn_tallocr_alloc "... to allocate N bytes, largest block available M bytes", "this should never happen"): the
# buffer exists, its size came from ggml's own sums, so the sizing is wrong for this graph
GGML_TALLOC = re.compile(r"not enough space in the buffer (?:\(needed (\d{1,20}), largest block available (\d{1,20})\)"
                         r"|to allocate (\d{1,20}) bytes, largest block available (\d{1,20}) bytes)")
# (rev11 S3) 1-17 spaces or tabs after "on device N:": a terminal's cut joined back (or a paste) keeps the status's indent
GGML_MALLOC = re.compile(r"allocating ([\d.]{1,24}) MiB on device (\d{1,20}):[ \t]{1,17}(cuda|hip)Malloc failed: out of memory")
# ggml-cann (ggml-cann.cpp ggml_backend_cann_buffer_type_alloc_buffer): "%s: allocating %.2f MiB on device %d: aclrtMalloc
# failed: %s" with aclGetRecentErrMsg() (CANN's own words, "EL0004: ... memory pool is insufficient" and others): the Ascend NPU
GGML_CANN_MALLOC = re.compile(r"allocating ([\d.]{1,24}) MiB on device (\d{1,20}):[ \t]{1,17}aclrtMalloc failed")
GGML_MALLOC_BARE = re.compile(r"\b(cuda|hip)Malloc failed: out of memory")
GGML_BUFFER = re.compile(r"failed to allocate (?:(\S+) )?buffer of size (\d{1,20})")
# ggml-metal (ggml-metal-device.m ggml_metal_buffer_init; ggml_backend_metal_buffer_type_alloc_buffer before 2025):
# "%s: error: failed to allocate buffer, size = %8.2f MiB"
GGML_METAL_BUF = re.compile(r"\bggml_(?:backend_)?metal_\w{0,60}: error: failed to allocate buffer, size =\s{0,12}([\d.]+) MiB")
GGML_KV = re.compile(r"failed to allocate buffer for kv cache")
# whisper.cpp (src/whisper.cpp whisper_kv_cache_init, whisper_init_state): "whisper_kv_cache_init: failed to allocate memory
# for the kv cache" when ggml_backend_alloc_ctx_tensors refuses the cache's buffer, then "whisper_init_state:
# whisper_kv_cache_init() failed for self-attention cache" (or cross-attention); builds before the rename (and 2023's
# llama.cpp) print "kv_cache_init: failed to allocate memory for the KV cache" / "kv_cache_init() failed for self-attention cache"
GGML_KV_INIT = re.compile(r"kv_cache_init: failed to allocate memory for the kv cache\b"
                          r"|kv_cache_init\(\) failed for (?:self|cross)-attention cache", re.I)
GGML_COMPUTE = re.compile(r"failed to allocate compute (?:pp )?buffers")
GGML_LOAD = re.compile(r"unable to allocate (\S+?) buffer|unable to allocate backend buffer")
GGML_VULKAN = re.compile(r"Device memory allocation of size (\d{1,20}) failed|ErrorOutOfDeviceMemory|VK_ERROR_OUT_OF_DEVICE_MEMORY")
# host (system) memory: ggml's aligned malloc, and the Vulkan backend's pinned (page-locked) host buffer
GGML_METAL_MAX = re.compile(r"ggml_metal_add_buffer: buffer '(\w+)' size (\d{1,20}) is larger than buffer maximum of (\d{1,20})")
GGML_HOST = re.compile(r"ggml_aligned_malloc: insufficient memory \(attempted to allocate ([\d.]+) MB\)"
                        r"|VK_ERROR_OUT_OF_HOST_MEMORY|ErrorOutOfHostMemory")
# ggml's pinned (page-locked) staging buffer refused: a warning, the backend goes on with pageable memory (ggml-cuda.cu
# ggml_cuda_host_malloc returns nullptr and the host buffer type falls back to the CPU buffer type; ggml-vulkan.cpp
# ggml_backend_vk_host_buffer_type_alloc_buffer catches vk::SystemError, GGML_LOG_WARN "Failed to allocate pinned memory
# (%s)", e.what(), and falls back the same way; before 2025 it printed e.what() on its own "ggml_vulkan: vk::..." line).
# Never a failure: the failure that follows, if any, is read from its own lines
# NVIDIA Jetson's nvmap (the unified-memory allocator under CUDA on Tegra) refusing an allocation with errno 12 (ENOMEM):
# "NvMapMemAllocInternalTagged: 1075072515 error 12" (the number is the allocation's flags and tag, not a size), or
# "NvMapMemHandleAlloc: error 12"
# (round 92) a quote that elides the flags number ("NvMapMemAllocInternalTagged: ... error 12") reads the same
NVMAP = re.compile(r"\bNvMapMem(?:AllocInternalTagged|HandleAlloc): (?:\d{1,20} |\.\.\. )?error 12\b")
GGML_PINNED_WARN = re.compile(r"ggml_cuda_host_malloc: (?:warning: )?failed to allocate [\d.]+ MiB of pinned memory"
                              r"|ggml_vulkan: [Ff]ailed to allocate pinned memory")
# ggml_vk_create_buffer's own throw before it allocates (size > max_buffer_size; before mid-2024 against
# maxMemoryAllocationSize): vk::OutOfDeviceMemoryError("Requested buffer size exceeds device buffer size limit"), whose what()
# is the message, ": ", and the result's name. Inside the pinned warning it is the warning's quote, the host buffer type falls
# back to a CPU buffer (tri69); after "Device memory allocation of size N failed." it is a device buffer refused (ggml.vulkan_limit)
GGML_VK_OWN_LIMIT = r"Requested buffer size exceeds device (?:buffer size|memory allocation) limit(?:: \w+)?"
# the warning with the error it quotes (": out of memory", ggml-vulkan's e.what(), after ": " or in parentheses): cut out of a line to read the rest
GGML_PINNED_CUT = re.compile("(?:" + GGML_PINNED_WARN.pattern + r")(?:(?:: ?| ?\()(?:out of memory|(?:ggml_vulkan: )?vk::\w+(?:::\w+)*: \w+"
                             r"|(?:ggml_vulkan: )?" + GGML_VK_OWN_LIMIT + r")\)?)?")
# ggml_init asserts its context's host buffer (ggml.c: mem_buffer = ggml_aligned_malloc(mem_size); GGML_ASSERT(ctx->mem_buffer
# != NULL)): malloc returned NULL for a context's memory (tensor metadata, or a whole graph without an allocator): system RAM
# or the OS's commit limit
# (round 82) ggml's GGML_ASSERT before 2024 printed "GGML_ASSERT: <file>:<line>: <condition>" (ggml.h: fprintf(stderr,
# "GGML_ASSERT: %s:%d: %s\n", __FILE__, __LINE__, #x)): the same assert in the older form
GGML_CTX_ASSERT = re.compile(r"GGML_ASSERT\(ctx->mem_buffer != NULL\)|GGML_ASSERT: [^\n]{1,300}?:\d{1,6}: ctx->mem_buffer != NULL")
# Ollama llm/server.go (before 2026-05) and llm/llama_server.go
OLLAMA_SYS = re.compile(r"model requires more system memory \(([\d.]+ ?[KMGT]i?B)\) than is available \(([\d.]+ ?[KMGT]i?B)\)")
OLLAMA_SYS2 = re.compile(r"model requires more system memory than is currently available")
# (llm/llama_server.go, 2026: "llama-server process no longer running: %s %s", the exit status and the runner's last error)
OLLAMA_RUNNER = re.compile(r"(?:llama runner|llama-server) process has terminated: (.*)|llama-server reported out-of-memory during startup: (.*)"
                           r"|(?:llama runner|llama-server) process no longer running: (.*)")
OLLAMA_INSUFF = re.compile(r"insufficient memory - required allocations")
# Ollama's server (llm/server.go initModel, 0.15.3+, 2026-01) when the runner's /load request failed: the runner died while
# it allocated the weights, the KV cache of num_ctx and the graph; the client prints it after "Error: 500 ..."
OLLAMA_LOAD_FAILED = re.compile(r"model failed to load, this may be due to resource limitations")

# Any other program's failure in the words every runtime uses ("out of memory", "failed to allocate", "not enough memory"),
# on a line that begins as an error report ("fatal error:", "Error ...", "[ERROR]", "RuntimeError:", "failed to ...") and is
# not a warning, a retry or a note that it is no failure: recognised last, when no runtime's own form matched, so a log of a
# runtime triage has no row for is still read (its context decides the cause, else "other": nothing to go on). Prose that
# quotes the words mid-line is not read. Case-sensitive words of lines.ERROR_WORDS, so the scanner's anchors find the line
GENERIC_OOM = re.compile(r"out of memory|Out of memory|out-of-memory|not enough memory|insufficient memory|(?:[Ff]ailed|[Uu]nable) to allocate"
                         r"|Allocation failed")
GENERIC_HEAD = re.compile(r"\A[^A-Za-z\n]{0,40}(?:[Ff]atal [Ee]rror|[Ee]rror|ERROR|FATAL|[Ff]ailed|FAILED|[\w.]{0,80}(?:Error|Exception):)")
# or that reports an error and ends in the words, strerror-style ("CUDA error 2 at ggml-cuda.cu:359: out of memory",
# "ds4: ROCm tensor alloc failed: out of memory"): a sentence that goes on after them is prose quoting them
GENERIC_TAIL = re.compile(r"(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]atal|FATAL)\b[^\n]{0,120}?(?:out of memory|Out of memory|not enough memory"
                          r"|insufficient memory)[\s.!)\]]{0,3}\Z")
GENERIC_NOT = re.compile(r"[Rr]etry|[Rr]etrying|trying again|WARN|[Ww]arning|INFO|not a failure")
