"""(fix68a, rev67i #3) A Python launch as a vLLM run's start: a log that holds a `vllm serve` run (stopped with ^C) and then
`python offline.py` (an offline LLM(...) run, no `vllm serve` line of its own) is two runs, and a failure in the second
must not read the first run's flags (--kv-cache-dtype, --max-model-len, --max-num-seqs, --trust-remote-code, the
utilization). The launch line is kept by line with the run starts (vllm_run: "vllm_own_at") with no flags of its own; the
run's settings are then only what it prints itself (LLM(gpu_memory_utilization=...), the engine config), else vLLM's
defaults.

Only a command the shell ran in the foreground after a foreground `vllm serve`: a client script run beside a server
started with a trailing `&` (`vllm serve ... &` then `python bench.py`) is no new engine, and the server's failure stays
the server's run. (fix68h, rev68a #2) Nor is one pasted after a foreground server that shows no end (the usual issue
layout: the server's command, the client's, then the server's log): a Python line is a new run only once the server's
run has ended, by a failure in it, a ^C / KeyboardInterrupt or vLLM's shutdown line (END)."""
import re

from . import vllm_own_flags as OWN

# an option and its value, if any, of a launcher (`--nproc-per-node 1`, `--nproc_per_node=2`, `-n env`, `--standalone`): a
# value is no option and no script (.py), so each token is read one way only
_OPT = r"-{1,2}[\w-]{1,40}(?:=\S{1,200}|[ \t]{1,4}[^\s-]\S{0,200}(?<!\.py)(?=\s))?[ \t]{1,4}"
_SCRIPT = r"[^\s-]\S{0,300}\.py"
# python/python3/python3.12 running a script or `-c`/`-m` (not vLLM's own api_server module: that line is a `vllm serve`
# run already); (fix68h, rev68a #3) through `uv run` or `conda run -n X`, or torchrun's script or module
_PY = (r"(?:(?:uv|conda)[ \t]{1,4}run[ \t]{1,4}(?:" + _OPT + r"){0,8})?python(?:3(?:\.\d{1,2})?)?[ \t]{1,4}"
       r"(?!-m[ \t]{1,4}vllm\.entrypoints\.openai\.api_server)(?:-[uBOE][ \t]{1,4}){0,8}(?:-m[ \t]{1,4}[\w.]{1,200}|-c[ \t]|"
       + _SCRIPT + ")")
_TORCHRUN = r"torchrun[ \t]{1,4}(?:" + _OPT + r"){0,12}(?:-m[ \t]{1,4}[\w.]{1,200}|" + _SCRIPT + ")"
# a prompt as vllm_own_flags.OWN_LINE takes it (its PROMPT), VAR=value assignments, then the launch
LINE = re.compile(r"^" + OWN.PROMPT + r"(?:[A-Za-z_]\w{0,60}=\S{1,200}[ \t]{1,4}){0,8}(?:" + _PY + "|" + _TORCHRUN + r")(?=\s|$)")
KEYS = ("python ", "python3 ", "torchrun ")
FACT = ("vllm_launch", LINE)
# (read first on a line, FACTS[0]) a run's start read back from the window before a failure: what the window's earlier
# lines kept just before the failure (vllm_run.keep's slot) is an earlier run's, and goes
START = ("vllm_run_start", re.compile(f"(?P<serve>{OWN.OWN_LINE.pattern})|{LINE.pattern}"))
START_KEYS = OWN.KEYS + KEYS
_BG = re.compile(r"&[ \t]*$")
# (fix68h) a foreground server's end: the shell's ^C echo, Python's KeyboardInterrupt, vLLM's launcher.py "Shutting down
# FastAPI HTTP server." (newer: "[shutdown] API server: shutting down FastAPI HTTP server"), uvicorn's last line
END = ("vllm_serve_end", re.compile(r"^[ \t]{0,8}\^C[ \t]{0,8}$|\bKeyboardInterrupt\b|[Ss]hutting down FastAPI HTTP server"
                                    r"|Application shutdown complete"))
END_KEYS = ("^C", "KeyboardInterrupt", "hutting down FastAPI HTTP server", "Application shutdown complete")


def background(rest: str) -> bool:
    """A `vllm serve` line's flags end with `&`: the shell ran it in the background."""
    return bool(_BG.search(rest or ""))


def client(s, f) -> bool:
    """A Python line now is a client of the `vllm serve` run before it: that server was put in the background, or runs in
    the foreground and has shown no end (END, or a failure since its line)."""
    from .vllm_run import failed_since     # (lazy: vllm_run -> parse -> fact_patterns imports this module)
    at = f.get("vllm_serve_open")
    return bool(f.get("vllm_serve_bg")) or (at is not None and not failed_since(s, at))


def ended(s, f, m, text, lineno, window) -> None:
    """The "vllm_serve_end" fact's handler: the foreground server's run is over."""
    f["vllm_serve_open"] = None


def read(s, f, m, text, lineno, window) -> None:
    """The "vllm_launch" fact's handler: a run's start with no flags, after a `vllm serve` run that was not put in the
    background and has ended (and before any: an offline run alone is one run, as before)."""
    from . import vllm_run as VRUN     # (lazy: vllm_run -> parse -> fact_patterns imports this module)
    if client(s, f):
        return
    f["vllm_serve_open"] = None
    if not window:
        VRUN.pin(s, f, lineno)
    VRUN.keep(f, "vllm_own", {}, lineno, window, s)


def start(s, f, m, text, lineno, window) -> None:
    """The "vllm_run_start" fact's handler: in the window, drop the values kept in this failure's slot so far."""
    from .vllm_run import RUN_AT
    if window and (m.group("serve") is not None or not client(s, f)):
        for key in RUN_AT:
            (f.get(key) or {}).pop(s._lineno - 0.5, None)
