"""Task tri80 (issue 14): a ComfyUI loader that failed in the next prompt after a finished one, read as memory of the
earlier run not returned (leak). Inputs written by hand in ComfyUI's and a custom loader's own line forms; none taken
from a corpus file.

ComfyUI keeps each node's object from prompt to prompt (execution.py: caches.objects, keyed by the node's id), so a
loader that keeps its model on itself still holds the previous copy while it loads a new one. ComfyUI's own loader
("Requested to load", model_management.load_models_gpu) unloads other models first and is not read this way
(reload_leak.reloaded_after_run)."""
import pytest

from support.triage_event import top

DONE = "Prompt executed in 41.27 seconds\n"
GOT = "got prompt\n"
CUSTOM_LOAD = ("GPU 0 (NVIDIA GeForce RTX 3090) Memory: 24576.0 MiB\n"
               "[2025-05-02 21:14:09.112] [info] Initializing QuantizedFluxModel on device 0\n"
               "[2025-05-02 21:14:09.140] [info] Loading weights from /srv/models/flux-int4/transformer_blocks.safetensors\n")
MANAGED_LOAD = "Requested to load Flux\n"
FAIL = ("!!! Exception during processing !!! CUDA error: out of memory\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
        "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
        "RuntimeError: CUDA error: out of memory\n")
SAMPLING = "  40%|████      | 8/20 [00:05<00:07,  1.60it/s]\n"
WHY = "ComfyUI keeps a node's object between prompts"


def _says(ev, cause, words):
    return any(words in e for c in ev["causes"] if c["id"] == cause for e in c["evidence"])


@pytest.mark.parametrize("runs", [1, 3])
def test_a_loader_failing_in_the_prompt_after_a_finished_one_reads_leak(runs):
    # fails on the old rules: the load row read weights-exceed-vram first, the success row (1.3) only second
    cause, conf, ev = top((DONE + GOT) * runs + CUSTOM_LOAD + FAIL)
    assert cause == "leak" and _says(ev, "leak", WHY)
    assert "weights-exceed-vram" in conf          # two copies of the weights at once: still the runner-up


def test_the_same_load_failing_in_the_first_prompt_stays_weights():
    # no finished prompt before it: nothing of an earlier run can be on the card
    cause, _conf, ev = top(GOT + CUSTOM_LOAD + FAIL)
    assert cause == "weights-exceed-vram" and not _says(ev, "leak", WHY)


def test_comfyuis_own_loader_is_not_read_so():
    # load_models_gpu unloads other models before it loads: the new row stands aside
    _cause, _conf, ev = top(DONE + GOT + MANAGED_LOAD + CUSTOM_LOAD + FAIL)
    assert not _says(ev, "leak", WHY)


def test_a_failure_while_sampling_after_a_finished_prompt_is_not_read_so():
    # the failure is not a load: the row needs the load phase
    _cause, _conf, ev = top(DONE + GOT + CUSTOM_LOAD + "Model loaded\n" + SAMPLING + FAIL)
    assert not _says(ev, "leak", WHY)
