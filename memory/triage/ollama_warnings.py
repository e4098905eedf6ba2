"""Ollama's lines that change its advice: two start-up warnings (aud68c #4, ollama/ollama#8447) and its estimate's
partial figure (aud68c #5).

- "flash attention enabled but not supported by model" (llm/server.go: the model's SupportsFlashAttention is false):
  the runner starts without flash attention, and a quantized KV cache needs it (without it Ollama keeps f16, see
  memory/llm/runtimes/ollama.py GPTOSS_FLASH), so OLLAMA_FLASH_ATTENTION / OLLAMA_KV_CACHE_TYPE change nothing here.
- "invalid environment variable, using default" key=OLLAMA_X value=V (envconfig/config.go Uint / Uint64:
  strconv.ParseUint(s, 10, 64), a plain number): the setting was ignored. OLLAMA_GPU_OVERHEAD is a count of bytes, so
  "8G" is read as nothing; the guide says so and gives the bytes.

- memory.required.partial on the "offload to" line: what Ollama planned to put on the GPU(s) for the layers it
  offloads, beside memory.available; a plan within a few per cent of the room is a tight estimate (ollama_estimate.py).

facts "ollama_warn": {"fa_unsupported": True, "invalid": {key: value}, "partial": "4.9 GiB"} (the scan's, not by line;
partial: the last "offload to" line's)."""
import re


FACT = ("ollama_warn", re.compile(r"(flash attention enabled but not supported by model)|"
                                  r'invalid environment variable, using default"? key=(OLLAMA_\w{1,40}) value=("[^"]{0,60}"|\S{0,60})|'
                                  r'\bmemory\.required\.partial="(\d{1,9}(?:\.\d{1,4})? [KMGT]?i?B)"'))
FACT_WORDS = ("not supported by model", "invalid environment variable", "memory.required.partial")

def read(s, f, m, text, lineno, window):
    """facts.py's handler."""
    w = f.setdefault("ollama_warn", {})
    if m.group(1):
        w["fa_unsupported"] = True
    elif m.group(4):
        w["partial"] = m.group(4)
    else:
        w.setdefault("invalid", {})[m.group(2)] = m.group(3).strip('"')

def fa_unsupported(f) -> bool:
    return bool((f.get("ollama_warn") or {}).get("fa_unsupported"))

def invalid(f) -> dict:
    return dict((f.get("ollama_warn") or {}).get("invalid") or {})

def as_bytes(value):
    """"8G" / "8GiB" / "512 MB" as bytes (binary units, as Ollama's own figures), else None."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])(?:i?B)?\s*", value or "", re.I)
    return int(float(m.group(1)) * (1 << {"K": 10, "M": 20, "G": 30, "T": 40}[m.group(2).upper()])) if m else None

def note(f) -> str:
    """The guide's paragraph for ignored settings ("" when none)."""
    out = []
    for key, value in invalid(f).items():
        b = as_bytes(value) if key == "OLLAMA_GPU_OVERHEAD" else None
        out.append(f"`{key}={value}` was ignored (\"invalid environment variable, using default\"): Ollama reads a plain "
                   "number" + (f" of bytes there, so write `{key}={b}`" if b else "") + ".")
    return ("**This log's settings.** " + " ".join(out)) if out else ""
