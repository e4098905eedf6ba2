"""Remediation guides: markdown files under memory/guides/ with a small front matter.

    ---
    id: comfyui-fragmentation
    title: Fragmented cache (ComfyUI, Linux, native allocator)
    causes: [fragmentation]
    runtimes: [comfyui]
    platforms: [linux, cuda, native, expandable]
    defaults: {"reserve_vram_gb": "1.0"}
    actions: [{"kind": "free_vram"}]
    see: [faq-reserved-unallocated]
    ---
    markdown, with {{reserve_vram_gb}} filled from the log's numbers
    <!-- if torch29_conv3d !image -->
    a part shown only when advice.params sets torch29_conv3d and not image
    <!-- end -->

`see` entries may carry a condition too: "faq-empty-cache if empty_cache_relevant". A condition names
flags advice.params sets from the log's facts (all must hold; `!name`: must not), so a paragraph about a
version, a video model or an OS shows only where the log makes it relevant.

`platforms` tags are grouped (os: linux/windows/darwin; backend: cuda/rocm/mps/xpu/cpu/vulkan;
allocator: native/cudaMallocAsync; expandable / no-expandable: whether PyTorch honours
expandable_segments there; dynamic-vram). A guide applies when, in every group it names, the log's
value is one it lists; an unknown value matches. The most specific applicable guide wins.
"""
import json
import re
from functools import lru_cache
from pathlib import Path

from ..estimate.spec import TILE_NODE  # VAE Decode (Tiled)'s defaults: one source
from .vllm_capture_fix import GRAPHS_SINCE      # (fix67g) the vLLM release that put the graphs' estimate in the budget

GUIDE_DIR = Path(__file__).parent / "guides"
GROUPS = {
    "os": {"linux", "windows", "darwin"},
    "backend": {"cuda", "rocm", "mps", "xpu", "cpu", "vulkan"},
    "allocator": {"native", "cudaMallocAsync"},
    "expandable": {"expandable", "no-expandable"},
    "dynamic": {"dynamic-vram", "no-dynamic-vram"},
}
FENCE_RE = re.compile(r"^```[^\n]*\n(.*?)^```\s*$", re.S | re.M)
PARAM_RE = re.compile(r"\{\{\s*(\w+)\s*\}\}")
IF_RE = re.compile(r"^<!-- if ([!\w ]+) -->\n(.*?)^<!-- end -->\n?", re.S | re.M)
MARK_RE = re.compile(r"^<!-- (?:if [^>]*|end) -->$", re.M)


def _value(raw: str):
    raw = raw.strip()
    if raw.startswith(("{", "[")) and (raw.endswith("}") or raw.endswith("]")):
        try:
            return json.loads(raw)
        except ValueError:
            if raw.startswith("["):
                return [x.strip().strip("'\"") for x in raw[1:-1].split(",") if x.strip()]
            raise
    return raw.strip("'\"")


def parse(text: str, name: str = "?") -> dict:
    if not text.startswith("---"):
        raise ValueError(f"guide {name}: no front matter")
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError(f"guide {name}: front matter not closed")
    meta = {}
    for line in text[3:end].strip().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, val = line.partition(":")
        if not sep:
            raise ValueError(f"guide {name}: bad front matter line {line!r}")
        meta[key.strip()] = _value(val)
    body = text[end + 4:].lstrip("\n")
    if len(MARK_RE.findall(body)) != 2 * len(IF_RE.findall(body)) or any(MARK_RE.search(m.group(2)) for m in IF_RE.finditer(body)):
        raise ValueError(f"guide {name}: every <!-- if ... --> needs its own <!-- end --> (no nesting)")
    for key in ("causes", "runtimes", "platforms", "see", "actions", "kinds"):
        v = meta.get(key, [])
        meta[key] = v if isinstance(v, list) else [v]
    meta.setdefault("defaults", {})
    if "id" not in meta or "title" not in meta:
        raise ValueError(f"guide {name}: id and title are required")
    meta["markdown"] = body
    return meta


@lru_cache(maxsize=1)
def load_all() -> dict:
    out = {}
    for p in sorted(GUIDE_DIR.glob("*.md")):
        g = parse(p.read_text(encoding="utf-8"), p.name)
        out[g["id"]] = g
    return out


