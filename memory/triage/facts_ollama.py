"""What Ollama's own lines tell the scanner: that the log is Ollama's (its slog source files, its server's words), its
scheduler's evictions, its environment, and its "offload to" line's sizes (facts.py's HANDLERS call these)."""
import re

from . import parse as P
from . import lines as L

_OLLAMA_SIZES = re.compile(L.OLLAMA_GPU_SIZE)     # each GPU's free memory on Ollama's "offload to" line


# Ollama's own log format: Go's slog text with the source file's base name ("level=INFO source=llama_server.go:837 msg=..."),
# which its logger shortens from the full path; slog's default AddSource prints the full path, and msg=" alone is any Go program.
# The base name alone is a common slog idiom too (a Go wrapper of llama-server logs source=main.go or process.go), so only
# the names of Ollama's own files that log count, in two tiers:
#  - names unlikely in another Go program (ollama/ollama: llm/llama_server.go, server/sched.go, cuda_compat, native_probe,
#    discover/amd_*.go): one line is enough;
#  - Ollama's names that any Go service may have (server/routes.go, images.go, llm/memory.go, payload, ggml, gguf,
#    gpu_*.go): two different ones in the log (a second marker), never one alone (review21b finding 7: a wrapper's
#    source=routes.go or memory.go line read as Ollama)
# the generic ones (server.go, main.go, types.go, gpu.go, process.go) never count
_OLLAMA_SLOG = re.compile(r"\blevel=[A-Z]{3,5} source=(?:llama_server|sched|cuda_compat|native_probe|amd_\w{1,20})\.go:\d{1,6} msg=\"")
_OLLAMA_SLOG_COMMON = re.compile(r"\blevel=[A-Z]{3,5} source=(routes|images|memory|payload|ggml|gguf|gpu_\w{1,20})\.go:\d{1,6} msg=\"")


def _ollama_marker(s, f, m, text, lineno, window):
    # "llama runner process has terminated" / "no longer running": Ollama's server (llm/server.go) relaying its runner's end
    if "ollama" in text.lower() or "OLLAMA_" in text or "sha256-" in text or "llama runner process" in text \
            or any(w in text for w in L.OLLAMA_SERVER_SAYS) or 'msg="' in text and _OLLAMA_SLOG.search(text) \
            or "% CPU/GPU" in text and L.OLLAMA_PS.search(text):
        f["ollama"] = True
    elif 'msg="' in text and len(f["ollama_slog_common"]) < 2:
        common = _OLLAMA_SLOG_COMMON.search(text)
        if common:
            f["ollama_slog_common"] = f["ollama_slog_common"] | {common.group(1)}
            f["ollama"] = f["ollama"] or len(f["ollama_slog_common"]) >= 2


def _ollama_evict(s, f, m, text, lineno, window):
    """Ollama's scheduler evicting a loaded model to make room (its own line: the log is Ollama's); the lines, last few."""
    f["ollama"] = True
    if lineno not in f["ollama_evict"]:
        f["ollama_evict"] = (f["ollama_evict"] + [lineno])[-8:]


_ENV_KEY = re.compile(r"\b(OLLAMA_\w+):")


def _ollama_env(s, f, m, text, lineno, window):
    f["ollama_env"][m.group(1)] = m.group(2)
    if 'env="map[' in text:     # (rev68f #3) every key the server config line lists, empty value too: what this build reads
        f["ollama_env_map"] = sorted(set(f.get("ollama_env_map") or ()) | set(_ENV_KEY.findall(text)))


def _ollama_full(s, f, m, text, *_):
    """Ollama's "offload to" line: what the model needs in all, and what each GPU has free, this load's alone: a list that
    does not parse, or an "offload to cpu" line (its list is RAM), leaves none rather than an earlier load's. The sum is
    what memory.go compares required.full with (the per-GPU allocations); should_fit takes the failing GPU's own entry."""
    f["ollama_required"] = P.size(m.group(1))
    lm = None if "offload to cpu" in text else L.OLLAMA_AVAILABLE.search(text)
    gpus = [P.size(v) for v in _OLLAMA_SIZES.findall(lm.group(0))] if lm else None
    f["ollama_gpus"], f["ollama_available"] = gpus, (sum(gpus) if gpus else None)
