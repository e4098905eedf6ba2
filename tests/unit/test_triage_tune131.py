"""Triage after batches 131-135 (round 64): numpy's three-digit size with a bare point ("Unable to allocate 115. GiB"),
XLA's rematerialization target as the limit, the XLA:TPU compile overrun's need named "required" and read as TensorFlow's
run under TensorFlow's StatusGroup summary ("Status code: Resource exhausted [Nx]"), and TensorFlow's op kernel logging
"RESOURCE_EXHAUSTED: failed to allocate memory". Paths, shapes and figures made up (modelled on ageron/handson-ml3#27,
tensorflow/tpu#385, the OSC AlphaFold 3 known-issue page and MIC-DKFZ/nnUNet#2912); expected values by hand."""
from support.triage_event import last_event, top

GiB, MiB = 1 << 30, 1 << 20

# numpy's _size_to_string prints three significant digits with "#": 115 GiB reads "115. GiB"
NP_BARE_POINT = ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 115. GiB for an array with shape "
                 "(4, 2048, 2048, 920) and data type float64\n")
NP_BARE_POINT_STR = "Unable to allocate 412. MiB for an array with shape (2, 96, 768, 364) and data type int64\n"


def test_numpy_bare_point_size_is_read():
    """Before round 64 the size pattern refused "115." (a digit must follow the point): the request was lost."""
    cause, causes, ev = top(NP_BARE_POINT)
    assert ev["numbers"].get("requested") == 115 * GiB, ev["numbers"]
    assert (cause, ev["device_kind"]) == ("host-ram", "cpu"), causes


def test_numpy_bare_point_without_its_type_name():
    """The message printed without its type name (the NP_ALLOC_FULL form) reads the same size."""
    _, ev = last_event(NP_BARE_POINT_STR)
    assert ev["numbers"].get("requested") == 412 * MiB, ev["numbers"]


REMAT = ("2026-03-02 10:14:07.512201: W external/xla/xla/hlo/transforms/simplifiers/hlo_rematerialization.cc:3005] Can't "
         "reduce memory use below 30.50GiB (32749125632 bytes) by rematerialization; only reduced to 41.20GiB (44238164377 "
         "bytes), down from 41.75GiB (44828721152 bytes) originally\n")
REMAT_NEG = ("W external/xla/xla/service/hlo_rematerialization.cc:2941] Can't reduce memory use below -1.25GiB (-1342177280 "
             "bytes) by rematerialization; only reduced to 6.10GiB (6549825126 bytes), down from 6.40GiB (6871947673 bytes) "
             "originally\n")


def test_remat_target_is_the_limit():
    """The target the pass could not reach is read as the limit (before round 64 only the peak was read)."""
    cause, _, ev = top(REMAT)
    assert ev["numbers"] == {"required": round(41.20 * GiB), "limit": round(30.50 * GiB)}, ev["numbers"]
    assert cause == "activations"


def test_remat_negative_target_is_no_limit():
    """A negative target (the device already spoken for) is not a limit: only the peak is read."""
    _, ev = last_event(REMAT_NEG)
    assert ev["numbers"] == {"required": round(6.10 * GiB)}, ev["numbers"]


TPU_TF = ("Combined status information from 8 operations:\n\n"
          "Status code: Resource exhausted [8x]\n"
          "  Compilation failure: Ran out of memory in memory space hbm. Used 17.10G of 16.00G hbm. Exceeded hbm capacity by 1.10G.\n")
TPU_JAX = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in "
           "memory space hbm. Used 17.10G of 16.00G hbm. Exceeded hbm capacity by 1.10G.\n")


def test_tpu_compile_overrun_under_tensorflow_status_summary_is_tensorflow():
    """TensorFlow's StatusGroup summary line above the XLA:TPU compile failure makes it TensorFlow's run (before round 64:
    jax, the TPU recogniser's default); the program's need is "required" (was "program")."""
    cause, _, ev = top(TPU_TF)
    assert (ev["runtime"], ev["device_kind"], cause) == ("tensorflow", "tpu", "activations"), ev
    assert ev["numbers"] == {"required": round(17.10 * GiB), "total": 16 * GiB}, ev["numbers"]


