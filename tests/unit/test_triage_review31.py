"""review31: near-misses of rounds 76 and 77 that must not match. Logs written here (not copied from the corpus), from
the runtimes' own message formats: PyTorch's CUDA OutOfMemoryError, the Point Cloud Library's "[pcl::Class::method]"
console warnings, XLA's TPU device-buffer refusal, TensorFlow/XLA's BFC allocator line and absl's StatusOr exception."""
from gpu_garden.memory.triage import engine as triage


def _head(text):
    res = triage.triage_text(text)
    assert res["found"], text
    return res, res["events"][res["headline"]]


# --- round 77's PCL marker beside PyTorch's own message ---------------------------------------------------------------
# a PyTorch training script that filters its clouds through a PCL binding: PCL's warning, then PyTorch's CUDA OOM
TORCH_BESIDE_PCL = (
    "[pcl::VoxelGrid::applyFilter] Leaf size is too small for the input dataset. Integer indices would overflow.\n"
    "epoch 3 iter 120 loss 0.412\n"
    "Traceback (most recent call last):\n"
    '  File "/home/u/det3d/tools/train.py", line 201, in main\n'
    "    loss.backward()\n"
    '  File "/opt/venv/lib/python3.10/site-packages/torch/_tensor.py", line 525, in backward\n'
    "    torch.autograd.backward(\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 23.64 GiB of "
    "which 402.00 MiB is free. Including non-PyTorch memory, this process has 23.24 GiB memory in use. Of the allocated "
    "memory 21.90 GiB is allocated by PyTorch, and 880.00 MiB is reserved by PyTorch but unallocated.\n")


def test_pcl_warning_beside_pytorch_s_own_oom_leaves_the_run_pytorch_s():
    res, ev = _head(TORCH_BESIDE_PCL)
    assert ev["kind"] == "torch.cuda"
    assert ev["runtime"] == "pytorch", ev["runtime"]


def test_pcl_warning_before_a_bare_bad_alloc_still_names_pcl():
    res, ev = _head("[pcl::KdTreeFLANN::setInputCloud] Cannot create a KDTree with an empty input cloud!\n"
                    "Computing normals...\n"
                    "terminate called after throwing an instance of 'std::bad_alloc'\n"
                    "  what():  std::bad_alloc\n")
    assert ev["runtime"] == "pcl"


# --- round 76's PyTorch/XLA status words in a JAX log -----------------------------------------------------------------
# JAX on a GPU aborting in C++: absl's StatusOr exception uncaught (std::terminate prints its what()), then Python's
# faulthandler dump of JAX's frames. Only PyTorch's binding raises it as "RuntimeError: Bad StatusOr access"
JAX_ABORT = ("2026-12-01 09:00:01.331 E external/xla/xla/pjrt/gpu/se_gpu_pjrt_client.cc:912] Execution failed\n"
             "terminate called after throwing an instance of 'absl::lts_20230802::BadStatusOrAccess'\n"
             "  what():  Bad StatusOr access: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3221225472 bytes.\n"
             "Fatal Python error: Aborted\n"
             '  File "/opt/venv/lib/python3.11/site-packages/jax/_src/interpreters/pxla.py", line 1229 in __call__\n'
             '  File "/home/u/train_flax.py", line 140 in main\n')


def test_absl_s_status_words_in_a_jax_abort_stay_jax_s():
    _, ev = _head(JAX_ABORT)
    assert ev["kind"] == "xla.oom"
    assert ev["runtime"] == "jax", ev["runtime"]


# --- round 76's full-chip TPU row beside a GPU allocator's line -------------------------------------------------------
def _tpu_words(req, free):
    return (f"Execution of replica 0 failed: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate "
            f"{req}. That was not possible. There are {free} free.\n")


GPU_BFC = ("2026-12-01 09:00:01.331 W external/xla/xla/tsl/framework/bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out "
           "of memory trying to allocate 112.00MiB (rounded to 117440512)requested by op \n")


def test_the_tpu_row_does_not_read_a_gpu_allocator_s_failure_against_a_tpu_core():
    # the same words beside the BFC allocator naming a GPU: the chip is a GPU, not an 8 GiB TPU core
    res, ev = _head(GPU_BFC + "2026-12-01 09:00:01.332 E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:3084] "
                    + _tpu_words("112.00M", "57.75M"))
    assert res["cause"] != "weights-exceed-vram", ev["causes"]


def test_the_tpu_row_still_reads_the_message_alone():
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("112.00M", "57.75M"))
    assert res["cause"] == "weights-exceed-vram"


def test_the_tpu_row_needs_the_chip_full():
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("112.00M", "5.25G"))     # 5.25G free: most of a v2 core
    assert res["cause"] != "weights-exceed-vram"


# --- the bounds of rounds 76 and 77, pinned (their tests passed with the constants doubled) ---------------------------
# tpu_full: under SLIVER (4 %) of TPU_MIN_HBM (8 GiB) free = 327.68 MiB, a request up to LAYER_SHARE (2 %) = 163.84 MiB
def test_the_tpu_row_s_free_bound_is_a_sliver_of_an_8_gib_core():
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("112.00M", "320.00M"))
    assert res["cause"] == "weights-exceed-vram"
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("112.00M", "340.00M"))
    assert res["cause"] != "weights-exceed-vram"


def test_the_tpu_row_s_request_bound_is_a_layer_of_an_8_gib_core():
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("160.00M", "57.75M"))
    assert res["cause"] == "weights-exceed-vram"
    res, _ = _head("jax.errors.JaxRuntimeError: " + _tpu_words("170.00M", "57.75M"))
    assert res["cause"] != "weights-exceed-vram"


# impossible_unsized: ABSURD_REQUEST (16) x LARGEST_CARD (288 GiB) = 4608 GiB
def test_a_cut_request_reads_as_a_size_computed_wrong_just_past_16_largest_cards():
    res, _ = _head("RuntimeError: CUDA out of memory. Tried to allocate 4600.00 GiB\n")
    assert res["cause"] != "other"
    res, _ = _head("RuntimeError: CUDA out of memory. Tried to allocate 4620.00 GiB\n")
    assert res["cause"] == "other"
