"""Review rev65f of task tri85 (issue 14): the bare-words reader answered on lines that mention PyTorch's out-of-memory
words in a run that goes on (a progress message, a logger's debug line, a lower-case level tag, a test's name). The words
are now read alone, or after one error tag or an exception-like name, never after a level tag in any case. Inputs written
by hand (the reviewer's reproduction, /tmp/rev65f/src/tests/unit/test_rev65f_bare.py)."""
import pytest

from support.triage_event import kinds

LEAD = "Epoch 3/20: 41%|####      | 412/1000 [02:11<03:07, 3.14it/s]\n"
TAIL = "Epoch 3/20: 100%|##########| 1000/1000 [05:11<00:00, 3.14it/s]\nTraining finished.\n"


@pytest.mark.parametrize("line", [
    "The most common error on 8 GB cards is: CUDA out of memory",   # prose with a colon (not read before either)
    "Skipping batch 12: CUDA out of memory",                          # a progress message, the run went on
    "DEBUG:oom_guard:CUDA out of memory",                             # a logger's debug line
    "[warn] CUDA out of memory",                                      # a level tag in lower case
    "test_oom_message: CUDA out of memory",                           # a test's name
])
def test_words_mentioned_in_a_run_that_goes_on_are_not_a_failure(line):
    assert kinds(LEAD + line + "\n" + TAIL) == []


@pytest.mark.parametrize("line", ["CUDA out of memory", "[worker 3] CUDA out of memory", "[ERROR] CUDA out of memory",
                                  "OutOfMemoryError: CUDA out of memory"])
def test_the_words_alone_or_after_an_error_tag_are_still_read(line):
    assert kinds(line + "\n") != []
