"""Triage after batches 169, 170 and 171 (round 72): WSL2's residency refusal (dxgkio_make_resident -12) and the "CUDA
driver error: device not ready" that CUDA's virtual-memory calls return there, HAMi-core's vGPU limit with a wrapped usage
counter, cudarc's DriverError naming a Rust program, DeepSpeed's launcher reporting a child ended by SIGKILL, SGLang's
"Not enough memory" quoted cut, a distributed rank's own entry in PyTorch's process list, and whole byte counts parsed
exactly. Pids, paths, sizes and timestamps made up (modelled on microsoft/WSL#41176, syv-ai/qwen38-27b-rtx3090#2,
noonghunna/club-3090#84, Project-HAMi/HAMi#1181, tdrussell/diffusion-pipe#149 and #153, ai-dynamo/nixl#2007); expected
values by hand."""
from gpu_garden.memory.triage import engine
from gpu_garden.memory.units import parse_size
from support.triage_event import top

# --- WSL2: residency refused, and the VMM call's "device not ready" -----------------------------------------------------
WSL_PAIR = ("RuntimeError: CUDA driver error: device not ready\n"
            "[ 4211.803345] misc dxg: dxgk: dxgkio_make_resident: Ioctl failed: -12\n")
WSL_KERNEL_ONLY = "[  917.220410] misc dxg: dxgk: dxgkio_make_resident: Ioctl failed: -12\n"
NOT_READY_ONLY = ("  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 1355, in to\n"
                  "    return self._apply(convert)\n"
                  "RuntimeError: CUDA driver error: device not ready\n")


def test_wsl_make_resident_is_a_platform_refusal():
    """Before round 72 neither line was a failure (nothing found). dxgkrnl's ENOMEM from make_resident is WSL's paging of
    the card refusing, not this job's memory over the card: other, with the WSL guide, device cuda, and WSL known."""
    cause, causes, ev = top(WSL_KERNEL_ONLY)
    assert (ev["kind"], ev["device_kind"], cause) == ("wsl.make_resident", "cuda", "other"), causes
    assert "dxgkio_make_resident" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "wsl-gpu-residency", ev.get("guide")


def test_wsl_pair_reads_the_residency_refusal():
    res = engine.triage_text(WSL_PAIR)
    ev = res["events"][-1]
    assert res["found"] and res["cause"] == "other", res
    assert "paravirtualisation" in ev["causes"][0]["evidence"][0], ev["causes"]
    assert ev["guide"]["id"] == "wsl-gpu-residency"


def test_cuda_driver_error_device_not_ready_is_a_vmm_fault():
    """C10_CUDA_DRIVER_CHECK's "device not ready" alone (no kernel line): CUDA_ERROR_NOT_READY from a VMM call is no
    shortage; other, PyTorch, cuda, and the evidence names expandable segments."""
    cause, causes, ev = top(NOT_READY_ONLY)
    assert (ev["kind"], ev["runtime"], ev["device_kind"], cause) == ("cuda.vmm_not_ready", "pytorch", "cuda", "other"), causes
    assert "expandable_segments:False" in ev["causes"][0]["evidence"][0]
    assert ev["guide"]["id"] == "wsl-gpu-residency"


def test_dxg_kernel_line_marks_wsl():
    """The dxg driver's lines are WSL's own: a Windows-style refusal rule may read them as WSL (fact wsl)."""
    from gpu_garden.memory.triage import lines as L
    assert any(name == "wsl" for name, _ in L.facts(WSL_KERNEL_ONLY.strip()))


# --- HAMi-core's vGPU limit ---------------------------------------------------------------------------------------------
HAMI_WRAPPED = ("[HAMI-core ERROR (pid:12 thread=139871112345600 allocator.c:53)]: Device 1 OOM 18446744073709027328 / 16106127360\n"
                "Error: DriverError(CUDA_ERROR_UNKNOWN, \"<Failure when calling cuGetErrorString()>\")\n")
HAMI_REAL = "[HAMI-core ERROR (pid:31 thread=140001 allocator.c:53)]: Device 0 OOM 8695840768 / 8589934592\n"


def test_hami_wrapped_usage_is_an_accounting_bug():
    """Before round 72 HAMi's line was no failure. A usage at or over 2^63 bytes is a counter wrapped below zero (R12): other,
    on CUDA, the figures exact (no float rounding), the device HAMi names, and cudarc's DriverError beside it names Candle."""
    cause, causes, ev = top(HAMI_WRAPPED)
    assert (ev["kind"], ev["device_kind"], cause) == ("hami.oom", "cuda", "other"), causes
    assert ev["numbers"]["required"] == 18446744073709027328 and ev["numbers"]["limit"] == 16106127360
    assert ev["device_index"] == 1
    assert "wrapped" in ev["causes"][0]["evidence"][0] and ev["causes"][0]["confidence"] >= 0.7, ev["causes"]
    assert ev["runtime"] == "candle"
    assert ev["guide"]["id"] == "hami-vgpu-limit"


