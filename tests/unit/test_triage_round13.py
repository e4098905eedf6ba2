"""Triage round 13: general readings of what a log shows, written from the runtimes' own strings (ComfyUI's weight
adapters, PyTorch's caching-allocator message forms), each with a control that must keep its old reading."""
from gpu_garden.memory.triage import engine as triage
from support.triage_event import top as _top


# --- a parameter named on the error line (comfy/weight_adapter/lora.py: logging.error("ERROR {} {} {}".format(self.name,
# key, e)) when merging a LoRA into a weight fails) ------------------------------------------------------------------

TORCH_MSG = ("CUDA out of memory. Tried to allocate 24.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 18.50 MiB is free. "
             "Including non-PyTorch memory, this process has 7.77 GiB memory in use. Of the allocated memory 7.32 GiB is allocated "
             "by PyTorch, and 402.17 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
             "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def test_lora_patch_naming_its_weight_is_the_weights():
    # the slack is 5 % of the card and 16x the request: the cache-slack rows give fragmentation their most (6.2)
    cause, c, ev = _top("ERROR lora diffusion_model.input_blocks.4.1.transformer_blocks.0.attn1.to_q.weight " + TORCH_MSG + "\n")
    assert cause == "weights-exceed-vram", c
    assert any("diffusion_model.input_blocks.4.1" in e for e in ev["causes"][0]["evidence"])


def test_same_message_without_a_parameter_keeps_the_cache_reading():
    cause, c, _ = _top(TORCH_MSG + "\n")
    assert cause == "fragmentation", c


# --- any runtime's failure in the words every runtime uses, recognised last (parse._generic) --------------------------

import pytest  # noqa: E402


@pytest.mark.parametrize("log", [
    "fatal error: runtime: out of memory\n",                                                  # Go's runtime (throw in malloc.go)
    "runtime: out of memory: cannot allocate 4194304-byte block (3957456896 in use)\nfatal error: out of memory\n",
    "Error: failed to allocate 1073741824 bytes for the output tensor\n",
])
def test_a_failure_no_runtime_form_matches_is_still_read(log):
    res = triage.triage_text(log)
    assert res["found"] and res["events"][-1]["kind"] == "generic.oom"
    assert res["cause"] == "other"                    # nothing else in the log: no cause is claimed from the words alone


@pytest.mark.parametrize("line", [
    "W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",   # llama.cpp retries
    "WARNING: failed to allocate 512.00 MB of pinned memory: out of memory",                    # ggml-cuda falls back
    "the docs say: avoid out of memory by lowering the batch",                                  # no error reported
    "the error says out of memory after the update, not before",                                # prose going on after them
])
def test_warnings_retries_and_prose_are_not_failures(line):
    assert not triage.triage_text(line + "\n")["found"]


def test_an_error_line_ending_in_the_words_is_read():
    # strerror-style: llama.cpp's 2023 CUDA_CHECK (read as cuda.driver by its own row first), ds4's "alloc failed: out of memory"
    from gpu_garden.memory.triage import parse
    assert parse._generic("CUDA error 2 at ggml-cuda.cu:6351: out of memory")
    assert parse._generic("tensor alloc failed: out of memory.")
    assert not parse._generic("the error says out of memory after the update, not before")


def test_a_runtime_form_keeps_its_own_reading():
    res = triage.triage_text("ggml_aligned_malloc: insufficient memory (attempted to allocate 1024.00 MB)\n")
    assert res["events"][-1]["kind"] == "ggml.host" and res["cause"] == "host-ram"


# --- TensorFlow names the tensor it could not allocate; its kernels are HWIO, its activations NHWC -------------------

TF_OOM = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[{}] and type float "
          "on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n")


def test_tensorflow_convolution_kernel_is_the_weights():
    cause, c, ev = _top(TF_OOM.format("3,3,512,512"))
    assert cause == "weights-exceed-vram", c
    assert "shape[3,3,512,512]" in ev["causes"][0]["evidence"][0]


def test_tensorflow_activation_shapes_keep_the_batch_reading():
    for shape in ("32,56,56,256", "64,372,32,32", "3,3,3,64"):        # NHWC, NCHW, and an RGB stem kernel's 3 input channels
        cause, c, _ = _top(TF_OOM.format(shape))
        assert cause == "activations", (shape, c)


# --- ComfyUI loaded the model only in part (comfy/model_patcher.py "loaded partially"): the weights exceed its budget ----

def _comfy_run(load_line, error=None):
    return ("got prompt\nRequested to load Flux\nLoading 1 new model\n" + load_line + "\n"
            "  0%|          | 0/20 [00:00<?, ?it/s]\n"
            + (error or "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)\n"
                        "Currently allocated     : 15.02 GiB\nRequested               : 96.00 MiB\n"
                        "Device limit            : 15.99 GiB\nFree (according to CUDA): 40.00 MiB\n"
                        "PyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB\n"))


def test_partially_loaded_model_failing_while_sampling_is_the_weights():
    cause, c, ev = _top(_comfy_run("loaded partially 13940.52 13938.25 0"))
    assert cause == "weights-exceed-vram", c
    assert any("only partially" in e for e in ev["causes"][0]["evidence"])


def test_completely_loaded_model_keeps_the_sampling_reading():
    cause, c, _ = _top(_comfy_run("loaded completely 0.0 13938.25 True"))
    assert cause == "activations", c


def test_an_earlier_partial_load_is_not_this_model():
    log = _comfy_run("loaded completely 0.0 13938.25 True").replace(
        "got prompt\n", "got prompt\nRequested to load SDXL\nloaded partially 5120.0 5118.2 0\n", 1)
    cause, c, _ = _top(log)
    assert cause == "activations", c


# --- a training run failing in a late epoch (PyTorch FAQ: "Don't accumulate history across your training loop") -------

DLIB_ERR = ("Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file /src/dlib/cuda/gpu_data.cpp:191. "
            "code: 2, reason: out of memory\n")


def test_late_epoch_failure_is_memory_kept_across_steps():
    cause, c, ev = _top("Epoch 5/20\n  812/1563 [=============>....] - loss: 0.4121\n" + DLIB_ERR)
    assert cause == "leak", c
    assert "epoch 5" in ev["causes"][0]["evidence"][0]


def test_first_epochs_keep_the_batch_reading():
    for epoch in ("Epoch 1/20", "Epoch 2/20", "Epoch 0:"):
        cause, c, _ = _top(epoch + "\n  812/1563 [=============>....] - loss: 0.4121\n" + DLIB_ERR)
        assert cause == "activations", (epoch, c)


def test_late_epoch_pytorch_message_names_the_leak_as_runner_up():
    log = ("Epoch 7/50\n  File \"/work/train.py\", line 88, in <module>\n    loss.backward()\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.64 GiB of "
           "which 190.81 MiB is free. Including non-PyTorch memory, this process has 23.44 GiB memory in use. Of the allocated "
           "memory 22.91 GiB is allocated by PyTorch, and 85.33 MiB is reserved by PyTorch but unallocated.\n")
    cause, c, _ = _top(log)
    assert cause == "activations" and c.get("leak", 0) >= 0.3, c
