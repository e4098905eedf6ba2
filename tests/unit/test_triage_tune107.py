"""Triage after batches 107-108 (round 58). Lines written from the libraries' own sources: GPU PhysX's buffer overflows
(PxgAABBManager.cpp and the GPU narrowphase: "needs to increase PxgDynamicsMemoryConfig::<name> to <n>", "<buffer> buffer
overflow detected, please increase its size to at least <n> in the scene desc!"; isaac-sim/IsaacLab#1389 and
isaac-sim/OmniIsaacGymEnvs#3's forms), kmcuda's CUDA checks (src/private.h CUCH and CUMALLOC_ONEN, src/python.cc; src-d/kmcuda#21's
form), cuDF's Java exception (NVIDIA/cudf-spark#1533's form), XLA's rematerialization warning (xla/service/hlo_rematerialization.cc;
google-deepmind/mujoco#1431's form) and PyTorch's <=2.0 message with no space before its bracket (facebookresearch/splitnet#11's
form). Timestamps, paths, counts, sizes and names made up; expected values by hand."""
from support.triage_event import top

MIB = 1 << 20
GIB = 1 << 30

PHYSX_PAIRS = ("2023-03-02 08:14:55 [88,412ms] [Error] [omni.physx.plugin] PhysX error: The application needs to increase "
               "PxgDynamicsMemoryConfig::foundLostPairsCapacity to 9216 , otherwise, the simulation will miss interactions\n"
               ", FILE /builds/physx/source/gpubroadphase/src/PxgAABBManager.cpp, LINE 1187\n")
PHYSX_PATCH_WRAPPED = ("/buildAgent/work/5d1f/source/gpunarrowphase/src/PxgNphaseImplementationContext.cpp (702) : internal error : "
                       "Patch buffer overflow detected, please increase its size to at least -2101345280 in the scene desc!\n")
PHYSX_STACK = ("[Error] [omni.physx.plugin] PhysX error: PxGpuDynamicsMemoryConfig::collisionStackSize buffer overflow detected, "
               "please increase its size to at least 201326592 in the scene desc! Contacts have been dropped.\n")


def test_physx_capacity_overflow_is_a_fixed_buffer_not_the_card():
    """GPU PhysX's overflowed buffer (Kit's omni.physx plugin: Isaac Sim): runtime isaacsim, device cuda, the capacity and the
    count it needs read, no byte figure; other (the scene description's capacity, R4), with the PhysX guide naming the setting."""
    cause, scores, ev = top(PHYSX_PAIRS)
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("isaacsim", "cuda", "physx.capacity"), ev
    assert ev["numbers"] == {}, ev["numbers"]
    assert cause == "other" and scores["other"] >= 0.8, ev["causes"]
    said = ev["causes"][0]["evidence"][0]
    assert "foundLostPairsCapacity buffer" in said and "at least 9216)" in said and "gpu_found_lost_pairs_capacity" in said, said
    assert ev["guide"]["id"] == "physx-gpu-capacity", ev["guide"]["id"]
    cause, _, ev = top(PHYSX_STACK)
    said = ev["causes"][0]["evidence"][0]
    assert cause == "other" and "collisionStackSize" in said and "at least 201326592)" in said, ev["causes"]


def test_physx_wrapped_count_outside_kit_is_physx():
    """Outside Kit (Isaac Gym's bare PhysX error callback) the runtime is physx; a count printed negative wrapped a signed
    32-bit integer and is read as the unsigned count."""
    cause, _, ev = top(PHYSX_PATCH_WRAPPED)
    said = ev["causes"][0]["evidence"][0]
    assert ev["runtime"] == "physx" and cause == "other", (ev["runtime"], ev["causes"])
    assert "Patch buffer" in said and "at least 2193622016)" in said and "gpu_max_rigid_patch_count" in said, said


