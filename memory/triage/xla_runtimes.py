"""Out-of-memory messages of the XLA family: JAX, TensorFlow and PyTorch/XLA through XLA's allocator, the TPU runtime,
TensorFlow's BFC allocator and the stream executor both build. Split from other_runtimes.py (bodies unchanged), which
re-exports every name here; parse.py lists the recognisers among its own."""
import re

from ..units import parse_size

# XLA's allocator (JAX, TensorFlow): "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes", its stream-executor
# allocator's "Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0" (kingoflolz/mesh-transformer-jax#66),
# TensorFlow's "OOM when allocating tensor with shape[...]"
# (newer jaxlib, its JaxRuntimeError, prints the size as tsl's HumanReadableNumBytes does: "allocate 10.08GiB.",
# el-oso/PureAdsorb.jl bench notes)
XLA = re.compile(r"(?:RESOURCE_EXHAUSTED|Resource exhausted|ResourceExhaustedError)\b[^\n]{0,40}?Out of memory (?:while trying to allocate|allocating) "
                 r"(?:(\d{1,20}) bytes|(\d{1,12}(?:\.\d{1,6})? ?[KMGTP]i?B)\b)"
                  r"|(?:RESOURCE_EXHAUSTED|ResourceExhaustedError)[^\n]{0,80}?OOM when allocating tensor|\bOOM when allocating tensor with shape"
                  r"|(?:RESOURCE_EXHAUSTED|Resource exhausted)\b[^\n]{0,40}?Failed to allocate request for [\d.]+[KMGT]?i?B \((\d{1,20})B\) on device ordinal"
                  # TensorFlow's op kernel logging a failed op's status, no size ("W tensorflow/core/framework/op_kernel.cc:1733]
                  # RESOURCE_EXHAUSTED: failed to allocate memory", ageron/handson-ml3#27; round 64)
                  r"|(?:RESOURCE_EXHAUSTED|Resource exhausted|ResourceExhaustedError)\b[^\n]{0,40}?failed to allocate memory\b"
                  # (round 91) TensorFlow's eager op error, its status's message with the op's name after it ("failed to allocate
                  # memory [Op:Cast]", tensorflow/python/eager/execute.py quick_execute: message + " [Op:" + op_name + "]"),
                  # on its own line under "ResourceExhaustedError:" or "{{function_node ...}}" as the exception wraps it
                  r"|\bfailed to allocate memory \[Op:\w{1,80}\]"
                  # (round 79) the status's message without its code: XLA's allocator adapter builds it as "Out of memory while
                  # trying to allocate <n> bytes." and a host that raises the message alone prints just that (Elixir's EXLA:
                  # "** (RuntimeError) Out of memory while trying to allocate 144480 bytes."; a script relaying its text).
                  # Exact bytes and the full stop only: PyTorch's allocator warning ("... with OOM on device 0 while trying
                  # to allocate N bytes") and TensorFlow's BFC ("ran out of memory trying to allocate 1.00GiB") differ
                  # (round 82) and the size as newer builds print it (tsl's HumanReadableNumBytes, as in the coded form above:
                  # "Out of memory while trying to allocate 16.00GiB.", a ZML program relaying PJRT's status); two decimals,
                  # a binary unit and the full stop, as HumanReadableNumBytes writes them
                  r"|\bOut of memory while trying to allocate (?:(\d{1,20}) bytes|(\d{1,12}\.\d\d[KMGTPE]iB))\."
                  # (round 87) jaxlib's exception with its status code and nothing after it ("XlaRuntimeError: RESOURCE_EXHAUSTED",
                  # newer jaxlib's "JaxRuntimeError: RESOURCE_EXHAUSTED"), as a write-up quotes it inline: the status PJRT
                  # raises when its allocator refuses a buffer, its message (and size) cut. The line's end only: a status
                  # followed by its message is read by the forms above, or is another refusal (TPU's memory space, IREE's)
                  r"|\b(?:Xla|Jax)RuntimeError: RESOURCE_EXHAUSTED[.:]?\s*$"
                  # (round 115) a write-up's quote that keeps the status code and the exact bytes and elides the words between
                  # ("RESOURCE_EXHAUSTED ... 53616328704 bytes", "RESOURCE_EXHAUSTED … N bytes"), group 6; the stream executor's
                  # refusal cut after its size ("RESOURCE_EXHAUSTED: Failed to allocate request for 42.19GiB"), group 7; and the
                  # same refusal quoted without its code, its bytes elided ("Failed to allocate request for 16.50GiB ... on device
                  # ordinal 0"), group 8: each the buffer XLA's allocator refused. (rev6 B4) Group 6 only where the bytes end
                  # the line: gRPC's RESOURCE_EXHAUSTED ("... N bytes over the max message size") is no allocator's. (rev7 D5)
                  # A quoted status (XlaRuntimeError('RESOURCE_EXHAUSTED: ... N bytes'), "...") may close its quote after them
                  r"|\b(?:RESOURCE_EXHAUSTED|ResourceExhaustedError)[.:]?[ \t]{0,4}(?:\.{3}|\u2026)[ \t]{0,4}(\d{1,20}) bytes\.?['\x22)]{0,3}\s{0,8}$"
                  r"|(?:RESOURCE_EXHAUSTED|Resource exhausted)\b[^\n]{0,40}?Failed to allocate request for (\d{1,12}(?:\.\d{1,6})? ?[KMGT]i?B)"
                  r"|\bFailed to allocate request for (\d{1,12}(?:\.\d{1,6})? ?[KMGT]i?B)[ \t]{0,4}(?:\.{3}|\u2026)[ \t]{0,4}on device ordinal \d")
