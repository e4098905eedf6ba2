"""review24 item 10: the Spark RAPIDS plugin's "Initial RMM allocation (X MB) is larger than free memory (F MB)" was read
whatever its two figures said, so a pool of 0 MB against 99999 MB free gave "pool of 0 B ... larger than the 97.66 GiB
free". The event is now read only where the pool is larger than the free figure, as the sentence says; otherwise the
line falls through to the generic reading. Figures made up (the form is test_triage_tune109's SPARK, NVIDIA/spark-rapids
#1674). Breaking it: native_runtimes.rapids_rmm_init without its comparison (checked once: the first test fails)."""
from gpu_garden.memory.triage import engine

MIB = 1 << 20


def _spark(pool, free):
    return ("23/06/12 14:02:11 INFO RapidsExecutorPlugin: Initializing memory from Executor Plugin\n"
            f"23/06/12 14:02:15 WARN GpuDeviceManager: Initial RMM allocation ({pool} MB) is larger than free memory "
            f"({free} MB)\n"
            f"23/06/12 14:02:15 INFO GpuDeviceManager: Initializing RMM POOL initial size = {pool} MB, max size = 31744.0 MB "
            "on gpuId 1\n"
            "23/06/12 14:02:15 ERROR RapidsExecutorPlugin: Exception in the executor plugin\n"
            "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: RMM failure\n")


def test_figures_that_contradict_the_sentence_are_not_the_pool_event():
    for pool, free in (("0", "99999"), ("25210.5", "25210.5"), ("1024", "29491.2")):
        res = engine.triage_text(_spark(pool, free))
        kinds = [e.get("kind") for e in res.get("events", [])]
        assert "rapids.rmm_init" not in kinds, (pool, free, kinds)
        assert "larger than the" not in str(res), (pool, free)


def test_a_pool_larger_than_free_is_still_read():
    res = engine.triage_text(_spark("29491.2", "25210.5"))
    ev = res["events"][-1]
    assert ev["kind"] == "rapids.rmm_init" and res["cause"] == "other-process", ev
    assert (ev["numbers"]["requested"], ev["numbers"]["free"]) == (round(29491.2 * MIB), round(25210.5 * MIB))
