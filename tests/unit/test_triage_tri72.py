"""Task tri72 (issue 14): vLLM V1's multiprocess executor says where its worker stood. Lines written from vLLM's own code
(vllm/v1/executor/multiproc_executor.py), none taken from a corpus file.

WorkerProc.__init__ runs the worker's init_device() and load_model() before the worker signals READY and starts its busy
loop; a failure there is logged "WorkerProc failed to start." and the executor raises "WorkerProc initialization failed".
Only the busy loop sends a failure back over the RPC queue: the worker logs "WorkerProc hit an exception." and the
executor's collective_rpc raises "Worker failed with error '<the worker's exception>', please check the stack trace above
for the root cause". So that message says the weights were loaded (the failure is the profile run, the KV cache, graph
capture or a step), and predicates.vllm_loading / vllm_loading_cut, which read a bare message as the weights still being
placed, no longer fire on it."""
import pytest

from support.triage_event import top

CMD = "$ vllm serve example-org/example-13b-instruct --tensor-parallel-size 2 --max-model-len 16384\n"
OOM = ("CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacity of 47.40 GiB of which 61.19 MiB is "
       "free. ...")


def test_a_worker_failure_over_the_rpc_queue_is_after_the_load():
    # fails on the old rules: the message alone under vLLM, the card full and a layer-sized request read as the weights
    # being placed (vllm_loading_cut, weights-exceed-vram over activations)
    text = CMD + f"RuntimeError: Worker failed with error '{OOM}', please check the stack trace above for the root cause\n"
    cause, conf, ev = top(text)
    assert ev["runtime"] == "vllm"
    assert cause == "activations", conf
    assert not any("before any line shows the weights loaded" in e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("line,want", [
    # the worker's side of the same failure: its busy loop logs "WorkerProc hit an exception." with the exception after it
    ("[multiproc_executor.py:671] WorkerProc hit an exception.", "activations"),
    # the converse: a failure in WorkerProc.__init__ (init_device, load_model) is logged so, and the bare message keeps
    # the loading reading
    ("[multiproc_executor.py:597] WorkerProc failed to start.", "weights-exceed-vram")])
def test_the_workers_own_line_says_whether_the_load_was_over(line, want):
    text = CMD + f"(VllmWorker TP0 pid=4121) ERROR 03-02 11:20:41 {line}\ntorch.OutOfMemoryError: {OOM}\n"
    cause, conf, ev = top(text)
    assert ev["runtime"] == "vllm"
    assert cause == want, conf
