"""Triage after batches 105-106 (round 57). Lines written from the libraries' own sources: CatBoost's stack-like GPU memory
pool (catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h, TOutOfMemoryError; catboost/catboost#302's form), Faiss's
GPU allocations (gpu/utils/MemorySpace.cpp before 1.7, StandardGpuResources.cpp after; facebookresearch/faiss#648 and
#1031's forms), Gunrock's GRError on an Array1D allocation (gunrock/util/error_utils.cu, array_utils.cuh; gunrock/gunrock#194's
form) and PyTorch's message listing several processes (huggingface/trl#5207's form). Paths, sizes, pids, array names and
line numbers made up; expected values by hand."""
from support.triage_event import top

MIB = 1 << 20
GIB = 1 << 30

CATBOOST = ("catboost =  1.2.5\n"
            "Application terminated with error: (NCudaLib::TOutOfMemoryError) catboost/cuda/cuda_lib/memory_pool/"
            "stack_like_memory_pool.h:301: Error: Out of memory. Requested 2048 MB; Free 1536.5 MB\n"
            "Aborted (core dumped)\n")
CATBOOST_OLD = ("Application terminated with error: (NCudaLib::TOutOfMemoryError) catboost/cuda/cuda_lib/memory_pool/"
                "stack_like_memory_pool.h:294: Error: Out of memory. Requested 512.25; Free 300.5\n")


def test_catboost_pool_is_catboost_with_both_figures_in_mib():
    """CatBoost's pool: runtime catboost, device cuda, the block requested and the pool's free figure in its MB (MiB), with
    or without the unit (0.7 prints none); the data set on the card (activations), with CatBoost's own guide."""
    for text, req, free in ((CATBOOST, 2048 * MIB, int(1536.5 * MIB)), (CATBOOST_OLD, int(512.25 * MIB), int(300.5 * MIB))):
        cause, scores, ev = top(text)
        assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("catboost", "cuda", "catboost.pool"), ev
        assert ev["numbers"] == {"requested": req, "free": free}, ev["numbers"]
        assert cause == "activations" and scores["activations"] >= 0.7, ev["causes"]
        assert any("gpu_ram_part" in e for e in ev["causes"][0]["evidence"]), ev["causes"][0]
        assert ev["guide"]["id"] == "catboost", ev["guide"]["id"]


def test_out_of_memory_requested_free_outside_catboost_is_not_catboost():
    """The same words from any other program (no NCudaLib, no CatBoost memory pool file) are not CatBoost's."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("allocator: Error: Out of memory. Requested 2048 MB; Free 1536 MB\n")
    assert not res["found"] or res["events"][-1]["runtime"] != "catboost", res


FAISS_SMALL = ("RuntimeError: Error in void faiss::gpu::allocMemorySpaceV(faiss::gpu::MemorySpace, void**, size_t) at "
               "gpu/utils/MemorySpace.cpp:26: Error: 'err == cudaSuccess' failed: failed to cudaMalloc 125829120 bytes "
               "(error 2 out of memory)\n")
FAISS_ASSERT = ("Faiss assertion 'cudaMalloc(p, size) == cudaSuccess' failed in void faiss::gpu::allocMemorySpace("
                "faiss::gpu::MemorySpace, void**, size_t) at utils/MemorySpace.cpp:20; details: Failed to cudaMalloc "
                "8000000000 bytes\nAborted\n")
FAISS_17 = ("RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const faiss::gpu::"
            "AllocRequest&) at faiss/gpu/StandardGpuResources.cpp:452: Error: 'err == cudaSuccess' failed: StandardGpuResources: "
            "alloc fail type FlatData dev 1 space Device stream 0x5581c2a0 size 3221225472 bytes (cudaMalloc error out of "
            "memory [2])\n")
FAISS_TEMP = ("RuntimeError: Error in virtual void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const faiss::gpu::"
              "AllocRequest&) at faiss/gpu/StandardGpuResources.cpp:452: Error: 'err == cudaSuccess' failed: StandardGpuResources: "
              "alloc fail type TemporaryMemoryOverflow dev 0 space Temporary stream 0x7f20 size 268435456 bytes (cudaMalloc "
              "error out of memory [2])\n")


def test_faiss_small_device_request_reads_its_scratch_reservation():
    """A Faiss device allocation under the smallest scratch reservation (512 MiB) fails: fragmentation (the memory held aside
    would hold it), the index's data second; runtime faiss, the size read."""
    cause, scores, ev = top(FAISS_SMALL)
    assert (ev["runtime"], ev["device_kind"], ev["kind"], ev["form"]) == ("faiss", "cuda", "faiss.alloc", "device"), ev
    assert ev["numbers"] == {"requested": 125829120}, ev["numbers"]
    assert [c["id"] for c in ev["causes"][:2]] == ["fragmentation", "activations"], ev["causes"]
    assert any("noTempMemory" in e for e in ev["causes"][0]["evidence"]), ev["causes"][0]
    assert ev["guide"]["id"] == "faiss", ev["guide"]["id"]


