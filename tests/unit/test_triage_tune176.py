"""Triage after batches 176, 177, 178 and 179 (round 74): Rockchip's NPU runtimes (RKNN, RKLLM) refusing NPU memory, LMCache's
own pool with no free chunk, PyTorch's CUDA "invalid argument" under a pinned host allocation, and SGLang's prefill
refusal quoted with no space after "tokens:". Paths, pids,
sizes, model names and timestamps made up (modelled on airockchip/rknn-llm#68, rockchip-linux/rknn-toolkit2#44,
rockchip-linux/rknn-toolkit#400, LMCache/LMCache#745, #1330 and #1063, sgl-project/sglang#5081);
expected values by hand."""
from support.triage_event import top

# --- Rockchip's NPU: RKLLM and RKNN ---------------------------------------------------------------------------------------
RKLLM_EFAULT = ("./demo_llm /data/models/qwen-1_8b-w8a8.rkllm 512 1024\n"
                "rkllm init start\n"
                "rkllm-runtime version: 1.0.0, rknpu driver version: 0.9.3, platform: RK3588\n"
                "E RKNN: [09:12:44.501] failed to allocate handle, ret: -1, errno: 14, errstr: Bad address\n"
                "\n"
                "can not create weight memory for domain0\n"
                "Segmentation fault\n")
RKNN_NO_IOMMU = ("[    3.412008] RKNPU fdab0000.npu: RKNPU: rknpu iommu is disabled, using non-iommu mode\n"
                 "2024-03-11 10:02:17.340 4410-4432 E/RKNN: failed to allocate handle, ret: -1\n"
                 "2024-03-11 10:02:17.341 4410-4432 E/RKNN: failed to malloc npu memory!, size: 31457280, flags: 0x2\n"
                 "2024-03-11 10:02:17.342 4410-4432 E/RKNN: rknn_init, load model failed!\n")
RKNN_PY_MALLOC = "Exception: RKNN init failed. error code: RKNN_ERR_MALLOC_FAIL\n"
RKNN_ENOMEM = "E RKNN: [22:01:09.114] failed to allocate handle, ret: -1, errno: 12, errstr: Cannot allocate memory\n"


def test_rkllm_driver_errno_not_enomem_is_a_driver_fault():
    """Before round 74 nothing here was a failure (found False). errno 14 (EFAULT) from the RKNPU driver is the runtime and
    driver disagreeing: other from the errno row (not the general RKNN row), runtime RKLLM by its own lines, device npu."""
    cause, causes, ev = top(RKLLM_EFAULT)
    assert (cause, ev["kind"], ev["form"], ev["runtime"], ev["device_kind"]) == ("other", "npu.rknn", "handle", "rkllm", "npu"), causes
    assert "errno 14" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["guide"]["id"] == "npu-rknn", ev.get("guide")


def test_rknn_enomem_is_not_read_as_a_driver_fault():
    """errno 12 is memory: the errno row stays out, the general RKNN row speaks."""
    cause, _, ev = top(RKNN_ENOMEM)
    assert (cause, ev["kind"], ev["runtime"]) == ("other", "npu.rknn", "rknn")
    assert "errno" not in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_rknn_without_iommu_names_the_firmware_mode_and_the_size():
    """The kernel's "rknpu iommu is disabled" line beside the refusal: the IOMMU row, and the size logcat printed."""
    cause, causes, ev = top(RKNN_NO_IOMMU)
    assert (cause, ev["kind"], ev["runtime"], ev["device_kind"]) == ("other", "npu.rknn", "rknn", "npu"), causes
    assert ev["numbers"] == {"requested": 31457280}, ev["numbers"]
    assert "IOMMU" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_rknn_malloc_fail_code_alone_is_found():
    cause, _, ev = top(RKNN_PY_MALLOC)
    assert (cause, ev["kind"], ev["runtime"], ev["device_kind"]) == ("other", "npu.rknn", "rknn", "npu")
    assert "Rockchip" in ev["causes"][0]["evidence"][0]


# --- LMCache's pool -------------------------------------------------------------------------------------------------------
LMCACHE_FULL = ("[2025-09-02 14:40:11,902] LMCache WARNING: Failed to allocate memory for tensor(torch.Size([2, 32, 256, 128]), "
                "torch.bfloat16) because no memory is available (memory_management.py:598:lmcache.v1.memory_management)\n")


def test_lmcache_pool_full_is_its_own_pool_under_vllm():
    """Before round 74 the line read as a generic OOM of PyTorch's (or, at DEBUG level, nothing). LMCache's fixed pool
    (its CPU tier or GDS buffer) had no free chunk: other, with LMCache's guide, under vLLM by LMCache's own line."""
    cause, causes, ev = top(LMCACHE_FULL)
    assert (cause, ev["kind"], ev["runtime"]) == ("other", "lmcache.pool", "vllm"), causes
    assert "LMCache" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "lmcache-pool", ev.get("guide")


# --- PyTorch's CUDA "invalid argument" --------------------------------------------------------------------------------------
PINNED_INVALID = ("  File \"/srv/app/offload/host_pool.py\", line 88, in __init__\n"
                  "    self.buf = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)\n"
                  "RuntimeError: CUDA error: invalid argument\n"
                  "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n")
PLAIN_INVALID = ("  File \"/srv/app/model/attn.py\", line 41, in forward\n"
                 "    out = kernels.fused_rope(q, k, cos, sin)\n"
                 "RuntimeError: CUDA error: invalid argument\n")


def test_invalid_argument_under_a_pinned_allocation_is_host_ram():
    """Before round 74 "CUDA error: invalid argument" was no failure (found False). Under a source line that pins host
    memory itself, the page-locked buffer was refused: host-ram, with the pinned-memory guide."""
    cause, causes, ev = top(PINNED_INVALID)
    assert (cause, ev["kind"], ev["device_kind"]) == ("host-ram", "cuda.invalid_arg", "cuda"), causes
    assert "pin_memory=True" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "pytorch-pinned-memory", ev.get("guide")


def test_invalid_argument_elsewhere_is_not_memory():
    cause, causes, ev = top(PLAIN_INVALID)
    assert (cause, ev["kind"]) == ("other", "cuda.invalid_arg"), causes
    assert "host-ram" not in causes, causes
    assert "invalid argument" in ev["causes"][0]["evidence"][0], ev["causes"][0]


# --- SGLang's prefill refusal, "tokens:N" ------------------------------------------------------------------------------------
SGLANG_ROOM = ("RuntimeError: Prefill out of memory. Try to lower your batch size.Try to allocate 2210 tokens.Avaliable "
               "tokens:6144self.token to kv pool allocator.available size()=6144self.tree cache.evictable size()=0\n")
SGLANG_SHORT = ("RuntimeError: Prefill out of memory. Try to lower your batch size.Try to allocate 2210 tokens.Avaliable "
                "tokens:1024self.token to kv pool allocator.available size()=1024self.tree cache.evictable size()=0\n")


def test_sglang_available_without_a_space_is_read():
    """Before round 74 the available count was not read ("tokens:6144"), so the pool row said kv-cache; with room for the
    request, the pool-accounting row names other."""
    cause, causes, ev = top(SGLANG_ROOM)
    assert ev["numbers"] == {"requested_tokens": 2210, "available_tokens": 6144}, ev["numbers"]
    assert cause == "other", causes


def test_sglang_short_pool_stays_kv_cache():
    cause, causes, ev = top(SGLANG_SHORT)
    assert ev["numbers"]["available_tokens"] == 1024
    assert cause == "kv-cache", causes
