"""The triage of one log text and the event its answer speaks of, for tests that check how a runtime's own lines are read."""


def last_event(text: str):
    """(result, event): the headline event (the one "cause" describes: the last that failed, else the last), which is the
    last event unless a failure is followed by an event the run went on from (review30: it was always events[-1])."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text(text)
    assert res["found"], text
    return res, res["events"][res["headline"]]


def read(text: str):
    """(cause, kind, runtime, device kind, numbers): the answer and its headline event's fields, as the round tests compare them."""
    res, ev = last_event(text)
    return res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"]


def kinds(text: str) -> list:
    """The kind of every event the triage found (none need be a failure)."""
    from gpu_garden.memory.triage import engine
    return [e["kind"] for e in engine.triage_text(text)["events"]]


def top(text: str):
    """(cause, {cause id: confidence}, headline event): what the answer names and how the causes scored."""
    res, ev = last_event(text)
    return res["cause"], {c["id"]: c["confidence"] for c in ev["causes"]}, ev


def fired(ev) -> dict:
    """{cause id: confidence} of the causes the log's own rows scored: a cause named only as rules_runner_up.py's likeliest
    other reading beside a lone weak cause is left out (its points still count in the confidences). A cause with no
    evidence text is kept: only evidence that is all the runner-up's marks one (rev17 S6: all() of nothing is True)."""
    from gpu_garden.memory.triage.rules_runner_up import SAYS
    return {c["id"]: c["confidence"] for c in ev["causes"]
            if not (c["evidence"] and all(e.startswith(SAYS) for e in c["evidence"]))}


# llama.cpp (build 4069) offloading {off} of 29 layers of a {params} B Qwen2.5 7B Q4_K_M and failing to allocate its
# KV cache: the shape of the version-regression ("should fit") tests
LLAMA_KV_OOM = """build: 4069 (a1b2c3d4) with cc (GCC) 13.3.0 for x86_64-linux-gnu
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free
llama_model_loader: - kv   2:                               general.name str              = Qwen2.5 7B Instruct
print_info: file type   = Q4_K - Medium
print_info: model params     = {params} B
load_tensors: offloaded {off}/29 layers to GPU
load_tensors:        CUDA0 model buffer size =  4168.09 MiB
load_tensors:   CPU_Mapped model buffer size =   292.36 MiB
llama_context: n_ctx         = 8192
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 448.00 MiB on device 0: cudaMalloc failed: out of memory
llama_kv_cache_unified: failed to allocate buffer for kv cache
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
"""


# A PyTorch >= 2.1 OOM on a 24 GB card whose own process holds 22.50 GiB (23040 MiB), and nvidia-smi's compute-apps CSV
# header: the inputs of the compute-apps tests (test_triage_fix6, test_triage_fix7) that add their own table rows.
TORCH_OOM_2250 = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 "
                  "GiB of which 1.10 GiB is free. Including non-PyTorch memory, this process has 22.50 GiB memory in use. Of "
                  "the allocated memory 21.80 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but "
                  "unallocated.\n")
SMI_APPS_HEADER = ("$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n"
                   "pid, process_name, used_gpu_memory [MiB]\n")


def answer(data_dir, name_or_text: str):
    """(result, headline event, its evidence joined): a log file under data_dir (a name ending .log) or a text, as the
    fix67o / fix68a / fix68f tests read them (each had its own copy)."""
    from gpu_garden.memory.triage import engine
    text = (data_dir / name_or_text).read_text() if name_or_text.endswith(".log") else name_or_text
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    return res, ev, " ".join(e for c in ev["causes"] for e in c["evidence"])
