"""fix32: defects review28 left (items 5 and 6), near-misses written fresh (not copied from the corpus).

- TensorRT's tactic-skip warning (round 67) was a log-wide fact: a skip early in a log, from a build that went on and
  finished, turned a later, real TensorRT out-of-memory error into "other" ("the build goes on with other tactics")."""
from gpu_garden.memory.triage import engine

SKIP = ("[03/01/2024-10:00:05] [W] [TRT] Skipping tactic 3 due to insufficient memory on requested size of 4294967296 "
        "detected for tactic 0x0000000000000004.\n"
        "[03/01/2024-10:00:05] [W] [TRT] Try decreasing the workspace size with IBuilderConfig::setMemoryPoolLimit().\n")
TRT_OOM = ("[03/01/2024-10:02:06] [E] [TRT] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)\n"
           "[03/01/2024-10:02:06] [E] [TRT] 2: [executionContext.cpp::ExecutionContext::409] Error Code 2: OutOfMemory "
           "(no further information)\n")


def test_an_early_tactic_skip_does_not_explain_a_later_trt_oom():
    built = ("[03/01/2024-10:00:40] [I] [TRT] Engine built in 35.2 sec.\n[03/01/2024-10:00:41] [I] Engine saved to model.engine\n"
             + "".join(f"[03/01/2024-10:01:{i + 10}] [I] frame {i}: 12 detections, 8.4 ms\n" for i in range(30)))
    res = engine.triage_text(SKIP + built + TRT_OOM)
    assert res["found"] and res["events"][-1]["runtime"] == "tensorrt"
    assert res["cause"] != "other"


def test_a_tactic_skip_beside_the_failure_still_reads_as_the_workspace_setting():
    for log in (SKIP + TRT_OOM, TRT_OOM + SKIP):
        res = engine.triage_text(log)
        assert res["cause"] == "other", log
        assert "workspace" in str(res["events"][-1]["causes"][0]["evidence"])
