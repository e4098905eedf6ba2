"""review30: SGLang's cut quote read only where no other program's frames come with it, HAMi-core's line read only over
its limit, DeepSpeed's -9 only at its line's end. Logs written here (paths, sizes and line numbers made up), not copied from
the corpus; expected values by hand."""
from gpu_garden.memory.triage import engine

# any Python program may raise RuntimeError("Not enough memory"): here a renderer's own pool, its frames its own
FOREIGN = ('Traceback (most recent call last):\n'
           '  File "/home/ana/tiles/render.py", line 41, in <module>\n'
           '    buf = pool.reserve(n)\n'
           '  File "/home/ana/tiles/mempool.py", line 12, in reserve\n'
           '    raise RuntimeError("Not enough memory")\n'
           'RuntimeError: Not enough memory\n')
# the same cut quote raised from SGLang's model runner
SGLANG = ('Traceback (most recent call last):\n'
          '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1502, in init_memory_pool\n'
          '    raise RuntimeError(\n'
          'RuntimeError: Not enough memory\n')


def test_cut_quote_under_another_programs_frames_is_not_sglangs():
    """Before review30 this read as SGLang's pool check (runtime sglang, weights-exceed-vram, --mem-fraction-static)."""
    res = engine.triage_text(FOREIGN)
    ev = res["events"][-1]
    assert ev["runtime"] != "sglang", ev["runtime"]
    assert res["cause"] != "weights-exceed-vram", ev["causes"]
    assert not any("SGLang" in e or "mem-fraction" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_cut_quote_from_sglangs_frames_or_alone_stays_sglangs():
    for text in (SGLANG, "RuntimeError: Not enough memory\n"):
        res = engine.triage_text(text)
        ev = res["events"][-1]
        assert (ev["kind"], ev["runtime"], res["cause"]) == ("sglang.pool", "sglang", "weights-exceed-vram"), (text, ev["causes"])


# HAMi-core prints "Device N OOM <usage> / <limit>" only when the usage after the request is over the limit
# (src/allocator/allocator.c oom_check: `if (new_allocated > limit) LOG_ERROR(...)`): a line at or under it is no refusal
HAMI_UNDER = "[HAMI-core ERROR (pid:7 thread=140022 allocator.c:53)]: Device 0 OOM 4294967296 / 8589934592\n"


def test_hami_line_at_or_under_its_limit_is_no_refusal():
    assert not engine.triage_text(HAMI_UNDER)["found"]
    assert not engine.triage_text(HAMI_UNDER.replace("4294967296", "8589934592"))["found"]
    over = engine.triage_text(HAMI_UNDER.replace("4294967296", "8589934593"))
    assert over["found"] and over["events"][-1]["kind"] == "hami.oom"


# DeepSpeed's launcher ends its line with the code (launch.py: f"{cmd} exits with return code = {process.returncode}");
# the words inside other prose are no kill
NOT_DEEPSPEED = "check_kill: 'exits with return code = -9' is the string the harness greps for; nothing was killed\n"


def test_return_code_minus_9_only_at_the_launchers_line_end():
    assert not engine.triage_text(NOT_DEEPSPEED)["found"]
    ds = ("[2024-08-19 14:02:11,904] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'finetune.py', "
          "'--local_rank=0'] exits with return code = -9\n")
    res = engine.triage_text(ds)
    assert res["found"] and res["cause"] == "host-ram", res


# cudarc's DriverError is a log-wide fact: a sidecar's line (a Rust embedder falling back to the CPU) beside PyTorch's own
# message, which names PyTorch's allocator, must not rename the PyTorch failure Candle's
SIDECAR = ('[embed-sidecar] warmup failed: DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"), falling back to CPU\n'
           "[embed-sidecar] serving on :8081 (cpu)\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.57 GiB "
           "of which 1.02 GiB is free. Including non-PyTorch memory, this process has 20.10 GiB memory in use. Of the "
           "allocated memory 19.40 GiB is allocated by PyTorch, and 0.38 GiB is reserved by PyTorch but unallocated.\n")


def test_cudarc_line_does_not_rename_pytorchs_own_message():
    ev = engine.triage_text(SIDECAR)["events"][-1]
    assert ev["kind"] == "torch.cuda" and ev["runtime"] == "pytorch", (ev["kind"], ev["runtime"])