# XLA on TPU (JAX, TensorFlow, PyTorch/XLA) prints sizes as tsl's HumanReadableNumBytes does ("15.65G", "530.00M": binary
# units): a device buffer it could not allocate or reserve ("Attempting to allocate 15.65G. That was not possible. There are
# 11.08G free."), and a program whose compile-time plan exceeds the chip ("Ran out of memory in memory space hbm. Used 21.95G
# of 15.48G hbm.") (threads: google-deepmind/gemma#85, pytorch/xla#1735, LargeWorldModel/LWM#60, sokrypton/ColabFold#62)
# (round 83) the second quoted cut after its memory space ("Ran out of memory in memory space hbm ...", the figures left out)
# is the same refusal, read without its figures
_XSZ = r"(\d+(?:\.\d+)?[KMGT]?B?)"
XLA_TPU = re.compile(r"Attempting to (allocate|reserve) " + _XSZ + r"(?: at the bottom of memory)?\. That was not possible\. There are "
                     + _XSZ + r" free|Ran out of memory in memory space (\w+)(?:\. Used " + _XSZ + r" of " + _XSZ + r")?")
# (round 92) the TPU compiler's refusal of one buffer in a memory space, in exact bytes: "RESOURCE_EXHAUSTED: Allocation
# (size=38654705664) would exceed memory (size=34359738368) :: #allocation598 [shape = 'bf16[12,524288,3072]{...}', space=hbm,
# size = 0xffffffffffffffff, tag = 'output of custom-call.400@{}'] :: <no-hlo-instruction>" (libtpu's "Allocation (size=%lld)
# would exceed memory (size=%lld) :: %s :: %s"; raised by jaxlib as XlaRuntimeError/JaxRuntimeError, quoted as ValueError too):
# the buffer and the memory space's size. In hbm (the chip's memory; no space named reads as hbm) the request and the total;
# in vmem, smem or cmem a kernel's scratchpad, read as the "in memory space vmem" form is (scratch_required, scratch_limit)
XLA_TPU_EXCEED = re.compile(r"\bAllocation \(size=(\d{1,20})\) would exceed memory \(size=(\d{1,20})\)"
                            r"(?:[^\n]{0,300}?\bspace=(\w{1,10}))?")
# (round 93) TensorFlow's rendezvous refusing the tensor a copy between two devices of one worker lands in (tensorflow/core/
# common_runtime/rendezvous_mgr.cc SameWorkerRecvDone: errors::ResourceExhausted("SameWorkerRecvDone unable to allocate output
# tensor. Key: ", key), the key "<src device>;<incarnation>;<dst device>;<edge>;<frame:iter>"): the destination device's allocator
# refused the copy, an op-level refusal as "OOM when allocating" is, no size; the device read from the key's destination
TF_RECV_ALLOC = re.compile(r"\bSameWorkerRecvDone unable to allocate output tensor\b"
                           r"(?:\. Key: [^;\s]{1,200};[0-9a-f]{1,20};[^;\s]{0,200}?/device:([A-Z_]{1,10}):\d{1,3};)?")
