"""One module per serving runtime: its defaults by version, the memory terms it adds to weights and KV cache,
its fits rule and the flags that change them."""
import re

RUNTIMES = ("vllm", "llama.cpp", "ollama", "sglang")


def parse_version(v) -> tuple | None:
    """'0.6.4' -> (0, 6, 4); 'b6500' (a llama.cpp build) -> (6500,); None / 'latest' -> None (the newest)."""
    if v is None or str(v).strip().lower() in ("", "latest", "current", "newest"):
        return None
    s = str(v).strip().lower().lstrip("v")
    if s.startswith("ik"):  # ikawrakow/ik_llama.cpp: the fork numbers its own builds; llama.cpp's gates take it as new
        return None
    m = re.fullmatch(r"b?(\d+)", s) if s.startswith("b") else None
    if m:
        return (int(m.group(1)),)
    parts = re.findall(r"\d+", s.split("+")[0])
    if not parts:
        from ...errors import UserError
        raise UserError(f"cannot read a version from {v!r} (e.g. 0.11.0 for vLLM, b6500 for llama.cpp, 0.12.3 for Ollama)")
    return tuple(int(p) for p in parts[:3])


def at_least(version, *ref) -> bool:
    """True for the newest (None) and for any version >= ref."""
    return version is None or tuple(version) >= ref
