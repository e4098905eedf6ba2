"""Triage after batches 109-110 (round 59). Lines written from the programs' own sources: CatBoost's stack-like GPU memory
pool sentence quoted from "Requested" on (stack_like_memory_pool.h; catboost/catboost#1081's quote), the RAPIDS Accelerator
for Apache Spark's pool sizing at executor start (GpuDeviceManager.computeRmmInitSizes, 0.1 to 21.08; NVIDIA/spark-rapids
#1674's form) and ComfyUI-nunchaku's DiT loader's card line (nodes/models/flux.py). Dates, sizes, card names and paths made
up; expected values by hand."""
from support.triage_event import top

MIB = 1 << 20

CATBOOST_QUOTED = ("Free memory on device #0 10998.25MB\n"
                   "Free memory on device #1 11012.5MB\n"
                   "Requested 8192 MB; Free 6001.5 MB\"\n")


def test_catboost_pool_sentence_quoted_without_its_lead_in():
    """A line that is CatBoost's pool sentence alone, from "Requested" on (a quote that drops "Error: Out of memory."):
    runtime catboost, both figures in its MB (MiB), the data on the card (activations) as the full form reads."""
    cause, scores, ev = top(CATBOOST_QUOTED)
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("catboost", "cuda", "catboost.pool"), ev
    assert ev["numbers"] == {"requested": 8192 * MIB, "free": int(6001.5 * MIB)}, ev["numbers"]
    assert cause == "activations", ev["causes"]
    assert ev["guide"]["id"] == "catboost", ev["guide"]["id"]


def test_requested_free_inside_other_words_is_not_catboost():
    """The quoted form is read only as a line of its own: the same words inside another program's sentence are not CatBoost's."""
    from gpu_garden.memory.triage import engine
    for text in ("cache: Requested 8192 MB; Free 6001.5 MB, retrying with a smaller block\n",
                 "Requested 8192 MB; Free 6001.5 GB\n"):
        res = engine.triage_text(text)
        assert not res["found"] or res["events"][-1]["runtime"] != "catboost", (text, res)


SPARK = ("23/06/12 14:02:11 INFO RapidsExecutorPlugin: Initializing memory from Executor Plugin\n"
         "23/06/12 14:02:15 WARN GpuDeviceManager: Initial RMM allocation (29491.2 MB) is larger than free memory (25210.5 MB)\n"
         "23/06/12 14:02:15 INFO GpuDeviceManager: Initializing RMM POOL initial size = 29491.2 MB, max size = 31744.0 MB on gpuId 1\n"
         "23/06/12 14:02:15 ERROR RapidsExecutorPlugin: Exception in the executor plugin\n"
         "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: RMM failure\n")


def test_spark_rapids_pool_over_free_at_executor_start_is_other_process():
    """The plugin's warning that its pool (a fraction of the card's total) is larger than what is free at executor start:
    runtime rapids, the pool, the free figure and the pool's maximum read (MiB), and memory held outside the executor
    (other-process) with the one-GPU-per-executor setting in the answer."""
    cause, scores, ev = top(SPARK)
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("rapids", "cuda", "rapids.rmm_init"), ev
    assert ev["numbers"] == {"requested": round(29491.2 * MIB), "free": round(25210.5 * MIB), "limit": 31744 * MIB}, ev["numbers"]
    assert cause == "other-process" and scores["other-process"] >= 0.7, ev["causes"]
    assert "spark.executor.resource.gpu.amount=1" in ev["causes"][0]["evidence"][0], ev["causes"][0]


NUNCHAKU = ("got prompt\n"
            "GPU 0 (NVIDIA GeForce RTX 4070) Memory: 11985.5625 MiB\n"
            "VRAM < 14GiB, enabling CPU offload\n"
            "model_type FLUX\n"
            "!!! Exception during processing !!! Allocation on device \n"
            "Traceback (most recent call last):\n"
            '  File "/srv/ComfyUI/execution.py", line 496, in execute\n')


def test_nunchaku_loader_card_line_is_the_total():
    """ComfyUI-nunchaku's loader prints the card's total_memory in MiB: with one such card in the log it is the total."""
    cause, scores, ev = top(NUNCHAKU)
    assert ev["runtime"] == "comfyui", ev
    assert ev["numbers"].get("total") == round(11985.5625 * MIB), ev["numbers"]


def test_nunchaku_two_cards_give_no_total():
    """Two cards printed: the failure names none of them, so no total is taken."""
    two = NUNCHAKU.replace("GPU 0 (NVIDIA GeForce RTX 4070) Memory: 11985.5625 MiB\n",
                           "GPU 0 (NVIDIA GeForce RTX 4070) Memory: 11985.5625 MiB\nGPU 1 (NVIDIA GeForce RTX 3090) Memory: 24124.0 MiB\n")
    cause, scores, ev = top(two)
    assert "total" not in ev["numbers"], ev["numbers"]


SAPIEN = ("[2025-11-02 09:14:05.310] [SAPIEN] [critical] Patch buffer overflow detected, please increase its size to at least "
          "402113 in the scene desc!\n")
ISAAC = ("2025-11-02 09:14:05 [31,022ms] [Error] [omni.physx.plugin] PhysX error: Patch buffer overflow detected, please increase "
         "its size to at least 402113 in the scene desc!\n")


def test_physx_overflow_under_sapien_names_sapien_and_maniskills_field():
    """GPU PhysX's buffer overflow printed by SAPIEN's logger ("[SAPIEN]"): runtime sapien, the fixed-capacity reading (other)
    with ManiSkill's GPUMemoryConfig field in the answer; the same line from Kit's plugin stays Isaac Sim's, with Isaac Lab's."""
    cause, scores, ev = top(SAPIEN)
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("sapien", "cuda", "physx.capacity"), ev
    assert cause == "other", ev["causes"]
    assert "GPUMemoryConfig.max_rigid_patch_count" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["guide"]["id"] == "physx-gpu-capacity", ev["guide"]["id"]
    cause, scores, ev = top(ISAAC)
    assert ev["runtime"] == "isaacsim" and "PhysxCfg.gpu_max_rigid_patch_count" in ev["causes"][0]["evidence"][0], ev


KMCUDA_YY = ("arguments: 1 (nil) 0.010 0.10 0 1200000 128 20000 42 1 0 2 0x7f0 0x7f1 0x7f2 0x7f3\n"
             "reassignments threshold: 12000\n"
             "yinyang groups: 2000\n"
             "cudaMalloc(&__ptr, __size)\n"
             "/opt/src/kmcuda/src/kmcuda.cc:456 -> out of memory\n"
             "failed to allocate 2401200000 bytes for device_bounds_yy\n"
             "Status: MemoryAllocationFailure\n")


def test_kmcuda_yinyang_buffer_names_yinyang_off():
    """kmcuda's failed buffer is one of its Yinyang refinement's (*_yy): the data-sized reading (activations) with
    yinyang_t=0 as the answer; another buffer keeps the data-set answer."""
    cause, scores, ev = top(KMCUDA_YY)
    assert (ev["runtime"], ev["kind"]) == ("kmcuda", "kmcuda.alloc"), ev
    assert ev["numbers"] == {"requested": 2401200000}, ev["numbers"]
    assert cause == "activations" and "yinyang_t=0" in ev["causes"][0]["evidence"][0], ev["causes"]
    assert "device_bounds_yy" in ev["causes"][0]["evidence"][0], ev["causes"]
    cause, scores, ev = top(KMCUDA_YY.replace("device_bounds_yy", "device_samples"))
    assert cause == "activations" and "yinyang_t=0" not in ev["causes"][0]["evidence"][0], ev["causes"]