def test_glibc_buffer_overflow_is_not_physx():
    """glibc's fortify abort says "buffer overflow detected" too: not a memory failure, not PhysX's."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("*** buffer overflow detected ***: terminated\nAborted (core dumped)\n")
    assert not res["found"] or res["events"][-1]["kind"] != "physx.capacity", res


KMCUDA = ("reassignments threshold: 3100\n"
          "/home/ci/kmcuda/src/kmcuda.cc:148 -> out of memory\n"
          "failed to allocate 2400000000 bytes for *dest\n"
          "Traceback (most recent call last):\n"
          '  File "cluster.py", line 12, in <module>\n'
          "    centroids, assignments = kmeans_cuda(samples, 512, verbosity=1)\n"
          "MemoryError: Failed to allocate memory on GPU\n")


def test_kmcuda_allocation_is_the_data_set_on_the_card():
    """kmcuda's failed cudaMalloc and the buffer under it: runtime kmcuda, device cuda, the bytes read; its Python binding's
    MemoryError is the same failure, not system RAM; the data set on the card (activations), kmcuda's guide."""
    cause, scores, ev = top(KMCUDA)
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("kmcuda", "cuda", "kmcuda.alloc"), ev
    assert ev["numbers"] == {"requested": 2400000000}, ev["numbers"]
    assert cause == "activations" and scores["activations"] >= 0.6, ev["causes"]
    assert "*dest" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["guide"]["id"] == "kmcuda", ev["guide"]["id"]


def test_kmcuda_words_need_kmcudas_files():
    """Another program's "file:line -> out of memory" and a host malloc's "failed to allocate N bytes for X" are not kmcuda's."""
    from gpu_garden.memory.triage import engine
    for text in ("src/solver.cc:88 -> out of memory\nfailed to allocate 4096 bytes for grid\n",
                 "ERROR: failed to allocate 65536 bytes for receive buffer\n"):
        res = engine.triage_text(text)
        assert not res["found"] or res["events"][-1]["runtime"] != "kmcuda", res


CUDF_JAVA = ("23/05/02 11:02:10 WARN TaskSetManager: Lost task 3.0 in stage 7.0 (TID 40, 10.0.0.8, executor 1): "
             "ai.rapids.cudf.CudfException: transform failed: cudaErrorMemoryAllocation: out of memory\n"
             "\tat ai.rapids.cudf.ColumnView.stringReplace(Native Method)\n")


def test_cudf_java_exception_is_rapids():
    """cuDF's Java binding rethrowing a thrust allocation failure (the Spark RAPIDS plugin): runtime rapids, RMM's device
    form, not PyTorch's bare driver error."""
    _, _, ev = top(CUDF_JAVA)
    assert (ev["runtime"], ev["device_kind"], ev["kind"], ev["form"]) == ("rapids", "cuda", "rmm.oom", "device"), ev


def test_torch_old_message_without_space_before_bracket_reads_its_figures():
    """PyTorch <= 2.0's message with the space before "(GPU 0;" lost (an issue title): every figure still read."""
    _, _, ev = top("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB(GPU 0; 7.79 GiB total capacity; 5.10 GiB "
                   "already allocated; 301.44 MiB free; 5.62 GiB reserved in total by PyTorch)\n")
    n = ev["numbers"]
    assert (n["requested"], n["total"], n["allocated"], n["reserved"]) == (512 * MIB, round(7.79 * GIB), round(5.10 * GIB),
                                                                            round(5.62 * GIB)), n
    assert abs(n["free"] - 301.44 * MIB) < 1, n


REMAT = ("2025-06-01 10:02:03.118001: W external/xla/xla/service/hlo_rematerialization.cc:3005] Can't reduce memory use below "
         "-4.10GiB (-4402341478 bytes) by rematerialization; only reduced to 27.25GiB (29259609292 bytes), down from 27.90GiB "
         "(29957535129 bytes) originally\n")


def test_xla_rematerialization_warning_is_a_program_over_the_device():
    """XLA's rematerialization pass giving up: the program's peak read (the size it printed), runtime jax by its build path;
    the program's buffers (activations)."""
    cause, scores, ev = top(REMAT)
    assert (ev["runtime"], ev["kind"]) == ("jax", "xla.remat"), ev
    assert ev["numbers"] == {"required": round(27.25 * GIB)}, ev["numbers"]
    assert cause == "activations" and scores["activations"] >= 0.6, ev["causes"]
    _, _, ev = top(REMAT.replace("external/xla/xla/", "external/local_xla/xla/"))
    assert ev["runtime"] == "tensorflow", ev


def test_xla_allocation_failure_after_the_warning_leads():
    """The allocator's own refusal after the warning is the failure: it leads the incident (its request read)."""
    _, _, ev = top(REMAT + "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                   "29259609292 bytes.\n")
    assert (ev["kind"], ev["numbers"].get("requested")) == ("xla.oom", 29259609292), ev
