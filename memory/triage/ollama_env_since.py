"""Ollama settings the log's version does not read (aud68c #3): its guide and suggestions drop them.

Why: Ollama ignores an environment variable it does not know, so OLLAMA_KV_CACHE_TYPE=q8_0 on 0.3.6 leaves the cache
at f16 and the load fails as before. A quantized cache came with ollama/ollama#6279 (merged December 2024, first
released in 0.5.0; the scheduler's 0.5 code in memory/llm/runtimes/ollama.py cites the same diff), and
OLLAMA_CONTEXT_LENGTH with 0.5.13 (the guide's own note). The start-up line `server config env="map[...]"` lists
every variable a version reads; 0.3.6's has neither. Where the log names such a version the guide's commands lose
those lines, the context is lowered per model or request (`/set parameter num_ctx N`, a Modelfile's PARAMETER
num_ctx), and a paragraph says from which version each exists. No version printed: the guide as it was."""
import re

from ..llm.runtimes import at_least, parse_version
from . import ollama_warnings

SINCE = {"OLLAMA_KV_CACHE_TYPE": ((0, 5, 0), "a quantized KV cache came with ollama/ollama#6279"),
         "OLLAMA_CONTEXT_LENGTH": ((0, 5, 13), "a server-wide default context")}
_FENCE = re.compile(r"^```[^\n]*\n.*?^```\s*$", re.S | re.M)
_CTX_OR = re.compile(r"`OLLAMA_CONTEXT_LENGTH=(\w+)` \(or `/set parameter num_ctx \1`\)")


def version(f):
    """Ollama's version as the log prints it ("Listening on ... (version 0.3.6)"), else None."""
    return (f.get("runtime_version") or {}).get("ollama")


def lacking(f) -> list:
    """The variables of SINCE that the log's Ollama version predates, in SINCE's order ([] when no version is printed),
    less those its `server config env="map[...]"` line lists (`OLLAMA_X:`, empty value too; facts_ollama's
    ollama_env_map): that build reads them whatever its version says (rev68f #3: a source build prints 0.0.0)."""
    v = parse_version(version(f), "ollama") if version(f) else None
    listed = f.get("ollama_env_map") or ()
    return [name for name, (since, _) in SINCE.items() if v is not None and not at_least(v, *since) and name not in listed]


def unsupported(f) -> list:
    """(aud68c #4, ollama/ollama#8447) "flash attention enabled but not supported by model": flash attention is off
    whatever OLLAMA_FLASH_ATTENTION says, and a quantized cache needs it (ollama_warnings.py)."""
    return ["OLLAMA_FLASH_ATTENTION", "OLLAMA_KV_CACHE_TYPE"] if ollama_warnings.fa_unsupported(f) else []


def keep(sugg: list, f) -> list:
    """The suggestions without the variables this version lacks (and flash attention's, asked only for the 8-bit cache)
    or that this model cannot use (unsupported)."""
    gone = set(lacking(f)) | set(unsupported(f))
    if not gone:
        return sugg
    out = [x for x in sugg if x.get("name") not in gone]
    if "OLLAMA_KV_CACHE_TYPE" in gone:
        out = [x for x in out if not (x.get("name") == "OLLAMA_FLASH_ATTENTION" and "quantized cache" in x.get("reason", ""))]
    return out


def apply(guide, f, commands) -> None:
    """Drop the variables this version lacks or this model cannot use from the guide's command blocks; name num_ctx for
    the context; say why; and name the settings Ollama ignored as invalid (ollama_warnings.note)."""
    if not guide:
        return
    old, cannot = [g for g in lacking(f) if g in guide["markdown"]], unsupported(f)
    gone = list(dict.fromkeys(old + cannot))
    ignored = ollama_warnings.note(f)
    if not (ignored or cannot or old):
        return

    def block(m):
        lines = [ln for ln in m.group(0).split("\n") if not any(f'Environment="{g}=' in ln for g in gone)]
        text = "\n".join(lines)
        for g in gone:
            text = re.sub(rf" ?{g}=\S+", "", text)
        return text
    md = _FENCE.sub(block, guide["markdown"]).rstrip()
    if "OLLAMA_CONTEXT_LENGTH" in old:
        md = _CTX_OR.sub(r"`/set parameter num_ctx \1` (or `PARAMETER num_ctx \1` in a Modelfile)", md)
    if old:
        said = " nor ".join(f"`{g}` (read from Ollama {'.'.join(map(str, SINCE[g][0]))}: {SINCE[g][1]})" for g in old)
        md += (f"\n\n**This log's Ollama ({version(f)}) reads neither** {said}" if len(old) > 1 else
               f"\n\n**This log's Ollama ({version(f)}) does not read** {said}") + (
               ": it ignores what it does not read, so the commands above leave it out; lower the context per model or "
               "request (`/set parameter num_ctx N`, or `PARAMETER num_ctx N` in a Modelfile), or update Ollama.")
    if cannot:
        md += ("\n\n**No flash attention for this model** (the log: \"flash attention enabled but not supported by model\"): "
               "`OLLAMA_FLASH_ATTENTION` changes nothing, and without it `OLLAMA_KV_CACHE_TYPE` keeps the f16 cache; the "
               "commands above leave both out.")
    if ignored:
        md += "\n\n" + ignored
    guide["markdown"] = md + "\n"
    guide["commands"] = commands(guide["markdown"])
