"""(task tri85) PyTorch's out-of-memory words alone on a line, "CUDA out of memory" with nothing around them.

PyTorch's caching allocator opens its message with "CUDA out of memory." (c10/cuda/CUDACachingAllocator.cpp; "HIP out of
memory." on a ROCm build); torch_readers reads it, and _torch_bare its first sentence alone, full stop included. Tools that
run a PyTorch job and relay its failure often keep only the words: memory helpers match the exception's text on "CUDA out
of memory" (toma's torch_cuda_memory.py; PyTorch Lightning's is_oom_error tests for "CUDA" and "out of memory"), and job
wrappers that catch torch.cuda.OutOfMemoryError write the words to stderr on their own. The same words after an
exception type or an error tag ("RuntimeError: CUDA out of memory", "[ERROR] CUDA out of memory") are read as any runtime's
error line (parse._generic: generic.oom, no figure, the log's context decides the cause); alone on their line they were not
read at all, so a log that shows only them had no answer.

Read here: the words as PyTorch writes them ending a line, alone or after one error tag or an exception-like name (not a
log level's tag, in any case; not after words: review rev65f), then only spaces or "!", read as the same words after "RuntimeError:" are (generic.oom). Capitals a wrapper may give them ("CUDA Out
of Memory") are not read: "Out of Memory" is no word the line scan looks for (scan_words.ERROR_WORDS), and adding it would
open every such line to every recogniser. Not as PyTorch's cut first sentence (torch.cuda, form partial): on the even half of the unseen corpus that
reading moved a log whose words follow "RuntimeError:" and whose cause is a version regression from other to activations
(task tri85's write-up). Not read here either: the words followed by more words ("CUDA out of memory occurred when warming
up sampler", vLLM's own sentence, read by its row), a sentence before them (prose), and retry or warning lines
(error_patterns.GENERIC_NOT). PyTorch's exception type before them keeps its own reading (torch.oom_type, tried first)."""
import re

from .error_patterns import GENERIC_NOT
from .prefilter import _gate

# alone, or after one error tag ("[ERROR] ") or an exception-like name ("OutOfMemoryError: "): not after words ("Skipping
# batch 12: ", a logger's "DEBUG:oom_guard:", a test's name), which mention the words in a run that goes on (rev65f #5)
BARE_WORDS = re.compile(r"\A\s*(?:\[([^\]]{1,40})\]\s*|[A-Za-z_][\w.]{0,80}(?:Error|Exception):\s*)?"
                        r"(?:CUDA|HIP) out of memory[\s!]*\Z")
LEVEL_TAG = re.compile(r"(?i)warn(?:ing)?|info|debug|trace|notice")  # a log level's tag is no failure's (any case)
BARE_WORDS_KEYS = ("CUDA out of memory", "HIP out of memory")


@_gate(*BARE_WORDS_KEYS)
def _bare_words(line):
    """(tri85) "CUDA out of memory" ending a line with nothing but an error tag before it (BARE_WORDS): parse._generic's
    reading, any runtime's error line with no figure."""
    m = BARE_WORDS.search(line) if any(k in line for k in BARE_WORDS_KEYS) else None
    if not m or GENERIC_NOT.search(line) or (m.group(1) and LEVEL_TAG.fullmatch(m.group(1))):
        return None
    return {"kind": "generic.oom", "device_kind": None, "numbers": {}, "runtime": None, "complete": True}