# TensorFlow's (and older JAX's) BFC allocator (tsl/framework/bfc_allocator.cc): "Allocator (GPU_0_bfc) ran out of memory
# trying to allocate 1.00GiB (rounded to 1073741824)requested by op ..."; the same words with "The caller indicates that this
# is not a failure" are a performance note, not a failure
# (TensorFlow 1.x, bfc_allocator.cc, names no allocator: "Ran out of memory trying to allocate 392.00MiB. See logs for memory
# state.", endernewton/tf-faster-rcnn#7)
# (Intel's TensorFlow extension prints it without the allocator's name and in "Bytes": "Allocator ran out of memory trying to
# allocate 117964800 Bytes (rounded to 117964800 Bytes)", from itex/core/devices/bfc_allocator.cc)
# (round 115) a quote that keeps the allocator's name and drops "Allocator (...)" around it ("GPU_3_bfc ran out of memory
# trying to allocate 5.66 GiB"): the same warning, its name in group "bare" (rev6 S3)
BFC = re.compile(r"(?:Allocator(?: \((\w+)\))? ran|\bRan|\b(?P<bare>[A-Za-z]{1,12}_\d{1,3}_bfc) ran) out of memory trying to allocate (?P<size>[\d.]+\s?(?:[Bb]ytes|[KMGT]?i?B))"
                 r"(?: \(rounded to (\d{1,20})(?: [Bb]ytes)?\))?")
# TensorFlow's and XLA's stream executor (stream_executor/cuda/cuda_driver.cc, gpu_host_allocator.h): a device allocation the driver
# refused ("failed to allocate 1.51G (1617277696 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY"), and page-locked host memory for
# transfers ("failed to alloc N bytes on host", "could not allocate pinned host memory of size: N"): system RAM, not the GPU
# (tensorflow/tensorflow#12237, tensorflow/tensorflow#14231; JAX's build of it: gaycodegal/craiyon-low-vram-easy#1; ROCm's, where
# HIP's old code 1002 is hipErrorMemoryAllocation: ROCm/tensorflow-upstream#82)
# (older builds print the size alone: "failed to allocate 8.00G from device: hipError_t(1002)", group 4)
# ((round 97) ROCm's copy, xla/stream_executor/rocm/rocm_driver.cc, names the size in tsl's "154.06GiB" and the status as
# ToString prints hipErrorOutOfMemory: "failed to allocate 154.06GiB (165425291480 bytes) from device: HIP_ERROR_OutOfMemory")
STREAM_EXECUTOR = re.compile(r"failed to allocate (?:[\d.]+[KMGT]?i?B? \((\d{1,20}) bytes\)|(\d{1,12}(?:\.\d{1,12})?[KMGT]?)) from device: "
                             r"(?:CUDA_ERROR_OUT_OF_MEMORY|hipError\w*OutOfMemory|hipError_t\(1002\)|HIP_ERROR_OutOfMemory)"
                             r"|failed to alloc (\d{1,20}) bytes on host: (?:CUDA_ERROR_OUT_OF_MEMORY|HIP_ERROR_OutOfMemory)"
                             r"|could not allocate pinned host memory of size: (\d{1,20})")


def _xsize(text):
    return parse_size(text if text[-1] in "B" else text + "iB" if text[-1] in "KMGT" else text)


def xla_tpu(line):
    if "That was not possible" not in line and "in memory space" not in line:
        return None
    m = XLA_TPU.search(line)
    if not m:
        return None
    if m.group(1):
        nums = {"requested": _xsize(m.group(2)), "free": _xsize(m.group(3))}
        form = m.group(1)
    else:
        # the compiled program's whole plan against the chip's HBM, not one buffer: what the program needs, "required" as
        # the rematerialization warning's peak (round 64; was "program"); or a kernel's scratchpad (vmem, smem: a
        # Pallas/Mosaic tile size), megabytes per core, not the device's memory
        form = "compile" if m.group(4).lower() == "hbm" else "scratch"
        keys = ("required", "total") if form == "compile" else ("scratch_required", "scratch_limit")
        nums = {keys[0]: _xsize(m.group(5)), keys[1]: _xsize(m.group(6))} if m.group(5) else {}
    # both forms are the TPU runtime's (XLA on a GPU says "Out of memory while trying to allocate N bytes")
    return {"kind": "xla.oom", "device_kind": "tpu", "numbers": nums, "runtime": "jax", "complete": True, "form": form,
            "memory_space": (m.group(4) or "hbm").lower()}


