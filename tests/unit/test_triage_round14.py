"""Triage round 14: general readings of what a log shows, written from the runtimes' own strings (the parents that report
a SIGKILL, ComfyUI's node types, vLLM's allocators, PyTorch's autograd), each with a control that keeps its old reading."""
import pytest

from gpu_garden.memory.triage import engine as triage
from support.triage_event import top as _top


# --- a process ended by SIGKILL, in its parent's words: the kernel's OOM killer on host RAM ----------------------------

@pytest.mark.parametrize("log", [
    # tqdm leaves the cursor on its bar, so the shell's "Killed" lands at the end of it
    "Loading checkpoint shards:  50%|#####     | 1/2 [00:41<00:41, 41.20s/it]Killed\n",
    # CPython's CalledProcessError.__str__ for a negative return code: "died with %r" % signal.Signals(-returncode)
    "subprocess.CalledProcessError: Command '['python', 'infer.py']' died with <Signals.SIGKILL: 9>.\n",
    # torchrun's elastic agent and its failure summary
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 41234) of binary: /usr/bin/python3\n",
    "  traceback : Signal 9 (SIGKILL) received by PID 41234\n",
    # an IDE's run console, and docker compose (128 + 9)
    "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)\n",
    "comfyui-1 exited with code 137\n",
])
def test_a_sigkill_in_its_parents_words_is_the_oom_killer(log):
    cause, c, ev = _top(log)
    assert ev["kind"] == "os.oom_killer" and cause == "host-ram", (ev["kind"], c)


def test_ollama_runner_killed_keeps_ollama_and_the_gpu():
    # Go's os/exec ProcessState: "signal: killed" for SIGKILL; the runner's wrapper text ("process has terminated") is Ollama's
    log = ("load_tensors:        CUDA0 model buffer size = 1885.75 MiB\n"
           "Error: 500 Internal Server Error: llama-server process has terminated: signal: killed\n")
    cause, c, ev = _top(log)
    assert (cause, ev["kind"], ev["runtime"], ev["device_kind"]) == ("host-ram", "os.oom_killer", "ollama", "cuda"), c


@pytest.mark.parametrize("log", [
    "Process finished with exit code 1\n",
    "comfyui-1 exited with code 1370\n",
    "the worker was killed by the user\n",
])
def test_other_exits_are_not_a_kill(log):
    assert not triage.triage_text(log)["found"]


def test_a_runner_aborting_is_not_the_oom_killer():
    res = triage.triage_text("Error: llama runner process has terminated: signal: aborted (core dumped)\n")
    assert res["events"][-1]["kind"] == "ollama.runner" and res["cause"] != "host-ram"


# --- vLLM's cumem allocator (csrc/cumem_allocator.cpp CUDA_CHECK: "CUDA Error: %s at %s:%d", cuGetErrorString) ---------

def test_cumem_allocator_fault_is_not_a_shortage():
    cause, c, ev = _top("CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:119\n")
    assert (cause, ev["kind"], ev["runtime"], ev["device_kind"]) == ("other", "vllm.cumem", "vllm", "cuda"), c
    assert c["other"] == round(6.0 / 6.75, 2) and "invalid argument" in ev["causes"][0]["evidence"][0]


def test_cumem_allocator_out_of_memory_is_found_without_the_fault_reading():
    cause, c, ev = _top("CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n")
    assert ev["kind"] == "vllm.cumem" and ev["form"] == "oom"
    assert not any("not the memory" in e for cc in ev["causes"] for e in cc["evidence"])


def test_another_programs_cuda_error_is_not_the_cumem_allocator():
    res = triage.triage_text("CUDA Error: invalid argument at kernels.cu:88\n")
    assert not res["found"] or res["events"][-1]["kind"] != "vllm.cumem"


# --- a ComfyUI node that encodes, named in the error report: text encoders by name, any other encode is the VAE's -------

def _report(node):
    return ("# ComfyUI Error Report\n## Error Details\n- **Node ID:** 12\n- **Node Type:** " + node + "\n"
            "- **Exception Type:** torch.OutOfMemoryError\n- **Exception Message:** Allocation on device \n")


