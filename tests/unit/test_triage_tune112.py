"""Triage after batches 112-117 and 121 (round 61). Lines written from the programs' own sources or wording: MLC LLM's memory
plan check (cpp/serve/config.cc), TurboMind's CUDA check without its "[TM][ERROR]" prefix in a log that names LMDeploy,
ggml's SYCL check naming the function that threw (ggml-sycl.cpp / common.hpp), the RAPIDS Accelerator for Apache Spark's RMM
event handler (DeviceMemoryEventHandler.scala, both its pre- and post-2024 forms), numpy's _ArrayMemoryError text printed
without its type name, PyTorch <= 1.x's message typed without spaces, and mmgp's pinning lines (src/mmgp/offload.py).
Dates, sizes, card names and paths made up; expected values by hand."""
from support.triage_event import top

MIB = 1 << 20
GIB = 1 << 30


def mlc(avail, weights, temp):
    return ("[2025-02-03 10:00:01] INFO auto_device.py:79: Found device: cuda:0\n"
            "TVMError: Check failed: (output_res.IsOk()) is false: Insufficient GPU memory error: The available single GPU memory "
            f"is {avail} MB, which is less than the sum of model weight size ({weights} MB) and temporary buffer size ({temp} MB).\n"
            "1. You can set a larger \"gpu_memory_utilization\" value.\n")


def test_mlc_plan_weights_fit_temporary_buffer_does_not_is_activations():
    """MLC LLM's memory plan, weights under the share it may use: runtime mlc-llm, the three figures in its MB (MiB), and the
    prefill's temporary buffer (activations), answered with --prefill-chunk-size."""
    cause, scores, ev = top(mlc("11010.500", "3890.250", "8120.125"))
    assert (ev["runtime"], ev["kind"]) == ("mlc-llm", "mlc.insufficient"), ev
    assert ev["numbers"] == {"available": round(11010.5 * MIB), "weights": round(3890.25 * MIB),
                             "temporary": round(8120.125 * MIB)}, ev["numbers"]
    assert cause == "activations" and scores["activations"] >= 0.7, ev["causes"]
    assert "--prefill-chunk-size" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_mlc_plan_weights_alone_over_the_share_is_weights():
    """The same message with one shard's weights alone over the available share: weights-exceed-vram (tensor parallel
    shards or quantization), not the temporary buffer."""
    cause, scores, ev = top(mlc("6963.200", "7420.000", "1210.500"))
    assert cause == "weights-exceed-vram" and scores.get("activations", 0) == 0, ev["causes"]
    assert "--tensor-parallel-shards" in ev["causes"][0]["evidence"][0], ev["causes"][0]


LMDEPLOY = ("python 3.11, lmdeploy==0.2.6, cuda 11.8\n"
            "CUDA runtime error: out of memory\n")


def test_turbomind_check_wording_in_a_log_naming_lmdeploy_is_kv_cache():
    """TurboMind's CUDA check wording without its prefix, in a log whose pin names lmdeploy: runtime lmdeploy, its KV cache
    (cache_max_entry_count) as TurboMind's own line reads."""
    cause, scores, ev = top(LMDEPLOY)
    assert ev["runtime"] == "lmdeploy", ev
    assert cause == "kv-cache", ev["causes"]
    assert "cache_max_entry_count" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_the_same_wording_without_lmdeploy_is_not_kv_cache():
    """The bare line alone names no runtime: no KV-cache reading."""
    cause, scores, ev = top("CUDA runtime error: out of memory\n")
    assert ev["runtime"] != "lmdeploy" and scores.get("kv-cache", 0) == 0, ev


SYCL_SET_TENSOR = (
    "Error: llama runner process has terminated: error:CHECK_TRY_ERROR((*stream).memcpy((char *) tensor->data + offset, "
    "data, size).wait()): Exception caught in this line of code.\n"
    "  in function ggml_backend_sycl_buffer_set_tensor at C:\\build\\llama.cpp\\ggml\\src\\ggml-sycl\\ggml-sycl.cpp:418\n"
    "C:\\build\\llama.cpp\\ggml\\src\\ggml-sycl\\..\\ggml-sycl\\common.hpp:111: SYCL error\n")


def test_sycl_set_tensor_exception_is_weights_on_an_intel_gpu():
    """ggml's SYCL check naming set_tensor (a weight's copy onto the card) under Ollama's runner: device xpu, and the
    weights not fitting."""
    cause, scores, ev = top(SYCL_SET_TENSOR)
    assert (ev["runtime"], ev["device_kind"]) == ("ollama", "xpu"), ev
    assert cause == "weights-exceed-vram", ev["causes"]


