"""Task tri85 (issue 14): PyTorch's out-of-memory words alone on a line ("CUDA out of memory", nothing around them) read as
the same words after "RuntimeError:" are: any runtime's error line with no figure (generic.oom). Inputs written by hand;
none taken from a corpus file.

Tools that run a PyTorch job often relay only the words: a wrapper that catches torch.cuda.OutOfMemoryError writes them to
stderr, a job log keeps "CUDA out of memory" as its last line. Before this, the words alone were not read at
all (no answer), while "RuntimeError: CUDA out of memory" was read (bare_words.BARE_WORDS)."""
import pytest

from support.triage_event import kinds, read


def _found(text):
    from gpu_garden.memory.triage import engine
    return engine.triage_text(text)["found"]


LEAD = ("Epoch 3/20: 41%|####      | 412/1000 [02:11<03:07, 3.14it/s]\n")


@pytest.mark.parametrize("line", [
    "CUDA out of memory",
    "  CUDA out of memory  ",
    "CUDA out of memory!",
    "HIP out of memory",
])
def test_the_bare_words_are_read_as_after_runtime_error(line):
    # fails on the old rules: the words alone were not read (triage found nothing)
    text = LEAD + line + "\n"
    assert _found(text)
    assert kinds(text) == ["generic.oom"]
    cause, kind, runtime, device, numbers = read(text)
    assert (kind, numbers) == ("generic.oom", {})
    # the same answer the words get after an exception type (read so before this task too)
    assert read(LEAD + "RuntimeError: CUDA out of memory\n")[0] == cause


def test_a_wrapper_tag_before_the_words_and_the_controls():
    # fails on the old rules: "[worker 3] CUDA out of memory" (a wrapper's tag in brackets) was not read
    assert kinds("[worker 3] CUDA out of memory\n") == ["generic.oom"]
    # controls (hold on the old rules too): PyTorch's exception type keeps its own reading; its first sentence with the
    # full stop stays PyTorch's cut message; vLLM's sentence that goes on after the words stays vLLM's
    assert kinds("torch.cuda.OutOfMemoryError: CUDA out of memory\n") == ["torch.oom_type"]
    assert kinds("CUDA out of memory.\n") == ["torch.cuda"]
    assert kinds("CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please try lowering "
                 "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n") == ["vllm.warmup"]


@pytest.mark.parametrize("line", [
    "I keep getting CUDA out of memory",            # prose: a sentence before the words
    "Warning: CUDA out of memory",                  # a warning, not the failure (error_patterns.GENERIC_NOT)
    "CUDA out of memory, retrying with a smaller batch",
])
def test_prose_and_warnings_are_not_read(line):
    # control (holds on the old rules too)
    assert not _found(LEAD + line + "\n")
