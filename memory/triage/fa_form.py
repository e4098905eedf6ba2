"""llama.cpp's flash-attention flag in the form of the build the log names (aud68c #2).

From b6325 `-fa` takes a value (on|off|auto); before it a bare `-fa` turns flash attention on and `-fa on` is an
error (the value is read as the next argument). memory/llm/flags.py FA_VALUE is the one gate: kv's plan, its
suggestions (llm/advise.py) and the guides' commands all follow it. No build printed: the newest form, and the
guides say that older builds take a bare -fa."""
from ..llm.flags import FA_VALUE
from ..llm.runtimes import at_least


def build(f):
    """llama.cpp's build number as the log prints it ("build: 4820 (1a24c462)"), else None."""
    v = (f.get("runtime_version") or {}).get("llama.cpp")
    return int(v) if v and str(v).isdigit() else None


def params(f) -> dict:
    """{{fa}} for the llama.cpp guides' commands ("-fa on" / "-fa"), and fa_bare / fa_build for their text."""
    b = build(f)
    if b is None or at_least((b,), *FA_VALUE):
        return {"fa": "-fa on", **({"fa_build": f"b{b}"} if b else {})}
    return {"fa": "-fa", "fa_bare": True, "fa_build": f"b{b}", "fa_since": f"b{FA_VALUE[0]}"}
