"""Round 81 (batches 239, 242-246), written from the runtime's own message format:
- InfiniTAM (victorprad/InfiniTAM) checks its CUDA calls with ORUtils' ORcudaSafeCall (ORUtils/CUDADefines.h:
  "<file>(<line>) : cudaSafeCall() Runtime API error : <cudaGetErrorString>."), and the file is one of its own sources,
  under its two libraries' folders ORUtils/ and ITMLib/ (runtime_markers.RUNTIME_MARKERS): the runtime is InfiniTAM's.
The paths and line numbers are made up in the sources' layout; the expected values are worked out by hand from the lines."""

from gpu_garden.memory.triage import engine as triage
from support.triage_event import last_event as _head  # (result, the headline event)
from support.regex_time import cpu_limit, cpu_now


def test_orutils_memory_block_check_names_infinitam():
    res, ev = _head("/home/user/InfiniTAM/ITMLib/Objects/Scene/../../../ORUtils/MemoryBlock.h(240) : cudaSafeCall() "
                    "Runtime API error : out of memory.\n")
    assert (ev["runtime"], ev["device_kind"]) == ("infinitam", "cuda")


def test_itmlib_engine_check_on_windows_names_infinitam():
    # a Windows build prints __FILE__ with backslashes; the engine's own source under ITMLib\
    res, ev = _head("C:\\src\\InfiniTAM\\ITMLib\\Engines\\Reconstruction\\CUDA\\ITMSceneReconstructionEngine_CUDA.tcu(90) : "
                    "cudaSafeCall() Runtime API error : out of memory.\n")
    assert (ev["runtime"], ev["device_kind"]) == ("infinitam", "cuda")


def test_the_same_check_in_another_program_is_not_infinitam():
    # the CUDA SDK's cutil helper that ORUtils copied prints the same words from any program's sources
    res, ev = _head("/src/kfusion/kernels.cu(88) : cudaSafeCall() Runtime API error : out of memory.\n")
    assert ev["runtime"] != "infinitam"


def test_the_library_named_in_prose_is_not_a_marker():
    # "ORUtils" or "ITMLib" as a word, not a folder of a source path
    res, ev = _head("built ITMLib and ORUtils without errors\nRuntimeError: CUDA out of memory.\n")
    assert ev["runtime"] != "infinitam"


def test_marker_stays_linear():
    for line in ("ORUtils" * 20000 + " out of memory", "ITMLib" * 20000 + "/ out of memory"):
        t = cpu_now()
        triage.triage_text(line + "\n")
        assert cpu_now() - t < cpu_limit(5.0)
