"""Task tri87 (issue 14): the stream executor's failed device allocations that are its BFC allocator backing off (each try 0.9
of the last) with no failure after them, read as other (bfc_backpedal.py), not as another program that took the card.

TensorFlow's BFCAllocator::Extend (tensorflow/core/common_runtime/bfc_allocator.cc; tsl's copy for XLA) retries a refused
region once with less, RoundedBytes(bytes * 0.9f) each time, until one fits or the size falls under the request; each refused
try is a "failed to allocate ... from device" line of cuda_driver.cc. Only when every try fails does the allocator's own
out-of-memory error follow. Inputs are written by hand in the runtime's own line format. The 15.00G / 13.50G pair is the one
TensorFlow 1.6 printed creating a session on a 16 GB Quadro P5000 in an eGPU (chiqunz/tensorflow_1_6_macOS_10_13_3_eGPU,
Tensorflow_1_6_installation_instruction.md, where the session was then created); the 3.77G chain is worked out by hand from
Extend's rule for a first region of 4046333952 bytes (float32 product, 256-byte round: 3641700352, 3277530112)."""
import pytest

from support.triage_event import read, top

SE = "E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to allocate {g} ({n} bytes) from device: CUDA_ERROR_OUT_OF_MEMORY\n"
EGPU = ("2018-03-14 13:07:11.053021: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1021] Creating TensorFlow device "
        "(/job:localhost/replica:0/task:0/device:GPU:0 with 15358 MB memory) -> physical GPU (device: 0, name: Quadro P5000)\n"
        "2018-03-14 13:07:11.053987: " + SE.format(g="15.00G", n=16104454912)
        + "2018-03-14 13:07:11.054173: " + SE.format(g="13.50G", n=14494009344)
        + "<tensorflow.python.client.session.Session object at 0x103cdba90>\n")
# glog's prefix, as TensorFlow prints every line
CHAIN = "".join(f"2019-05-02 09:14:0{i}.21034{i}: " + SE.format(g=g, n=n)
                for i, (g, n) in enumerate((("3.77G", 4046333952), ("3.39G", 3641700352), ("3.05G", 3277530112))))
EPOCH = "Epoch 1/10\n 32/60000 [..............................] - ETA: 41:21 - loss: 2.3214\n"
# the allocator's own out-of-memory error once every try failed (bfc_allocator.cc's warning, then the op's error)
BFC_OOM = ("W tensorflow/core/common_runtime/bfc_allocator.cc:267] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
           "2.00GiB.  Current allocation summary follows.\n"
           "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16384,32768] "
           "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n")


@pytest.mark.parametrize("text", [EGPU, CHAIN + EPOCH, CHAIN])
def test_backed_off_tries_read_as_other(text):
    # fails on the old rules: the stream executor's row read other-process (memory taken since the device was created)
    cause, conf, ev = top(text)
    assert cause == "other", conf
    assert "backed off" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["kind"] == "cuda.driver" and ev["runtime"] == "tensorflow"


def test_the_requests_stay_the_first_try():
    # the headline event's request is still the first refused region (what the old rules read too): nothing else moved
    _cause, _kind, runtime, device, numbers = read(EGPU)
    assert (runtime, device, numbers) == ("tensorflow", "cuda", {"requested": 16104454912})


@pytest.mark.parametrize("text", [
    SE.format(g="3.77G", n=4046333952),                                       # one line: the tries after it are not shown
    SE.format(g="3.77G", n=4046333952) + SE.format(g="1.00G", n=1073741824),  # two refusals, not 0.9 of each other
    SE.format(g="3.77G", n=4046333952) + SE.format(g="3.77G", n=4046333952),  # the same region twice: no backing off
])
def test_not_a_backpedal_keeps_the_stream_executor_reading(text):
    # guards (pass on the old rules too): no 0.9 chain, so the one-line reading stands
    cause, conf, _ev = top(text)
    assert cause == "other-process", conf


def test_a_failure_after_the_tries_is_not_read_as_backing_off():
    # guard: the allocator's own out-of-memory error follows, so the tries ended under the request; the chain is no reading
    _cause, _conf, ev = top(CHAIN + BFC_OOM)
    assert not any("backed off" in e for c in ev["causes"] for e in c["evidence"]), ev["causes"]