def xla_tpu_exceed(line):
    if "would exceed memory (size=" not in line:
        return None
    m = XLA_TPU_EXCEED.search(line)
    if not m:
        return None
    space = (m.group(3) or "hbm").lower()
    keys = ("requested", "total") if space == "hbm" else ("scratch_required", "scratch_limit")
    # a buffer placed at compile time, as the "in memory space" form's plan (form compile) is not: form exceed, or scratch as that
    # form's kernel scratchpad is read
    return {"kind": "xla.oom", "device_kind": "tpu", "numbers": {keys[0]: int(m.group(1)), keys[1]: int(m.group(2))},
            "runtime": "jax", "complete": True, "form": "exceed" if space == "hbm" else "scratch", "memory_space": space}


# (round 92) the compile failure's figures quoted on the line under it ("Ran out of memory in memory space hbm." then "Used 120.49G
# of 95.74G hbm. Exceeded hbm capacity by 24.75G.", the sentences of one message as a record breaks them): the same two figures
XLA_TPU_USED = re.compile(r"^\s{0,8}Used " + _XSZ + r" of " + _XSZ + r" (\w{1,10})\b")


def xla_tpu_used(ev, text) -> bool:
    """The figures of a compile failure read without them (XLA_TPU's cut form) from the line under it, in its memory space."""
    if ev.get("form") not in ("compile", "scratch") or ev["numbers"] or "Used " not in text:
        return False
    m = XLA_TPU_USED.match(text)
    if not m or m.group(3).lower() != ev.get("memory_space"):
        return False
    keys = ("required", "total") if ev["form"] == "compile" else ("scratch_required", "scratch_limit")
    ev["numbers"].update({keys[0]: _xsize(m.group(1)), keys[1]: _xsize(m.group(2))})
    return True


# (round 118) the TPU's refusals without "in memory space": the compile failure quoted from its figures, named by the exception
# tpu-inference raises ("CompileTimeHbmOom: Used 651.83G of 94.75G hbm") or followed by its next sentence ("Used 95.38G of
# 94.74G hbm. Exceeded hbm capacity by 656.93M."), read as XLA_TPU's compile form; and the runtime's own refusals on the
# chip, "RESOURCE_EXHAUSTED: Ran out of memory on HBM, ..." and "RESOURCE_EXHAUSTED: E0100: RuntimeBufferAllocationFailure"
# (a buffer the TPU runtime could not place in HBM), no figures. Bounded, linear
XLA_TPU_HBM = re.compile(r"\bCompileTimeHbmOom:[ \t]{0,4}Used " + _XSZ + r" of " + _XSZ + r" hbm\b"
                         r"|\bUsed " + _XSZ + r" of " + _XSZ + r" hbm\.?[ \t]{0,4}Exceeded hbm capacity by\b"
                         r"|(RESOURCE_EXHAUSTED\b[^\n]{0,40}?(?:Ran out of memory on HBM|RuntimeBufferAllocationFailure))")


def xla_tpu_hbm(line):
    if "hbm" not in line and "HBM" not in line and "RuntimeBufferAllocationFailure" not in line:
        return None
    m = XLA_TPU_HBM.search(line)
    if not m:
        return None
    if m.group(5):
        return {"kind": "xla.oom", "device_kind": "tpu", "numbers": {}, "runtime": "jax", "complete": True, "form": "runtime",
                "memory_space": "hbm"}
    used, cap = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return {"kind": "xla.oom", "device_kind": "tpu", "numbers": {"required": _xsize(used), "total": _xsize(cap)},
            "runtime": "jax", "complete": True, "form": "compile", "memory_space": "hbm"}


xla_tpu_hbm.needed = ("hbm", "HBM", "RuntimeBufferAllocationFailure")