def test_faiss_large_device_request_is_the_data():
    """8 GB in the assertion form (Faiss before 1.4) and 3 GiB in StandardGpuResources's (1.7+): at or over the scratch
    reservation, the index's stored data (activations); no fragmentation."""
    for text, req in ((FAISS_ASSERT, 8000000000), (FAISS_17, 3 * GIB)):
        cause, scores, ev = top(text)
        assert (ev["runtime"], ev["kind"], ev["form"]) == ("faiss", "faiss.alloc", "device"), ev
        assert ev["numbers"]["requested"] == req, ev["numbers"]
        assert cause == "activations" and scores["activations"] >= 0.7, ev["causes"]
        assert "fragmentation" not in scores, scores


def test_faiss_scratch_overflow_is_not_the_reservation():
    """A temporary-space request (the scratch overflowed into cudaMalloc) is not read as the scratch held aside: the search's
    working memory (activations)."""
    cause, scores, ev = top(FAISS_TEMP)
    assert (ev["runtime"], ev["form"]) == ("faiss", "temp"), ev
    assert cause == "activations" and "fragmentation" not in scores, ev["causes"]


def test_faiss_words_need_faiss_and_error_2():
    """"failed to cudaMalloc N bytes" with no Faiss in the line is any program's; Faiss's line with another CUDA error (700,
    an illegal address) is no shortage."""
    from gpu_garden.memory.triage import engine
    res = engine.triage_text("worker: failed to cudaMalloc 125829120 bytes (error 2 out of memory)\n")
    assert not res["found"] or res["events"][-1]["runtime"] != "faiss", res
    res = engine.triage_text("RuntimeError: Error in void faiss::gpu::allocMemorySpaceV(faiss::gpu::MemorySpace, void**, "
                             "size_t) at gpu/utils/MemorySpace.cpp:26: failed to cudaMalloc 4096 bytes (error 700 an illegal "
                             "memory access was encountered)\n")
    assert not res["found"] or res["events"][-1]["runtime"] != "faiss", res


GUNROCK = "[../../gunrock/util/array_utils.cuh, 211 @ gpu 1] frontier_queue[] cudaMalloc failed (CUDA error 2: out of memory)\n"


def test_gunrock_array_allocation_is_gunrock():
    """Gunrock's GRError on an Array1D's cudaMalloc: runtime gunrock (not PyTorch's bare reading), the program's own data
    buffer (activations), Gunrock's guide (its queue sizing factors)."""
    cause, scores, ev = top(GUNROCK)
    assert (ev["runtime"], ev["device_kind"]) == ("gunrock", "cuda"), ev
    assert cause == "activations", ev["causes"]
    assert ev["guide"]["id"] == "gunrock", ev["guide"]["id"]


def test_gunrock_other_cuda_errors_are_not_out_of_memory():
    """GRError prints every failed CUDA call in that form; only error 2 (out of memory) on an allocation is read (the
    recogniser itself, since the line gate already skips a line without out-of-memory words)."""
    from gpu_garden.memory.triage.native_runtimes import gunrock_alloc
    assert gunrock_alloc("[../../gunrock/util/array_utils.cuh, 211 @ gpu 1] frontier_queue[] cudaMalloc failed "
                         "(CUDA error 46: all CUDA-capable devices are busy or unavailable)") is None
    assert gunrock_alloc(GUNROCK.strip())["runtime"] == "gunrock"


# three small co-tenants (pytest-xdist workers) and this process, listed by its pid with no "this process" fragment
XDIST = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.55 GiB of "
         "which 2.10 GiB is free. Process 4101 has 610.00 MiB memory in use. Process 4102 has 18.40 GiB memory in use. Process "
         "4103 has 410.00 MiB memory in use. Process 4104 has 500.00 MiB memory in use. Of the allocated memory 17.90 GiB is "
         "allocated by PyTorch, and 150.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
         "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


def test_the_listed_process_holding_pytorchs_reserved_memory_is_this_one():
    """Of several listed processes, the one entry between PyTorch's reserved figure (18.05 GiB) and it plus a context is this
    process: the other programs hold 1.49 GiB, not 19.89 GiB, and that does not make them the cause."""
    cause, scores, ev = top(XDIST)
    n = ev["numbers"]
    assert n["this_process"] == round(18.40 * GIB), n
    assert n["other_processes"] == (610 + 410 + 500) * MIB, n
    assert cause == "activations", ev["causes"]
    assert "other-process" not in scores, scores


def test_two_entries_that_could_be_this_process_stay_other_programs():
    """Two listed processes each within a context of PyTorch's reserved figure: which one is this process is not known, so
    every entry stays another program's (the reading before round 57)."""
    text = XDIST.replace("Process 4101 has 610.00 MiB", "Process 4101 has 18.30 GiB")
    _, _, ev = top(text)
    n = ev["numbers"]
    assert "this_process" not in n, n
    assert n["other_processes"] == round(18.30 * GIB) + round(18.40 * GIB) + (410 + 500) * MIB, n
