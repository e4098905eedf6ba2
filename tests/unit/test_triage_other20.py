"""Session 20 (tuneOther): `other` read from evidence the log itself shows, each beside the same log without it.
Lines modelled on the runtimes' own messages in public reports (paths rewritten): the BigScience tr1-13B training chronicle
(bigscience-workshop/bigscience, chronicles: an uncorrectable ECC error, then a requeued job's CUDA out-of-memory at
init on the same node); the NVIDIA driver's kernel log lines (NVRM: Xid, "GPU has fallen off the bus")."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage import guides

ECC = ("terminate called after throwing an instance of 'c10::Error'\n"
       "  what():  CUDA error: uncorrectable ECC error encountered\n"
       "Exception raised from create_event_internal at /opt/conda/conda-bld/pytorch/work/c10/cuda/CUDACachingAllocator.cpp:733 (most recent call first):\n")
BARRIER_OOM = ("> compiling and loading fused kernels ...\n"
               "Traceback (most recent call last):\n"
               '  File "/work/proj/code/Megatron-DeepSpeed/megatron/initialize.py", line 140, in _compile_dependencies\n'
               "    torch.distributed.barrier()\n"
               '  File "/work/proj/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 2420, in barrier\n'
               "    work = default_pg.barrier(opts=opts)\n"
               "RuntimeError: CUDA error: out of memory\n")


@pytest.mark.parametrize("fault", [
    ECC,
    "RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable ECC error encountered\n",
    "[ 8812.402311] NVRM: Xid (PCI:0000:3b:00): 48, pid=2214, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n",
    "[ 9102.118201] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n",
])
def test_a_gpu_hardware_fault_beside_a_bare_cuda_oom_is_the_card_not_a_shortage(fault):
    res, ev = last_event(fault + BARRIER_OOM)
    assert res["cause"] == "other" and not res["uncertain"], ev["causes"][:2]
    assert "hardware fault" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]
    assert [f["id"] for f in ev["guide"]["faqs"]] == ["gpu-hardware-fault"], ev["guide"]["faqs"]


def test_without_the_fault_line_the_bare_message_is_not_read_as_hardware():
    res, ev = last_event(BARRIER_OOM)
    assert not any("hardware fault" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
    assert ev["guide"]["faqs"] == [], ev["guide"]["faqs"]


def test_a_corrected_ecc_count_is_no_fault():
    # nvidia-smi's ECC table prints "Volatile Uncorr. ECC" with 0: not an uncorrectable error reported
    res, ev = last_event("| 0  Tesla V100-SXM2-32GB  On | 00000000:3B:00.0 Off | 0 |\n| N/A  Volatile Uncorr. ECC: 0 |\n" + BARRIER_OOM)
    assert not any("hardware fault" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_an_application_xid_is_no_hardware_fault():
    # Xid 31 is an MMU fault (an illegal address of the program), 13 a graphics engine exception: not the card failing
    res, ev = last_event("[ 8812.402311] NVRM: Xid (PCI:0000:3b:00): 31, pid=2214, name=python, Ch 00000010, intr 10000000. MMU Fault\n"
                         + BARRIER_OOM)
    assert not any("hardware fault" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]


def test_the_guide_exists():
    assert guides.load_all()["gpu-hardware-fault"]["title"].startswith("A GPU hardware fault")
