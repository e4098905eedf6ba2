"""(task rt66) The program around a library's failure: its own lines name the run where the error line is the library's.

An error line is often the library's under the program that ran it: PyTorch's OutOfMemoryError inside a ComfyUI server.
env.guess_runtime names the runtime from the failure's own words first, so such a failure reads as PyTorch's, and the guide
and commands shown are PyTorch's, not the program's. A line of a program that runs a library (AROUND) counts where
guess_runtime reads that program's other lines (seen_around, beside ComfyUI's frames and start-up line), so the checks before
them still hold (a runtime's own message, Fooocus's early clone of ComfyUI's code: review rev66a #3). Rules are rows:
(runtime, its lines' gate words, their pattern).

Read and left out (each names more than one program; task rt66's write-up in docs/triage-accuracy.md):
- ComfyUI's model loader's "Requested to load X" (comfy/model_management.py:655): Fooocus and the Forge family print it
  from their copies of ComfyUI's model management (round 111's control, test_triage_round111);
- its model management lines (tri82's fact comfy_mm: model_patcher.py:794 "loaded partially; N MB usable, ...",
  model_management.py:681 "N models unloaded."): Forge's later variants copy model_patcher.py with the same line;
- Go's "signal arrived during cgo execution" after ggml's abort, and a bare llm/llama.cpp/ folder in ggml's check, for
  Ollama: any Go program embedding ggml, any clone of llama.cpp into a folder llm/ (review18a #2)."""
import re

# (runtime, gate words, pattern)
AROUND = (
    # ComfyUI's start-up line (comfy/model_management.py:241 "Total VRAM {} MB, total RAM {} MB") quoted up to its VRAM
    # figure ("Total VRAM 1024 MB": the figure it shows for any DirectML device, get_total_memory's fixed 1024 MiB,
    # model_management.py:201). The whole line is fact total_vram's,
    # which names the log ComfyUI's (facts._total_vram); the row reads the cut line only, and no figure from it
    ("comfyui", ("Total VRAM ",), r"\bTotal VRAM \d{1,9} MB\s*$"),
)
# the facts' rows (fact_patterns.FACTS, FACT_KEYS): one fact, runtime_around, a group per row
FACT = ("runtime_around", re.compile("|".join(f"(?P<r{i}>{rx})" for i, (_, _, rx) in enumerate(AROUND))))
FACT_WORDS = tuple(w for _, words, _ in AROUND for w in words)
# the scanner decodes a line only where it holds an anchor: "Total VRAM" is one already (scan_words OPEN_ANCHORS, which the
# head's include, and WINDOW_KEYS); a row with other words adds them there


def runtime_around(s, f, m, text, lineno, window):
    """facts.py's handler: the runtimes whose rows matched, kept in fact runtime_around (a set)."""
    rows = {AROUND[int(k[1:])][0] for k, v in m.groupdict().items() if v}
    f["runtime_around"] = f.get("runtime_around", frozenset()) | rows


def seen_around(f: dict, runtime: str) -> bool:
    """A line of `runtime`, a program that runs a library (AROUND), is in the log: env.guess_runtime reads it where it reads
    the program's other lines (ComfyUI's frames and start-up line), after the checks that keep a copy of the program's code
    its own (Fooocus's early comfy/ clone reads pytorch: review rev66a #3)."""
    return runtime in (f.get("runtime_around") or ())
