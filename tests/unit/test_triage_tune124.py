"""Triage after batches 124-130 (round 63). New runtimes read from the log's own wording: ggml's HIP VMM pool ("HipVMM
Failure: ..."), the JVM's heap (java.lang.OutOfMemoryError, with SKaiNET named by its frames), MediaTek's APUSys command
memory under TFLite's Neuron delegate, a DataLoader worker's bus error (shared memory); YOLOX's -o pre-allocation; and
mlx_lm.server's prompt-cache size before a Metal OOM. Paths, names, models and figures made up; expected values by hand."""
import pytest

from support.triage_event import top

# --- ggml's HIP VMM pool --------------------------------------------------------------------------

HIP_VMM = ("ggml_cuda_init: found 1 ROCm devices:\n"
           "  Device 0: AMD Radeon RX 7600, compute capability 11.0, VMM: yes\n"
           "llm_load_tensors: offloaded 33/33 layers to GPU\n"
           "/srv/build/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:371: HipVMM Failure: out of memory\n"
           "Aborted (core dumped)\n")


def test_hip_vmm_failure_is_the_vmm_path_not_a_shortage():
    """Before round 63 nothing was recognised in this log (found False); now the VMM pool's abort is its own event, on an
    AMD GPU, read as other (rebuild with GGML_CUDA_NO_VMM)."""
    cause, causes, ev = top(HIP_VMM)
    assert (ev["kind"], ev["form"], ev["runtime"], ev["device_kind"]) == ("ggml.hip_vmm", "oom", "llama.cpp", "rocm"), ev
    assert cause == "other", causes
    assert "GGML_CUDA_NO_VMM" in " ".join(ev["causes"][0]["evidence"])
    assert ev["guide"]["id"] == "ggml-hip-vmm"


def test_hip_vmm_failure_alone_names_the_amd_device():
    """The abort line alone (a fork's report quotes only it): HIP names the device kind."""
    cause, _, ev = top("ggml/src/ggml-cuda/ggml-cuda.cu:512: HipVMM Failure: out of memory\n")
    assert (cause, ev["device_kind"], ev["runtime"]) == ("other", "rocm", "llama.cpp")


def test_hip_vmm_other_hip_error_is_a_fault_form():
    """Another HIP error after the prefix is read as the same event (form fault), and the evidence quotes it."""
    _, _, ev = top("ggml-cuda.cu:371: HipVMM Failure: invalid argument\n")
    assert ev["kind"] == "ggml.hip_vmm" and ev["form"] == "fault", ev
    assert '"HipVMM Failure: invalid argument"' in " ".join(ev["causes"][0]["evidence"])


# --- the JVM's heap -------------------------------------------------------------------------------

JVM_FRAMES = ("\tat sk.ainet.lang.tensor.data.DenseTensorDataFactory.createFloatTensorData(DenseTensorDataFactory.kt:97)\n"
              "\tat sk.ainet.lang.nn.dsl.NetworkBuilderKt.createConv2d(NetworkBuilder.kt:410)\n"
              "\tat sk.ainet.lang.nn.dsl.StageImpl.conv2d(NetworkBuilder.kt:1102)\n")


def test_jvm_heap_space_is_host_ram_named_by_the_library_frames():
    """Before round 63: PyTorch's OutOfMemoryError type read it as the GPU's (other, pytorch, cuda)."""
    cause, causes, ev = top("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n" + JVM_FRAMES)
    assert (ev["kind"], ev["form"], ev["device_kind"], ev["runtime"]) == ("jvm.heap", "heap", "cpu", "skainet"), ev
    assert cause == "host-ram" and causes["host-ram"] > 0.8, causes
    assert ev["guide"]["id"] == "jvm-heap"


def test_jvm_gc_overhead_without_a_library_frame_is_the_jvm():
    cause, _, ev = top("java.lang.OutOfMemoryError: GC overhead limit exceeded\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n")
    assert (cause, ev["kind"], ev["form"], ev["runtime"], ev["device_kind"]) == ("host-ram", "jvm.heap", "gc_overhead", "java", "cpu")