def test_tpu_compile_overrun_from_jax_stays_jax():
    """The same overrun from JAX's PJRT (no StatusGroup summary) is still JAX's."""
    _, ev = last_event(TPU_JAX)
    assert ev["runtime"] == "jax", ev


TF_OP_KERNEL = ("2026-01-12 21:40:03.118842: W tensorflow/core/framework/op_kernel.cc:1745] RESOURCE_EXHAUSTED: failed to "
                "allocate memory\n")


def test_tensorflow_op_kernel_failed_to_allocate_memory_is_found():
    """TensorFlow's op kernel warning with no size: found (before round 64: no failure found), TensorFlow's, activations."""
    cause, _, ev = top(TF_OP_KERNEL)
    assert (ev["kind"], ev["runtime"], cause) == ("xla.oom", "tensorflow", "activations"), ev


def test_failed_to_allocate_memory_needs_the_status_code():
    """The words alone, without the RESOURCE_EXHAUSTED status, are not TensorFlow's out-of-memory status."""
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text("I tensorflow/core/common_runtime/direct_session.cc:10] the cache failed to allocate memory "
                                  "earlier, retrying\n")["found"]


# PyTorch's type, then its request, the rest of the message cut or retyped by the reporter (NVIDIA-NeMo/RL#2871's shape)
TORCH_TYPE_REQUEST = "torch.OutOfMemoryError: Tried to allocate 9.75 GiB. The card had only a few GiB left\n"


def test_torch_type_with_request_only_reads_the_request():
    """The request after PyTorch's exception type is read, as a cut message: activations (before round 64: no figure, other)."""
    cause, causes, ev = top(TORCH_TYPE_REQUEST)
    assert (ev["kind"], ev["runtime"]) == ("torch.cuda", "pytorch"), ev
    assert ev["numbers"] == {"requested": round(9.75 * GiB)}, ev["numbers"]
    assert cause == "activations", causes


def test_request_without_torch_type_is_not_read_as_torch():
    """"Tried to allocate" after another exception type is not PyTorch's cut message."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("MyLibError: Tried to allocate 9.75 GiB. The card had only a few GiB left\n")
    assert not res["found"] or res["events"][-1]["kind"] != "torch.cuda", res


# nnU-Net v2's predictor catches the GPU failure, says so, and goes on with its arrays in system RAM; numpy then fails there
NNUNET = ("Prediction on device was unsuccessful, probably due to a lack of memory. Moving results arrays to CPU\n"
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB ...\n"
          "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.44 GiB for an array with shape (3, 160, 560, 575) "
          "and data type int64\n")


def test_host_memory_error_after_nnunet_cpu_fallback_is_host_ram():
    """After the fallback line, numpy's MemoryError is the CPU run's own failure: host-ram, its 1.44 GiB (before round 64 it
    joined the cut GPU message's event: activations on a 64 MiB request)."""
    cause, causes, ev = top(NNUNET)
    assert (ev["kind"], ev["device_kind"]) == ("python.memory_error", "cpu"), ev
    assert ev["numbers"] == {"requested": round(1.44 * GiB)}, ev["numbers"]
    assert cause == "host-ram", causes


def test_without_the_fallback_line_the_gpu_message_leads():
    """Without the program saying it moved to the CPU, the two lines stay one GPU failure, as before."""
    _, ev = last_event(NNUNET.split("\n", 1)[1])
    assert ev["kind"] == "torch.cuda", ev


TFJS = ("webgl_util.ts:214 Uncaught (in promise) Error: Requested texture size [8192x5120] greater than WebGL maximum on this "
        "browser / GPU [4096x4096].\n    at validateTextureSize (webgl_util.ts:214)\n")


def test_tfjs_webgl_texture_cap_is_other():
    """TensorFlow.js's texture-size cap: found (before round 64: no failure), runtime tfjs, other (a per-texture cap, R5),
    its guide, and the sides named in the reason."""
    cause, causes, ev = top(TFJS)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], cause) == ("tfjs.texture_size", "tfjs", "webgl", "other"), ev
    assert ev["guide"]["id"] == "tfjs-texture-size"
    assert "8192x5120" in ev["causes"][0]["evidence"][0] and "4096x4096" in ev["causes"][0]["evidence"][0]