# What a guide says where the log did not give the number.
FALLBACK = {"reserve_vram_gb": "1.0", "requested": "a large block", "shortfall": "more than was free",
            "reserved_unallocated": "memory", "other_processes": "part of the card", "max_model_len": "8192",
            "gpu_memory_utilization": "0.80", "n_ctx_half": "8192", "n_ctx": "the context", "ngl": "20",
            "launch": "python main.py", "total_gib": "the card's", "tile_size": TILE_NODE["tile"],
            "overlap": TILE_NODE["overlap"], "temporal_size": TILE_NODE["frames"], "temporal_overlap": TILE_NODE["frame_overlap"],
            "capture_graphs_since": GRAPHS_SINCE,
            "fa": "-fa on"}     # (aud68c #2) advice.params: a bare -fa where the log's llama.cpp build predates b6325


def holds(cond: str, params: dict) -> bool:
    """`a !b`: params has a true a and no true b."""
    return all(not params.get(w[1:]) if w.startswith("!") else bool(params.get(w)) for w in cond.split())


def fill(text: str, params: dict, defaults: dict) -> str:
    text = IF_RE.sub(lambda m: m.group(2) if holds(m.group(1), params) else "", text)
    text = re.sub(r"\n{3,}", "\n\n", text)

    def sub(m):
        k = m.group(1)
        v = params.get(k, defaults.get(k, FALLBACK.get(k)))
        return str(v) if v is not None else m.group(0)
    return PARAM_RE.sub(sub, text)


def commands(markdown: str) -> list:
    """Every fenced code block, labelled by the paragraph just above it (its bold lead-in, else its first sentence)."""
    out = []
    for m in FENCE_RE.finditer(markdown):
        para = []
        for line in reversed(markdown[:m.start()].rstrip().splitlines()):
            if not line.strip() or line.startswith("```"):
                break
            para.insert(0, line.strip())
        text = " ".join(para)
        bold = re.match(r"\*\*(.+?)\*\*", text)
        label = bold.group(1) if bold else re.split(r"(?<=[.:])\s", text, 1)[0]
        label = label.replace("**", "").replace("`", "").strip().rstrip(".:").strip()
        out.append({"label": label[:120], "text": m.group(1).rstrip("\n")})
    return out


def _flag_re(kind: str, name: str):
    """A flag's value in a command: "--name V" / "--name=V", "NAME=V" (env), "PARAMETER name V" (an Ollama Modelfile)."""
    n = re.escape(name)
    if kind == "env":
        return re.compile(rf"(?<![\w-]){n}=([^\s\"'`\\]+)")
    if kind == "param":
        return re.compile(rf"\bPARAMETER {n} ([^\s\"'`\\]+)")
    return re.compile(rf"(?<![\w-]){n}(?:=| {{1,4}})(?!-)([^\s\"'`\\]+)")


def set_flags(markdown: str, sugg: list) -> str:
    """(fixB S5) The guide's command blocks with the values the log's numbers gave (advice.llm_suggestions, listed below the
    guide): a flag the list gives replaces the same flag's value in every block, so a block never contradicts the list. A
    flag suggested "with" another (--max-model-len N2 with --kv-cache-dtype fp8) takes that value in a block that holds the
    other; elsewhere a flag named twice keeps its first value, as engine.flag_commands does. Flags with no value are left."""
    flags = [x for x in sugg if x.get("kind") in ("flag", "env", "param") and x.get("value")]
    texts = {x["text"] for x in flags}
    lead = lambda x: x["reason"][5:] if x["reason"].startswith("with ") and x["reason"][5:] in texts else None

    def block(m):
        body = m.group(1)
        vals = {}
        for x in flags:
            if lead(x) is None:
                vals.setdefault((x["kind"], x["name"]), x["value"])
        for x in flags:
            if lead(x) and lead(x) in body:
                vals[(x["kind"], x["name"])] = x["value"]
        for (kind, name), v in vals.items():
            body = _flag_re(kind, name).sub(lambda f: f.group(0)[:f.start(1) - f.start(0)] + v, body)
        whole, at = m.group(0), m.start(1) - m.start(0)
        return whole[:at] + body + whole[at + len(m.group(1)):]
    return FENCE_RE.sub(block, markdown)


FIX_RE = re.compile(r"^\*\*(Fix \d+\b.*?)\*\*", re.M)