def test_other_java_out_of_memory_texts_are_not_the_heap():
    """Native memory (the RAPIDS plugin's form) is not the heap: not read as jvm.heap."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc\n")
    assert all(e["kind"] != "jvm.heap" for e in res["events"]), res["events"]


# --- MediaTek APUSys under TFLite's Neuron delegate -------------------------------------------------

APUSYS = ("INFO: Created TensorFlow Lite delegate for Neuron.\n"
          "[apusys][error]memAlloc: alloc mem(96/0/0/0x3) fail(Cannot allocate memory)\n"
          "[apusys][error]construct: Cmd v2(0xffff9a010200): alloc execInfo fail\n"
          "ERROR: APUSysEngine::BuildCmd() failed\n"
          "ERROR: Neuron returned error NEURON_BAD_STATE at line 1402 while creating Neuron execution.\n")


def test_apusys_alloc_failure_is_the_npu_platform():
    """Before round 63 nothing was recognised (found False)."""
    cause, causes, ev = top(APUSYS)
    assert (ev["kind"], ev["device_kind"], ev["runtime"]) == ("npu.apusys", "npu", "tflite"), ev
    assert cause == "other" and causes["other"] > 0.8, causes      # (the fallback alone gives other 0.57)
    assert "APUSys" in " ".join(ev["causes"][0]["evidence"])
    assert ev["guide"]["id"] == "npu-apusys"


def test_apusys_line_alone_is_still_read():
    _, _, ev = top("[apusys][error]memAlloc: alloc mem(40/0/0/0x1) fail(Cannot allocate memory)\n")
    assert ev["kind"] == "npu.apusys"


# --- a DataLoader worker's bus error -----------------------------------------------------------------

BUS = ('Traceback (most recent call last):\n'
       '  File "fit.py", line 88, in <module>\n'
       '    for imgs, labels in loader:\n'
       '  File "/usr/lib/python3.9/site-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler\n'
       '    _error_if_any_worker_fails()\n'
       "RuntimeError: DataLoader worker (pid 40211) is killed by signal: Bus error. It is possible that dataloader's "
       "workers are out of shared memory. Please try to raise your shared memory limit.\n")


def test_dataloader_bus_error_is_shared_memory_on_the_host():
    """Before round 63 nothing was recognised (found False)."""
    cause, causes, ev = top(BUS)
    assert (ev["kind"], ev["device_kind"], ev["runtime"]) == ("os.shm", "cpu", "pytorch"), ev
    assert cause == "host-ram", causes
    assert ev["guide"]["id"] == "dataloader-shm"


def test_worker_side_bus_error_message_is_read_too():
    cause, _, ev = top("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n")
    assert (cause, ev["kind"]) == ("host-ram", "os.shm")


# --- YOLOX's -o pre-allocation -----------------------------------------------------------------------

YOLOX_OOM = ("RuntimeError: CUDA out of memory. Tried to allocate 6.70 GiB (GPU 0; 8.00 GiB total capacity; 52.00 MiB already "
             "allocated; 6.61 GiB free; 80.00 MiB reserved in total by PyTorch)\n")


def test_yolox_occupy_flag_block_is_other():
    """Before round 63: activations (a request of 84% of the card in a training run)."""
    cmd = "python tools/train.py -f exps/default/yolox_m.py -d 1 -b 4 -o --fp16 -c /data/yolox_m.pth\n"
    cause, causes, ev = top(cmd + YOLOX_OOM)
    assert cause == "other", causes
    assert "-o (--occupy)" in " ".join(ev["causes"][0]["evidence"])


@pytest.mark.parametrize("cmd", [
    "python tools/train.py -f exps/default/yolox_m.py -d 1 -b 4 --fp16 -c /data/yolox_m.pth\n",   # no -o
    "python train.py --data coco.yaml -o runs/exp1 --batch 4\n",                                    # -o, not YOLOX
])
def test_without_yolox_occupy_the_request_stays_activations(cmd):
    cause, causes, _ = top(cmd + YOLOX_OOM)
    assert cause == "activations", causes


def test_yolox_occupy_with_the_model_allocated_is_not_the_block():
    """-o's block comes before the model: with most of the card already allocated the request is something else."""
    cmd = "python -m yolox.tools.train -n yolox-s -d 1 -b 8 --occupy\n"
    text = cmd + ("RuntimeError: CUDA out of memory. Tried to allocate 5.00 GiB (GPU 0; 8.00 GiB total capacity; 2.50 GiB already "
                  "allocated; 4.90 GiB free; 2.60 GiB reserved in total by PyTorch)\n")
    _, causes, _ = top(text)
    assert causes.get("other", 0) < 0.3, causes


# --- mlx_lm.server's prompt cache -------------------------------------------------------------------

METAL_ABORT = ("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution "
               "failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n")


def test_mlx_server_prompt_cache_before_metal_oom_is_kv_cache():
    """Before round 63: activations 0.67 (the Metal command buffer alone)."""
    text = "11:02:10 INFO - Prompt Cache: 6 sequences, 9.80 GB\n11:02:10 INFO - - KVCache: 6 sequences, 9.80 GB\n" + METAL_ABORT
    cause, causes, ev = top(text)
    assert cause == "kv-cache", causes
    assert "9.80 GB" in " ".join(ev["causes"][0]["evidence"])


def test_a_small_prompt_cache_does_not_decide():
    cause, causes, _ = top("11:02:10 INFO - Prompt Cache: 1 sequences, 0.20 GB\n" + METAL_ABORT)
    assert cause == "activations" and "kv-cache" not in causes, causes
