"""Triage round 66 (review26 items 3-5, listed there, not fixed): three round-61 rows narrowed to their own evidence.
Logs modelled on the cases' texts (InternLM/lmdeploy#277 and #978, intel/ipex-llm#13273, deepbeepmeep/Wan2GP#1815), mixed
with another runtime's lines as review26 describes; dates, sizes, card names and paths made up; expected values by hand."""
from support.triage_event import top

# a vLLM start-up that names LMDeploy once (a benchmark note), then the CUDA runtime's error string
VLLM_NAMES_LMDEPLOY = (
    "INFO 03-02 09:10:11 [__init__.py:239] Automatically detected platform cuda.\n"
    "INFO 03-02 09:10:12 [api_server.py:1043] vLLM API server version 0.8.5\n"
    "# comparing against lmdeploy on the same card\n"
    "INFO 03-02 09:10:40 [gpu_model_runner.py:1347] Model loading took 14.9899 GiB and 8.2 seconds\n"
    "INFO 03-02 09:10:55 [kv_cache_utils.py:634] GPU KV cache size: 51,312 tokens\n"
    "CUDA runtime error: out of memory\n")


def test_passing_mention_of_lmdeploy_does_not_claim_a_vllm_log():
    """Before round 66 the bare word was a runtime marker and the first marker wins: runtime lmdeploy with TurboMind's
    kv-cache advice. Now the vLLM log is vLLM's."""
    cause, scores, ev = top(VLLM_NAMES_LMDEPLOY)
    assert ev["runtime"] == "vllm", ev
    assert not any("TurboMind" in e or "cache_max_entry_count" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_lmdeploy_own_lines_still_name_it():
    """LMDeploy's CLI and logger prefix (as #79's case prints them) and TurboMind's [TM] prefix still name the runtime; a bare
    pin in an environment line (#978) with nothing else named does too (the last-resort fact)."""
    for text in ("CUDA_VISIBLE_DEVICES=0 lmdeploy serve api_server ./internlm2-chat-7b --session-len 4096\n"
                 "CUDA runtime error: out of memory\n",
                 "2026-01-05 10:00:00,100 - lmdeploy - INFO - builder.py:61 - model_source: hf_model\n"
                 "CUDA runtime error: out of memory\n",
                 "python 3.11, lmdeploy==0.3.0, cuda 12.2\nCUDA runtime error: out of memory\n"):
        cause, scores, ev = top(text)
        assert (ev["runtime"], cause) == ("lmdeploy", "kv-cache"), (text, ev)


SYCL_THEN_CUDA = (
    "Error: llama runner process has terminated: error:CHECK_TRY_ERROR((*stream).memcpy((char *) tensor->data + offset, "
    "data, size).wait()): Exception caught in this line of code.\n"
    "  in function ggml_backend_sycl_buffer_set_tensor at C:/build/ollama/ggml/src/ggml-sycl/ggml-sycl.cpp:432\n"
    "C:/build/ollama/ggml/src/ggml-sycl/../ggml-sycl/common.hpp:115: SYCL error\n"
    + "".join(f"time=2026-02-10T11:0{i}:00.000+01:00 level=INFO source=server.go:105 msg=\"system memory\" total=\"63.8 GiB\"\n"
              for i in range(6))
    + "llama_kv_cache_init:      CUDA0 KV buffer size =  8192.00 MiB\n"
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n"
    "llama_kv_cache_init: failed to allocate buffer for kv cache\n")


def test_earlier_sycl_run_adds_no_weights_reading_to_a_later_cuda_failure():
    """The set_tensor row reads the SYCL function line only beside its own failure: the later CUDA KV-cache failure gets no
    SYCL weights evidence (before round 66 it got weights-exceed-vram from the earlier run's line)."""
    cause, scores, ev = top(SYCL_THEN_CUDA)
    assert not any("SYCL" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
    cause, scores, ev = top(SYCL_THEN_CUDA.split("time=")[0])        # the SYCL failure alone keeps its reading
    assert cause == "weights-exceed-vram" and any("set_tensor" in e for e in ev["causes"][0]["evidence"]), ev["causes"]


PLAN = ("Switching to partial pinning since full requirements for pinned models is 5120.0 MB while estimated available reservable "
        "RAM is 4300.5 MB. You may increase the value of parameter 'perc_reserved_mem_max' to a value higher than 0.40\n")
REACHED = "Unable to pin more tensors for this model as the maximum reservable memory has been reached (3980.25).\n"
ERR = ("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
       "stacktrace below might be incorrect.\n")


def test_mmgp_partial_pinning_plan_alone_is_not_host_ram():
    """Wan2GP prints its partial-pinning plan as information: a CUDA error after it alone does not lean host-ram; the
    pinning step hitting its limit does (and a CUDA check without allocator numbers keeps its own host-ram row) (as Wan2GP#1815's case shows)."""
    cause, scores, ev = top(PLAN + ERR)
    assert not any("mmgp" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
    cause, scores, ev = top(PLAN + REACHED + ERR)
    assert cause == "host-ram" and any("mmgp" in e for e in ev["causes"][0]["evidence"]), ev["causes"]