# (round 118) XLA's FFT thunk on a GPU (xla/stream_executor/cuda/cuda_fft.cc): cuFFT could not create the batched plan with
# the scratch allocator, which allocates the plan's workspace on the device at the first call, outside the program's buffer plan
# ("Failed to create cuFFT batched plan with scratch allocator"; hipFFT's the same on ROCm): one pass's working memory, no figures
XLA_FFT_PLAN = re.compile(r"\bFailed to create (cu|hip)FFT batched plan with scratch allocator\b")


def xla_fft_plan(line):
    m = XLA_FFT_PLAN.search(line) if "FFT batched plan" in line else None
    if not m:
        return None
    # (rev9 D5) TensorFlow's stream executor prints the same line (its FFT op): JAX's where the line names it, else the log's
    # words decide (env.guess_runtime, as for xla_constant)
    jax = any(k in line for k in ("XlaRuntimeError", "JaxRuntimeError", "jaxlib", "pjrt_"))
    return {"kind": "xla.oom", "device_kind": "cuda" if m.group(1) == "cu" else "rocm", "numbers": {}, "runtime": "jax" if jax else None,
            "complete": True, "form": "fft_scratch"}


xla_fft_plan.needed = ("FFT batched plan",)


def xla(line):
    if not any(k in line for k in ("RESOURCE_EXHAUSTED", "Resource exhausted", "ResourceExhaustedError", "OOM when allocating",
                                   "Out of memory while trying to allocate", "memory [Op:", "Failed to allocate request for")):
        return None
    m = XLA.search(line)
    if not m:
        return None
    # TensorFlow names the device: DirectML's plugin (device:DML:0), the CPU, or a GPU
    dev = "directml" if "device:DML" in line else "cpu" if "device:CPU" in line else "xpu" if "device:XPU" in line else None
    human = m.group(2) or m.group(5) or m.group(7) or m.group(8)
    req = m.group(1) or m.group(3) or m.group(4) or m.group(6) or (parse_size(human) if human else None)
    # (round 91) "[Op:Name]" is TensorFlow's eager executor's, not JAX's
    return {"kind": "xla.oom", "device_kind": dev, "numbers": {"requested": int(req)} if req else {},
            "runtime": "tensorflow" if "memory [Op:" in line else "jax", "complete": True}


def tf_recv_alloc(line):
    """(round 93) TensorFlow's rendezvous could not allocate a copy's output tensor on its destination device: TensorFlow's op-level
    refusal (xla.oom, form recv), no size; the destination's device as xla() names TensorFlow's (a GPU left to the log)."""
    m = TF_RECV_ALLOC.search(line) if "SameWorkerRecvDone" in line else None
    if not m:
        return None
    dst = m.group(1) or ""
    dev = {"CPU": "cpu", "DML": "directml", "XPU": "xpu"}.get(dst)
    return {"kind": "xla.oom", "device_kind": dev, "numbers": {}, "runtime": "tensorflow", "complete": True, "form": "recv"}


def bfc(line):
    if ("ran out of memory trying" not in line and "Ran out of memory trying" not in line) or "not a failure" in line:
        return None
    m = BFC.search(line)
    if not m:
        return None
    # the request is the figure it prints first (tsl's HumanReadableNumBytes(num_bytes)); "rounded to" is the size of the
    # bin it rounded that up to, not what was asked (google-deepmind/alphafold#355: 34.71GiB, rounded to 37274034432)
    req = parse_size(m.group("size"))
    name = (m.group(1) or m.group("bare") or "").upper()
    # gpu_host_bfc / cuda_host_bfc: pinned host memory for transfers, system RAM
    # TensorFlow-DirectML's DmlAllocator; Intel's extension (itex/) allocates on its XPU
    dev = "cpu" if name.startswith("CPU") or "HOST" in name else "cuda" if name.startswith(("GPU", "CUDA")) \
        else "directml" if name.startswith("DML") else "xpu" if "itex/" in line else None
    return {"kind": "xla.oom", "device_kind": dev, "numbers": {"requested": req}, "runtime": "tensorflow", "complete": True, "form": "bfc"}


