"""Task tri71 (issue 14): PyTorch's "X allocated in private pools (e.g., CUDA Graphs)". Lines written from PyTorch's own
message format (CUDACachingAllocator.cpp's out-of-memory branch), none taken from a corpus file.

The figure is the sum of the FREE blocks of every private pool (a CUDA graph's capture pool, or a torch.cuda.MemPool): memory
reserved in those pools' segments and not in use, which the caching allocator never gives to an ordinary request. Where it
is at least the request, the ordinary cache's slack is under the request and the log names no program pool of its own,
graph capture's pools held idle what the request needed (rules_capture.graph_pools_held, graph-capture)."""
import pytest

from support.triage_event import top

GiB, MiB = 1 << 30, 1 << 20
HEAD = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 79.10 GiB of "
        "which {free} is free. Including non-PyTorch memory, this process has 78.60 GiB memory in use. ")
TAIL = ("Of the allocated memory {alloc} is allocated by PyTorch, with {pools} allocated in private pools (e.g., CUDA Graphs), "
        "and {ru} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


def msg(req="1.50 GiB", free="500.00 MiB", alloc="77.00 GiB", pools="4.00 GiB", ru="300.00 MiB"):
    return HEAD.format(req=req, free=free) + TAIL.format(alloc=alloc, pools=pools, ru=ru)


def test_idle_private_pools_of_the_request_read_as_graph_capture():
    # fails on the old rules: a full card and a 1.5 GiB request read as activations / weights-exceed-vram
    cause, conf, ev = top(msg())
    assert cause == "graph-capture", conf
    assert ev["numbers"]["private_pools"] == 4 * GiB
    assert any("private pools" in e for c in ev["causes"] if c["id"] == "graph-capture" for e in c["evidence"])


def test_the_cut_form_with_the_pools_alone():
    # a quote that keeps the request, then an ellipsis and the pools' figure (error_patterns.POOLS_CUT)
    cause, conf, _ = top("Tried to allocate 1.44 GiB. GPU 0 has a total capacity of 184.31 GiB of which 1.43 GiB is free "
                         "\u2026 4.95 GiB allocated in private pools (e.g., CUDA Graphs).\n")
    assert cause == "graph-capture", conf


def test_pools_under_the_request_say_nothing():
    # the pools' idle memory would not have served the request: not this row
    cause, conf, _ = top(msg(req="1.50 GiB", pools="1.00 GiB"))
    assert "graph-capture" not in conf, conf


def test_a_pool_of_a_few_mib_is_not_read():
    # a graph's leftovers under 64 MiB, even over a tiny request (the floor slack_fits keeps too)
    cause, conf, _ = top(msg(req="20.00 MiB", free="10.00 MiB", pools="40.00 MiB", ru="5.00 MiB"))
    assert "graph-capture" not in conf, conf


def test_the_ordinary_caches_slack_over_the_request_stays_fragmentation():
    # reserved-but-unallocated of 30 GiB would have served a 1.5 GiB request: fragmentation's reading, not the pools'
    cause, conf, _ = top(msg(alloc="47.00 GiB", ru="30.00 GiB"))
    assert cause == "fragmentation", conf
    assert "graph-capture" not in conf, conf


def test_a_programs_own_pool_named_in_the_log_is_that_pools():
    # vLLM's sleep mode puts its allocations in a MemPool of its cumem allocator: rules_other's own-pool row (other) reads
    # it, beside the full card's rows (how they rank is that row's matter, not this one's)
    cause, conf, _ = top("Enabling cumem allocator because sleep mode requires it.\n" + msg())
    assert "other" in conf, conf
    assert "graph-capture" not in conf, conf


def test_a_capture_in_the_log_keeps_its_own_row():
    # the capture line's row (4.0) reads it; this row stands aside, so the confidence is the capture row's alone
    with_capture = top("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 40%\n" + msg())
    assert with_capture[0] == "graph-capture"
    assert with_capture[2]["causes"][0]["evidence"][0].startswith("the failure came while CUDA graphs were captured") or \
        with_capture[2]["causes"][0]["evidence"][0].startswith("vLLM was capturing")
    assert not any("idle in PyTorch's private pools" in e for e in with_capture[2]["causes"][0]["evidence"])


@pytest.mark.parametrize("head", ["HIP out of memory", "CUDA out of memory"])
def test_hip_graphs_wording_too(head):
    text = msg().replace("CUDA out of memory", head)
    if head.startswith("HIP"):
        text = text.replace("(e.g., CUDA Graphs)", "(e.g., HIP Graphs)")
    assert top(text)[0] == "graph-capture"