@pytest.mark.parametrize("node", ["VAEEncode", "WanVideoEncode", "HyVideoEncode", "ToraEncodeTrajectory"])
def test_an_encode_node_is_the_vae(node):
    cause, c, ev = _top(_report(node))
    assert cause == "vae-decode" and ev["guide"]["id"] == "comfyui-vae-decode", c


@pytest.mark.parametrize("node, want", [("CLIPTextEncode", "text-encoder"), ("WanVideoTextEncode", "text-encoder"),
                                        ("TextEncodeQwenImageEdit", "text-encoder")])
def test_text_encode_nodes_stay_the_text_encoder(node, want):
    assert _top(_report(node))[0] == want


@pytest.mark.parametrize("node", ["WanVideoImageClipEncode", "IPAdapterEncoder", "InstantIDFaceEncode"])
def test_image_embedding_encoders_are_not_read_as_the_vae(node):
    assert _top(_report(node))[0] != "vae-decode"


def test_the_vae_guide_names_the_encode_side():
    from gpu_garden.memory.triage import guides
    text = guides.load_all()["comfyui-vae-decode"]["markdown"]
    assert "VAE Encode (Tiled)" in text and "enable_vae_tiling" in text


# --- Caffe's CUDA_CHECK (glog) and Enoki's cuda_malloc ------------------------------------------------------------------

def test_caffe_blob_on_the_device_is_its_own_cudamalloc():
    # SyncedMemory::to_gpu: CUDA_CHECK(cudaMalloc(&gpu_ptr_, size_)): a blob's device copy
    cause, c, ev = _top("F0523 10:11:12.123456  1234 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n")
    assert (cause, ev["runtime"], ev["device_kind"], ev["form"]) == ("activations", "caffe", "cuda", "runtime_call"), c


def test_caffe_pinned_host_copy_is_host_ram():
    # CaffeMallocHost (include/caffe/syncedmem.hpp): CUDA_CHECK(cudaMallocHost(ptr, size))
    cause, c, ev = _top("F0523 10:11:12.123456  1234 syncedmem.hpp:25] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n")
    assert (cause, ev["form"]) == ("host-ram", "runtime_host"), c


def test_caffe_other_cuda_errors_are_not_out_of_memory():
    res = triage.triage_text("F0523 10:11:12.123456  1234 syncedmem.cpp:71] Check failed: error == cudaSuccess (1 vs. 0)  invalid argument\n")
    assert not res["found"]


def test_enoki_cuda_malloc_is_the_render_and_its_autodiff_graph():
    cause, c, ev = _top("  File \"run_test.py\", line 129, in run_ad\n    img = integrator.renderD(sc, sensor_id)\n"
                        "RuntimeError: cuda_malloc(): out of memory!\n")
    assert (cause, ev["kind"], ev["runtime"]) == ("activations", "enoki.malloc", "enoki") and c["activations"] >= 0.6, c
    assert ev["guide"]["id"] == "enoki" and "sppse" in ev["guide"]["markdown"]


# --- a validation or evaluation pass on the stack (its forward keeps the autograd graph outside torch.no_grad) ----------

def _bare(func):
    return ("Traceback (most recent call last):\n  File \"train.py\", line 349, in <module>\n    main()\n"
            f"  File \"train.py\", line 127, in main\n    {func}(loader, model)\n"
            f"  File \"train.py\", line 282, in {func}\n    scores_copy = scores.clone()\n"
            "RuntimeError: CUDA error: out of memory\n")


@pytest.mark.parametrize("func", ["validate", "evaluate", "eval_epoch", "run_eval", "validation_step"])
def test_a_validation_pass_is_the_batch(func):
    cause, c, ev = _top(_bare(func))
    assert cause == "activations" and any(func + "()" in e for e in ev["causes"][0]["evidence"]), c


@pytest.mark.parametrize("func", ["forward", "get_val", "interval", "retrieve"])
def test_other_functions_keep_the_driver_reading(func):
    cause, c, _ = _top(_bare(func))
    assert cause == "host-ram", c       # PyTorch's bare CUDA check: pinned host memory leads, as before


def test_a_library_evaluate_frame_does_not_count():
    log = ("Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/ultralytics/engine/validator.py\", "
           "line 80, in evaluate\n    preds = model(batch)\nRuntimeError: CUDA error: out of memory\n")
    assert _top(log)[0] != "activations"