def stream_executor(line):
    if "from device: " not in line and "bytes on host" not in line and "pinned host memory of size" not in line:
        return None
    m = STREAM_EXECUTOR.search(line)
    if not m:
        return None
    # JAX (jaxlib) builds the stream executor as an external dependency: its paths say so ("external/org_tensorflow/",
    # since 2023 "external/xla/xla/stream_executor/"); TensorFlow >= 2.15 builds its own copy of XLA as
    # "external/local_xla/xla/stream_executor/", which is TensorFlow's
    runtime = "tensorflow" if "external/local_xla/" in line else \
        "jax" if any(k in line for k in ("external/org_tensorflow", "external/xla", "xla/stream_executor")) else "tensorflow"
    if m.group(1) or m.group(2):
        dev = "rocm" if "hipError" in line or "rocm_driver" in line or "HIP_ERROR_" in line else "cuda"
        req = int(m.group(1)) if m.group(1) else parse_size(m.group(2))      # "8.00G": tsl's binary units
        return {"kind": "cuda.driver", "device_kind": dev, "numbers": {"requested": req}, "runtime": runtime,
                "complete": True, "form": "stream_executor"}
    return {"kind": "cuda.driver", "device_kind": "cpu", "numbers": {"requested": int(m.group(3) or m.group(4))}, "runtime": runtime,
            "complete": True, "form": "stream_executor_host"}


# XLA's rematerialization pass (xla/service/hlo_rematerialization.cc) warns when it cannot bring a compiled program under the
# device's memory limit: "Can't reduce memory use below <target> (<n> bytes) by rematerialization; only reduced to <size> (<n>
# bytes), down from <size> (<n> bytes) originally". The size it reached is what the program needs at its peak (its buffers
# live together); the target is the limit less what is already held, negative when the device is spoken for (round 58;
# google-deepmind/mujoco#1431: a Brax SAC replay buffer sized from num_timesteps)
# (round 85) quoted with its byte counts and "by rematerialization" left out ("hlo_rematerialization: Can't reduce memory use
# below 171.87GiB; only reduced to 183.17GiB"): the same two printed sizes, read the same
# (round 115) the sizes as a write-up spaces them ("below 14.12 GiB by rematerialization; only reduced to 22.66 GiB"), the exact
# bytes left out before "by rematerialization"
XLA_REMAT = re.compile(r"Can't reduce memory use below (-?[\d.]{1,20} ?[KMGTP]?i?B)(?: \(-?\d{1,20} bytes\))?(?: by rematerialization)?; "
                       r"only reduced to ([\d.]{1,20} ?[KMGTP]?i?B)(?: \((\d{1,20}) bytes\))?")


def xla_remat(line):
    if "reduce memory use below" not in line:
        return None
    m = XLA_REMAT.search(line)
    if not m:
        return None
    # the printed size, as the corpus reads every tsl figure (HumanReadableNumBytes); the same build paths as the stream executor
    runtime = "tensorflow" if "external/local_xla/" in line else \
        "jax" if any(k in line for k in ("external/org_tensorflow", "external/xla")) else "tensorflow"
    # the target it could not reach, the device's limit less what is already held, is the limit the program had to fit
    # (round 64: AlphaFold 3's 84.23GiB); a negative target (the device already spoken for) is no limit and is left out
    nums = {"required": parse_size(m.group(2))}
    if not m.group(1).startswith("-"):
        nums["limit"] = parse_size(m.group(1))
    return {"kind": "xla.remat", "device_kind": None, "numbers": nums, "runtime": runtime,
            "complete": True, "form": "remat"}


xla_remat.needed = ("reduce memory use below",)


# (round 110) XLA's GPU executable could not place a compiled program's constant on the device (its status: "INTERNAL: Failed to
# allocate 402653184 bytes for new constant"), raised by jaxlib as XlaRuntimeError/JaxRuntimeError and logged by PJRT's client
# ("Execution of replica 0 failed: INTERNAL: ..."): a device allocation refused, its size exact
XLA_CONSTANT = re.compile(r"\bINTERNAL: Failed to allocate (\d{1,20}) bytes for new constant\b")


def xla_constant(line):
    m = XLA_CONSTANT.search(line) if "for new constant" in line else None
    if not m:
        return None
    jax = any(k in line for k in ("XlaRuntimeError", "JaxRuntimeError", "jaxlib", "pjrt_"))
    return {"kind": "cuda.driver", "device_kind": None, "numbers": {"requested": int(m.group(1))}, "runtime": "jax" if jax else None,
            "complete": True, "form": "xla_constant"}


xla_constant.needed = ("for new constant",)
