"""Task tri83 (issue 14): a runtime's own memory pool that refused a buffer of 1 MiB or less reads as the weights (what the pool
held before filled its limit), with the own-pool activations reading as runner-up. Inputs written by hand in the runtimes'
own words; none taken from a corpus file.

MLX's malloc_or_wait (mlx/allocator.cpp) waits for every scheduled task to finish and free what it can, retries past its
block limit, and only then raises "[malloc_or_wait] Unable to allocate N bytes"; a buffer of a few bytes is no input's
working memory (below PyTorch's own small-block line, kSmallSize, 1 MiB), so the pool was full of what the program keeps
(pool_small_request.py)."""
import pytest

from support.triage_event import read, top

MLX_HEAD = ("$ python lora.py --model mlx_model --train --iters 100\nLoading pretrained model\nTotal parameters 7243.436M\n"
            "Loading datasets\n")


def mlx_malloc(n_bytes: int, head: str = MLX_HEAD) -> str:
    return (head + "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            f"[malloc_or_wait] Unable to allocate {n_bytes} bytes.\nzsh: abort      python lora.py\n")


@pytest.mark.parametrize("n_bytes", [12, 4096, 1024 * 1024])
def test_mlx_tiny_request_reads_as_weights(n_bytes):
    # fails on the old rules: the own-pool row read every buffer as this input's working memory (activations, 0.56)
    cause, kind, runtime, device, numbers = read(mlx_malloc(n_bytes))
    assert (cause, kind, runtime, device, numbers) == ("weights-exceed-vram", "mlx.malloc", "mlx", "metal", {"requested": n_bytes})
    _cause, conf, ev = top(mlx_malloc(n_bytes))
    assert conf["activations"] > 0 and conf["activations"] < conf["weights-exceed-vram"]    # the own-pool reading stays second
    assert "too small to be this input's working memory" in ev["causes"][0]["evidence"][0]


def test_request_over_a_mebibyte_stays_activations():
    # one byte past PyTorch's small-block line: a buffer that can be an operator's working memory, as before
    cause, _kind, _runtime, _device, _numbers = read(mlx_malloc(1024 * 1024 + 1))
    assert cause == "activations"


def test_training_step_shown_stays_activations():
    # a training run the log shows (its epoch lines): the step's gradients and optimizer state are held too (script_full's
    # own exclusion), so the tiny request is not read as the weights
    head = MLX_HEAD + "Epoch 1 train_loss 2.314\n"
    cause, _kind, _runtime, _device, _numbers = read(mlx_malloc(12, head))
    assert cause == "activations"


def test_other_own_pools_too():
    # CuPy's memory pool names the one buffer as well (OWN_POOLS): the same reading for a 512-byte buffer
    text = ("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    y = x.sum()\n"
            "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 512 bytes (allocated so far: 15,678,912,000 bytes).\n")
    cause, kind, _runtime, _device, _numbers = read(text)
    assert (cause, kind) == ("weights-exceed-vram", "cupy.oom")


def test_a_limit_the_program_set_is_not_read_as_the_weights():
    # CuPy prints "limit set to" only under MemoryPool.set_limit: that limit refused (the pool held 1,024 bytes), so the tiny
    # request is not read as what the pool held (fails on the first version of the row, which did not look at the limit)
    text = ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,048 bytes (allocated so far: 1,024 bytes, limit set "
            "to: 3,000 bytes).\n")
    cause, kind, _runtime, _device, _numbers = read(text)
    assert (cause, kind) == ("activations", "cupy.oom")
