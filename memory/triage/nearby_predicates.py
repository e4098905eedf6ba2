"""Predicates on facts kept by line (facts._kept): a log line speaks only for the failure beside it (a loader's header line,
a TensorRT tactic skip, a batch that ran, a training loop's per-step memory, Kaldi's allocator report), so each reads
the lines between the failure before and this one, or within a few lines of it. Re-exported by predicates.py, where rules
import them."""


def ggml_header_failed(x) -> bool:
    """(round 70) The failure came while llama.cpp's pre-GGUF loader read a model file's header: the last of its lines before
    the failure (and after the failure before it) is the file-open line "llama.cpp: loading model from", none of the header
    lines it prints once the header is read (facts "ggml_header")."""
    seen = [(n, what) for n, what in sorted(x.f["ggml_header"].items()) if (x.after or 0) < n < (x.line or 0)]
    return bool(seen) and seen[-1][1] == "open"


TRT_SKIP_SPAN = 16      # lines either side of a TensorRT failure within which its builder's tactic-skip warning speaks for it


def trt_tactic_skip_near(x) -> bool:
    """(review28) TensorRT's builder skipped a tactic for want of workspace beside this failure: a skip warning (facts
    "trt_tactic_skip") after the failure before it and within TRT_SKIP_SPAN lines of this one (DeepStream-Yolo#366 prints
    it three lines after the Error Code 2 lines). A skip earlier in the log, a build that went on, says nothing of a later
    failure."""
    line = x.line or 0
    return any((x.after or 0) < n and abs(n - line) <= TRT_SKIP_SPAN for n in x.f["trt_tactic_skip"])


def batch_ran_before(x):
    """(round 118; rev9 S1) The batch size the program's own sweep said ran before this failure (facts "batch_ran", kept by
    line): the last such line before the failure's line, else None; a retry's line after the failure (a smaller batch that
    then ran) says nothing of what ran before it."""
    seen = [v for n, v in sorted(x.f.get("batch_ran", {}).items()) if n < (x.line or 0)]
    return seen[-1] if seen else None


STEP_MEM_PRINTS = 5       # (tri65) a training loop's per-step allocated figures read before a failure, at least


def step_mem_grew(x):
    """(tri65) (first, last, prints) where a training loop's own per-step lines (facts "step_mem", kept by line) printed the
    allocated memory at least STEP_MEM_PRINTS times before this failure, never lower than the print before, the last at least
    twice the first and 1 GiB above it; else None. Every step of a loop does the same work, so what stays allocated between
    steps (weights, gradients, optimizer state) is flat once the first steps have made the optimizer's state; a figure that
    rises at every print is memory kept from step to step (PyTorch's FAQ: "Don't accumulate history across your training
    loop"). A peak figure (max_memory_allocated) rises only when a step needs more than any before, not at every print."""
    seen = [v for n, v in sorted(x.f.get("step_mem", {}).items()) if n < (x.line or 0) and v]
    if len(seen) < STEP_MEM_PRINTS or any(b < a for a, b in zip(seen, seen[1:])):
        return None
    return (seen[0], seen[-1], len(seen)) if seen[-1] >= 2 * seen[0] and seen[-1] - seen[0] >= 1 << 30 else None


KALDI_REPORT_WITHIN = 3   # (tri68) lines between Kaldi's allocator report and its refusal (PrintMemoryUsage runs just before KALDI_ERR)


def kaldi_held_outside(x):
    """(tri68) Kaldi's allocator refused a new region on a card it shares (its message names sharing the GPU: the non-exclusive
    branch of cu-allocator.cc AllocateNewRegion) and its report just before (facts "kaldi_held", PrintMemoryUsage) shows the card's
    used memory (cuMemGetInfo's total less free) far beyond what this process's regions hold: (held, the difference), or None. Every
    CuMatrix allocation goes through those regions (memory caching is on by default), so the rest of the card past this process's
    context is other processes'. Read where it is at least half the card and at least the refused region."""
    if x.kind != "cuda.driver" or x.ev.get("form") != "kaldi_region" or "sharing the GPU" not in (x.text or ""):
        return None
    seen = [v for n, v in sorted(x.f.get("kaldi_held", {}).items()) if x.line - KALDI_REPORT_WITHIN <= n < x.line]
    if not seen:
        return None
    held, outside = seen[-1]["held"], seen[-1]["used"] - seen[-1]["held"]
    return (held, outside) if outside >= 0.5 * seen[-1]["total"] and outside >= x.req else None