def test_sycl_other_function_is_xpu_but_not_weights():
    """Another SYCL function (a compute launch) gives the device, not the weights reading."""
    text = SYCL_SET_TENSOR.replace("ggml_backend_sycl_buffer_set_tensor", "ggml_sycl_op_mul_mat")
    cause, scores, ev = top(text)
    assert ev["device_kind"] == "xpu", ev
    assert scores.get("weights-exceed-vram", 0) == 0, ev["causes"]


def test_spark_rapids_device_allocation_failed_both_forms():
    """The plugin's RMM event handler line, its older ("device store has S bytes") and newer ("Device store spilled S
    bytes") form: runtime rapids, the request and what RMM holds, exact bytes."""
    old = ("Executor task launch worker for task 7.0 in stage 2.0 (TID 31) 22/03/01 08:00:00:001 INFO DeviceMemoryEventHandler: "
           "Device allocation of 123456789 bytes failed, device store has 0 bytes. Total RMM allocated is 7000000000 bytes.\n")
    new = ("25/01/09 11:22:33 INFO DeviceMemoryEventHandler: Device allocation of 987654321 bytes failed. Device store spilled "
           "0 bytes. First attempt. Total RMM allocated is 31000000000 bytes.\n")
    for text, req, held in ((old, 123456789, 7000000000), (new, 987654321, 31000000000)):
        cause, scores, ev = top(text)
        assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("rapids", "cuda", "rmm.oom"), ev
        assert ev["numbers"] == {"requested": req, "allocated": held}, ev["numbers"]


def test_numpy_message_without_its_type_name_is_host_ram():
    """numpy's whole message under an app's own prefix (no "MemoryError:"): system RAM, the request read, device cpu."""
    cause, scores, ev = top("ERROR: step 2 failed\nERROR: Unable to allocate 2.25 GiB for an array with shape "
                            "(1, 750000, 201) and data type complex128\n")
    assert (ev["kind"], ev["device_kind"]) == ("python.memory_error", "cpu"), ev
    assert ev["numbers"] == {"requested": round(2.25 * GIB)}, ev["numbers"]
    assert cause == "host-ram", ev["causes"]


def test_unable_to_allocate_without_numpy_shape_is_not_numpy():
    """The words alone ("Unable to allocate 2 GiB for an array") without numpy's shape and dtype are not read as numpy's."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("note: Unable to allocate 2.00 GiB for an array buffer pool, retrying\n")
    assert not res["found"] or res["events"][-1]["kind"] != "python.memory_error", res


def test_old_torch_message_typed_without_spaces_reads_its_figures():
    """PyTorch <= 1.x's message as typed without the space after "memory." and in "671.44MiB", "by Pytorch" lower-case:
    every figure read."""
    text = ("RuntimeError:CUDA out of memory.Tried to allocate 512.00 MiB (GPU 0; 10.76 GiB total capacity; 8.12 GiB already "
            "allocated; 301.50MiB free;9.40 GiB reserved in total by Pytorch)\n")
    cause, scores, ev = top(text)
    n = ev["numbers"]
    assert (n["requested"], n["total"], n["allocated"], n["free"], n["reserved"]) == (
        512 * MIB, round(10.76 * GIB), round(8.12 * GIB), round(301.5 * MIB), round(9.4 * GIB)), n


MMGP = ("CUDA error: out of memory CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\n"
        "Switching to partial pinning since full requirements for pinned models is 5120.0 MB while estimated available "
        "reservable RAM is 4096.5 MB. You may increase the value of parameter 'perc_reserved_mem_max' to a value higher than "
        "0.30 to force full pinnning.\n"
        "Partial pinning of data of 'transformer' to reserved RAM\n"
        "Unable to pin more tensors for this model as the maximum reservable memory has been reached (3900.25).\n")


def test_mmgp_pinning_short_then_bare_cuda_error_is_host_ram():
    """mmgp's pinning lines beside a bare CUDA error: the three figures (MiB) and page-locked RAM (host-ram) with the row's
    own evidence first."""
    cause, scores, ev = top(MMGP)
    assert ev["numbers"] == {"required": 5120 * MIB, "available": round(4096.5 * MIB), "limit": round(3900.25 * MIB)}, ev["numbers"]
    assert cause == "host-ram" and scores["host-ram"] >= 0.5, ev["causes"]
    assert ev["causes"][0]["evidence"][0].startswith("mmgp"), ev["causes"][0]