def test_hami_real_usage_is_not_called_wrapped():
    """A usage just over the limit is a real refusal: found, its numbers read, and the wrapped-counter row does not fire;
    with no cudarc line and no frames the runtime is the default."""
    cause, causes, ev = top(HAMI_REAL)
    assert ev["kind"] == "hami.oom" and ev["numbers"] == {"required": 8695840768, "limit": 8589934592}
    assert not any("wrapped" in e for c in ev["causes"] for e in c["evidence"]), causes
    assert ev["runtime"] == "pytorch"


def test_whole_byte_counts_parse_exactly():
    """units.parse_size kept 53 bits (a float) for a whole count: "18446744073707737660 B" read as ...737088."""
    assert parse_size("18446744073707737660 B") == 18446744073707737660
    assert parse_size("3 GiB") == 3 << 30 and parse_size("1.5 GiB") == 3 << 29


# --- DeepSpeed's launcher: a child ended by SIGKILL -------------------------------------------------------------------
DS_KILLED = ("[2025-06-02 08:14:03,511] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 40718\n"
             "[2025-06-02 08:14:03,702] [ERROR] [launch.py:325:sigkill_handler] ['/opt/conda/bin/python', '-u', 'train.py', "
             "'--local_rank=0', '--deepspeed', '--config', 'run.toml'] exits with return code = -9\n")
DS_EXIT_1 = DS_KILLED.replace("return code = -9", "return code = 1")


def test_deepspeed_return_code_minus_9_is_the_oom_killer():
    """Before round 72 this was no failure. A negative return code is the signal that ended the child: 9, SIGKILL, which
    nothing sends unasked but the OOM killer: host-ram."""
    cause, causes, ev = top(DS_KILLED)
    assert (ev["kind"], cause) == ("os.oom_killer", "host-ram"), causes


def test_deepspeed_other_return_code_is_no_failure():
    assert not engine.triage_text(DS_EXIT_1)["found"]


# --- SGLang's "Not enough memory" quoted cut ----------------------------------------------------------------------------
SGLANG_CUT = "RuntimeError: Not enough memory\n"
NOT_SGLANG = "RuntimeError: Not enough memory to run the benchmark suite on this runner\n"


def test_sglang_not_enough_memory_cut_is_sglangs_pool_check():
    """Before round 72 the cut quote was no failure. SGLang raises RuntimeError("Not enough memory. Please try to increase
    --mem-fraction-static."): cut at its first words it is the same check (sglang.pool, SGLang, cuda)."""
    cause, causes, ev = top(SGLANG_CUT)
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("sglang.pool", "sglang", "cuda"), (ev["kind"], causes)


def test_not_enough_memory_followed_by_more_words_is_not_sglangs():
    res = engine.triage_text(NOT_SGLANG)
    assert not res["found"] or res["events"][-1]["kind"] != "sglang.pool"


# --- a distributed rank's own entry in PyTorch's process list -----------------------------------------------------------
def _rank_oom(prefix):
    # reserved 60.00 + 5.00 = 65.00 GiB; this rank's entry 66.20 GiB (1.20 GiB over: context and NCCL buffers); another 0.40
    return (f"{prefix}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "79.19 GiB of which 120.00 MiB is free. Process 51234 has 400.00 MiB memory in use. Process 51200 has 66.20 GiB "
            "memory in use. Of the allocated memory 60.00 GiB is allocated by PyTorch, and 5.00 GiB is reserved by PyTorch but "
            "unallocated.\n")


def test_rank_entry_within_context_and_nccl_room_is_this_process():
    """A "[rank0]:" line: an entry 1.20 GiB over PyTorch's reserved figure is this rank (its context and NCCL's buffers);
    only the 400 MiB entry is another program's, and freeing it cannot cover a 2 GiB request with 120 MiB free, so
    other-process does not lead."""
    res = engine.triage_text(_rank_oom("[rank0]: "))
    ev = res["events"][-1]
    assert ev["numbers"]["this_process"] == parse_size("66.20 GiB")
    assert ev["numbers"]["other_processes"] == parse_size("400.00 MiB")
    assert res["cause"] != "other-process", ev["causes"]


def test_plain_line_keeps_the_one_gib_room():
    """Without the rank prefix the room stays OWN_CONTEXT_MAX (1 GiB): 1.20 GiB over is not known to be this process."""
    ev = engine.triage_text(_rank_oom(""))["events"][-1]
    assert "this_process" not in ev["numbers"]
    assert ev["numbers"]["other_processes"] == parse_size("66.20 GiB") + parse_size("400.00 MiB")
