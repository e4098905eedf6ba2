"""(fix67b, aud67b #4) A wrapper's runs in one ComfyUI log, read from its own lines (issue 14, class 6): memory a run left
allocated that grew from run to run with the block swap placing the same blocks each time.

kijai's ComfyUI-WanVideoWrapper prints, for each sampling run:
  - its block swap summary (wanvideo/modules/model.py, block_swap): "Transformer blocks on {offload_device}: X.XXMB" and
    "Transformer blocks on {main_device}: X.XXMB" (get_module_memory_mb: bytes / 1024**2), then "Seq len: N";
  - after the run, utils.print_memory: "Allocated memory: memory=X.XXX GB" (torch.cuda.memory_allocated / 1024**3), then
    the max allocated and max reserved figures (later versions print only those two, "[Sampling] Max allocated memory").
With the same summary the same blocks sit on the card after each run, so what a run leaves allocated should not move;
a figure that rises from run to run is memory the runs did not return (issue #983: VRAM not returned after the set-LoRA
node until ComfyUI restarts). A peak figure says nothing of that: a longer run peaks higher.

facts "wrapper_run" (kept by line, the head's stream only): ("summary", main-device MiB), ("seq", N), ("alloc", bytes),
("prompt", None) at ComfyUI's "got prompt" (execution.py's prompt worker, one a prompt), ("start", None) at its start-up
"Total VRAM N MB, total RAM M MB" (the line scan.py counts as a server start): ComfyUI-Manager's restart ("Restarting...
[Legacy Mode]", os.execv in the same console) frees what the runs before held, so their figures say nothing of this process."""
import re

GiB = 1 << 30

FACT = ("wrapper_run", re.compile(r"\bTransformer blocks on (?!cpu\b)(\S{1,24}): (\d{1,7}(?:\.\d{1,4})?)MB\b|"
                                  r"\bSeq len: (\d{1,9})\b|\bAllocated memory: memory=(\d{1,5}\.\d{1,6}) GB\b|"
                                  r"\b(got prompt)\b|\b(Total VRAM) \d{1,9} MB, total RAM\b"))
FACT_WORDS = ("Transformer blocks on ", "Seq len: ", "Allocated memory: memory=", "got prompt", "Total VRAM ")
KEPT = 64         # entries kept (three or four a run)
GREW = 1 * GiB    # the least rise across runs read: a smaller one can be caches (cuDNN workspaces, cached embeds)


def read(s, f, m, text, lineno, window):
    """facts.py's handler: one of the wrapper's per-run lines, by line (not from the window: no line of its own)."""
    if window:
        return
    d = f.setdefault("wrapper_run", {})
    if m.group(2):
        d[lineno] = ("summary", (m.group(1), float(m.group(2))))
    elif m.group(3):
        d[lineno] = ("seq", int(m.group(3)))
    elif m.group(5):
        if d and d[next(reversed(d))][0] == "prompt":
            return      # (fix67o, rev67j #2) cached prompts print no wrapper line: one "prompt" stands for them all
        d[lineno] = ("prompt", None)
    elif m.group(6):
        d[lineno] = ("start", None)
    else:
        d[lineno] = ("alloc", int(float(m.group(4)) * GiB))
    while len(d) > KEPT:
        del d[next(iter(d))]


def _runs(x):
    """The runs before this failure's line, each {"summary": ((device, MiB), ...), "seq", "alloc"}: a run closes on
    its allocated line (print_memory, after sampling); the last, still open, is the failing run's. (fix67h, rev67c F6) A
    run that never printed its allocated line (interrupted, failed) ends where the next begins: at ComfyUI's "got prompt"
    or at a new block swap summary after its Seq len, so it does not merge into the next run."""
    runs, cur = [], {}
    for n, (what, v) in sorted(x.f.get("wrapper_run", {}).items()):
        if n >= (x.line or 0):
            break
        if what == "start":        # (fix67h, rev67c F4) ComfyUI started anew: the runs before are another process's
            runs, cur = [], {}
            continue
        if cur and (what == "prompt" or what == "summary" and "seq" in cur):
            runs.append(cur)
            cur = {}
        if what == "summary":
            cur["summary"] = cur.get("summary", ()) + (v,)
        elif what != "prompt":
            cur[what] = v
        if what == "alloc":
            runs.append(cur)
            cur = {}
    return runs + [cur] if cur else runs


def _key(run):
    """(fix67h, rev67c F3) A run's shape: its block swap summary and its sequence length ("Seq len"). A longer video
    (49 -> 81 -> 125 frames) leaves more allocated after its run (larger cached tensors), so only runs of one shape compare."""
    return run.get("summary"), run.get("seq")


def run_mem_grew(x):
    """(first, last, runs) where at least two runs of the failing run's shape (_key: the same block swap summary and
    sequence length) printed what they left allocated, each no lower than the one before, the last at least GREW above
    the first; else None."""
    runs = _runs(x)
    if not runs or "alloc" in runs[-1] or None in _key(runs[-1]):
        return None
    done = [r["alloc"] for r in runs[:-1] if "alloc" in r and _key(r) == _key(runs[-1])]
    if len(done) < 2 or any(b < a for a, b in zip(done, done[1:])) or done[-1] - done[0] < GREW:
        return None
    return done[0], done[-1], len(done)


def same_run_before(x) -> bool:
    """The failing run placed the same blocks (its block swap summary) for the same sequence length ("Seq len") as a run of
    this log that finished: the same work fitted then, so what changed is memory held since (or another program's)."""
    runs = _runs(x)
    last = runs[-1] if runs else {}
    if "alloc" in last or "summary" not in last or "seq" not in last:
        return False
    return any("alloc" in r and _key(r) == _key(last) for r in runs[:-1])
