"""Task tri67: MLX's per-buffer refusal read by docs/triage-causes.md R5 (rules_other.mlx_cap_within_memory). MLX's Metal
allocator refuses a buffer over MTLDevice.maxBufferLength ("Attempting to allocate N bytes which is greater than the maximum
allowed buffer size of M bytes") before it asks Metal for memory: a per-buffer cap, not the machine's memory. R5 labels such a
refusal other while the machine's memory would hold the buffer, and the mechanism when the buffer is over it. The log prints
the cap only; the cap is at most three fifths of the memory of every Mac whose memory a thread names, so a buffer up to 1.5
times the cap reads other, and a larger one stays a working array too large (activations). Lines made up in MLX's layout,
sizes by hand (not a corpus file)."""
import pytest

from gpu_garden.memory.triage import engine

CAP = 24 * 1024 ** 3                      # a made-up cap of 24 GiB (25769803776 bytes)


def _line(req, cap=CAP, prefix="RuntimeError: [metal::malloc] "):
    tail = f" of {cap} bytes." if cap else " ..."
    return f"{prefix}Attempting to allocate {req} bytes which is greater than the maximum allowed buffer size{tail}\n"


def _read(text):
    res = engine.triage_text(text)
    ev = res["events"][res.get("headline", -1)]
    return res["cause"], [c["id"] for c in ev["causes"][:2]], ev["kind"], ev["numbers"]


@pytest.mark.parametrize("req", [
    CAP + 1,                              # one byte over the cap
    30 * 1024 ** 3,                       # 1.25 times the cap
    36 * 1024 ** 3,                       # 1.5 times the cap, the bound itself
])
def test_a_buffer_just_over_the_cap_is_the_platform_limit(req):
    # activations before the row (rules.py's MLX row alone); the working-array reading stays second
    cause, top2, kind, nums = _read(_line(req))
    assert (cause, top2, kind) == ("other", ["other", "activations"], "mlx.buffer_limit")
    assert nums == {"requested": req, "max_allowed": CAP}


def test_the_form_without_its_prefix_reads_the_same():
    line = _line(30 * 1024 ** 3, prefix="libc++abi: terminating due to uncaught exception of type std::runtime_error: ")
    assert _read(line)[0] == "other"


@pytest.mark.parametrize("req", [
    36 * 1024 ** 3 + 1,                   # just past 1.5 times the cap: may be over the machine's memory
    48 * 1024 ** 3,                       # twice the cap
    200 * 1024 ** 3,                      # an image or context far past any Mac's memory
])
def test_a_buffer_far_over_the_cap_stays_a_working_array_too_large(req):
    assert _read(_line(req))[0] == "activations"


def test_no_cap_printed_reads_as_before():
    # a quote cut after the request ("... "): the cap unknown, so nothing says the machine would hold it
    assert _read(_line(CAP + 1, cap=None))[0] == "activations"


def test_a_wrapped_size_stays_a_size_computed_wrong():
    assert _read(_line(2 ** 64 - 4 * 1024 ** 3))[0] == "other"