def fixes(markdown: str) -> list:
    """Every numbered fix ("**Fix 2 - leave ComfyUI more room.**" at a line's start), labelled as commands() labels
    its code blocks, so the OOM panel lists the fixes without a command beside those with one, in the guide's order."""
    return [{"label": m.group(1).replace("`", "").strip().rstrip(".:").strip()[:120]} for m in FIX_RE.finditer(markdown)]


def _expandable_tag(env: dict):
    """On ROCm with the PyTorch version unknown (env.rocm_expandable), choose the guides that do not rely on
    expandable_segments; env.expandable_note then says it may be honoured."""
    e = env.get("expandable_segments")
    if e is None:
        return "no-expandable" if env.get("backend") == "rocm" else None
    return "expandable" if e else "no-expandable"


def _env_tags(env: dict) -> dict:
    return {
        "os": env.get("os"),
        "backend": env.get("backend"),
        "allocator": env.get("allocator"),
        "expandable": _expandable_tag(env),
        "dynamic": None if env.get("dynamic_vram") is None else ("dynamic-vram" if env["dynamic_vram"] else "no-dynamic-vram"),
    }


def applies(guide: dict, env: dict) -> bool:
    tags = set(guide["platforms"])
    have = _env_tags(env)
    for group, names in GROUPS.items():
        wanted = tags & names
        if wanted and have[group] is not None and have[group] not in wanted:
            return False
    return True


def candidates(cause: str, runtime: str, env: dict, kind: str | None = None, form: str | None = None) -> list:
    """Guides for this cause and runtime that apply on this platform, most specific first. A guide
    with `kinds` (the parser's event kinds, e.g. torch.nvml_assert) is for those events only; a kind with its form
    ("ggml.ctx_pool/tallocr") is for that form only, and comes before the kind's."""
    gs = [g for g in load_all().values() if cause in g["causes"] and applies(g, env)]
    formed = [g for g in gs if kind and form and f"{kind}/{form}" in g["kinds"]]
    special = formed or [g for g in gs if kind and kind in g["kinds"]]
    # a guide for this event kind on this runtime first (ComfyUI's pinned memory is not a plain script's)
    fit = [g for g in special if runtime in g["runtimes"]] or [g for g in special if "any" in g["runtimes"]]
    if fit or special:
        return sorted(fit or special, key=lambda g: g["id"])
    gs = [g for g in gs if not g["kinds"]]
    exact = [g for g in gs if runtime in g["runtimes"]]
    pool = exact or [g for g in gs if "any" in g["runtimes"] or "pytorch" in g["runtimes"] and runtime in ("comfyui", "vllm")]
    return sorted(pool, key=lambda g: (-len(set(g["platforms"]) - {"any"}), g["id"]))


def render(guide: dict, params: dict | None = None) -> dict:
    params = params or {}
    md = fill(guide["markdown"], params, guide["defaults"])
    faqs = []
    for see in guide.get("see", []):
        fid, _, cond = see.partition(" if ")
        fg = load_all().get(fid.strip())
        if fg and holds(cond, params):
            faqs.append({"id": fg["id"], "title": fg["title"], "markdown": fill(fg["markdown"], params, fg["defaults"])})
    out = {"id": guide["id"], "title": fill(guide["title"], params, guide["defaults"]), "markdown": md,
           "commands": commands(md), "fixes": fixes(md), "causes": guide["causes"], "runtimes": guide["runtimes"],
           "platforms": guide["platforms"], "faqs": faqs}
    if guide.get("actions"):
        out["actions"] = [_fill_action(a, params, guide["defaults"]) for a in guide["actions"]]
    if guide.get("cost"):
        out["cost"] = guide["cost"]
    return out


def _fill_action(action, params, defaults):
    """Actions may name a parameter ("{{tile_size}}") where the log or the panel's context decides the value."""
    if isinstance(action, dict):
        return {k: _fill_action(v, params, defaults) for k, v in action.items()}
    if isinstance(action, list):
        return [_fill_action(v, params, defaults) for v in action]
    if isinstance(action, str) and PARAM_RE.fullmatch(action.strip()):
        v = fill(action, params, defaults)
        return int(v) if v.lstrip("-").isdigit() else v
    return action


def select(cause: str, runtime: str, env: dict, params: dict | None = None, kind: str | None = None,
           form: str | None = None) -> dict | None:
    for c in (cause, "other"):
        found = candidates(c, runtime, env, kind, form)
        if found:
            return render(found[0], params)
    return None
