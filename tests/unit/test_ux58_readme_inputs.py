"""Every input of each node is named in its README section (ux58, the README walked in the host: Footprint
Estimate's `vae_tile` widget was on the node and in no line of the README). An input is named by its name (the
widget names have underscores, so they do not match by chance), or by its type in capitals where the README lists the
wired ones that way (MODEL, LATENT, CLIP, VAE)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
SECTIONS = {"estimate": ("### Footprint Estimate", "GPUGardenFootprintEstimate"),
            "fit_to_card": ("### Fit to Card", "GPUGardenFitToCard"),
            "unload": ("### Unload Text Encoders", "GPUGardenUnloadTextEncoders"),
            "budget": ("### VRAM Budget", "GPUGardenVRAMBudget")}


def section(head: str) -> str:
    text = README.read_text()
    start = text.index(head + "\n")
    end = text.find("\n## ", start)
    nxt = text.find("\n### ", start + len(head))
    return text[start:min(x for x in (end, nxt) if x > 0)]


def named(name: str, text: str) -> bool:
    """The input is named as a name in backticks (`mode`, or `when_it_does_not_fit: stop`), or as its wired type in capitals
    (MODEL, LATENT, CLIP, VAE) as a word. A bare substring matched by chance (rev59: Fit to Card's `mode` passed on
    "model" and "automatic mode" after its sentence was gone)."""
    return bool(re.search(rf"`{re.escape(name)}(?:`|:)", text) or re.search(rf"\b{re.escape(name.upper())}\b", text))


def test_named_needs_the_name_itself():
    assert named("mode", "Set `mode` to advise") and named("when_it_does_not_fit", "`when_it_does_not_fit: stop` ends it")
    assert named("latent", "plus optional LATENT, CLIP")
    assert not named("mode", "Wire `model`; automatic mode does the same") and not named("vae", "`vae_tile` is the tile")


@pytest.mark.parametrize("module", sorted(SECTIONS))
def test_each_input_is_named_in_its_section(monkeypatch, module):
    from support.fit_stubs import fresh_node
    head, cls = SECTIONS[module]
    mod = fresh_node(monkeypatch, Path(__file__).parent / "stubs", module)
    names = [i.args[0] for i in getattr(mod, cls).define_schema().inputs]
    assert names, cls
    text = section(head)
    missing = [n for n in names if not named(n, text)]
    assert not missing, (cls, missing)


# What the README says is optional, or required, against the node's V3 schema (optional=True) (mend60: the Unload Text
# Encoders table said `positive`, `negative` (optional); `positive` is required). Each claim is quoted from the section,
# so a reworded sentence fails here until its claim is checked again. (section, quote, inputs it names, optional?)
CLAIMS = [
    ("estimate", "Inputs: MODEL, plus optional LATENT, CLIP,\nVAE and a `budget` from VRAM Budget", ["model"], False),
    ("estimate", "Inputs: MODEL, plus optional LATENT, CLIP,\nVAE and a `budget` from VRAM Budget",
     ["latent", "clip", "vae", "budget"], True),
    ("estimate", "Optional inputs `weights_dtype`", ["weights_dtype", "vae_dtype", "vae_tile", "text_tokens"], True),
    ("estimate", "the optional inputs `latent_upscale` (default `off`: one stage) and `upscale_model`",
     ["latent_upscale", "upscale_model"], True),
    ("fit_to_card", "Wire `model`, and\noptionally `vae`, `clip`, `latent` and a `budget`", ["model"], False),
    ("fit_to_card", "Wire `model`, and\noptionally `vae`, `clip`, `latent` and a `budget`",
     ["vae", "clip", "latent", "budget"], True),
    ("unload", "| `positive` | CONDITIONING", ["positive"], False),
    ("unload", "| `clip` | the CLIP", ["clip"], False),
    ("unload", "| `mode` | **offload**", ["mode"], False),
    ("unload", "| `negative` (optional) | CONDITIONING", ["negative"], True),
    ("budget", "| input `value` (any, optional) |", ["value"], True),
]


def optional_inputs(monkeypatch, module) -> dict:
    from support.fit_stubs import fresh_node
    mod = fresh_node(monkeypatch, Path(__file__).parent / "stubs", module)
    return {i.args[0]: bool(i.kwargs.get("optional")) for i in getattr(mod, SECTIONS[module][1]).define_schema().inputs}


@pytest.mark.parametrize("module,quote,names,optional", CLAIMS)
def test_what_the_readme_calls_optional_is_optional(monkeypatch, module, quote, names, optional):
    assert quote in section(SECTIONS[module][0]), (module, quote)
    schema = optional_inputs(monkeypatch, module)
    assert {n: schema[n] for n in names} == {n: optional for n in names}


def test_every_optional_input_is_called_optional(monkeypatch):
    """An input the schema makes optional is in one of the claims above (so the README says so), and a required one
    is never in an optional claim: a new optional input needs its sentence."""
    claimed = {(m, n): o for m, _, names, o in CLAIMS for n in names}
    for module in SECTIONS:
        for name, opt in optional_inputs(monkeypatch, module).items():
            if opt:
                assert claimed.get((module, name)) is True, (module, name)


@pytest.mark.parametrize("module", sorted(SECTIONS))
def test_a_table_row_says_optional_only_of_optional_inputs(monkeypatch, module):
    """An input table's first cell: the inputs it names in backticks are optional in the schema exactly when the cell
    says "optional" (the old "`positive`, `negative` (optional)" row fails: `positive` is required)."""
    import re
    schema = optional_inputs(monkeypatch, module)
    rows = 0
    for line in section(SECTIONS[module][0]).splitlines():
        if not line.startswith("| "):
            continue
        cell = line.split("|")[1]
        for name in re.findall(r"`([a-z_0-9]+)`", cell):
            if name in schema and not cell.lstrip().startswith("output"):
                rows += 1
                assert schema[name] == ("optional" in cell), (module, name, cell)
    assert rows or module in ("estimate", "fit_to_card")  # these two list their inputs in prose (CLAIMS)
