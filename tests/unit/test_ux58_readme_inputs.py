"""Every input of each node is named in its README section (ux58, the README walked in the host: Footprint
Estimate's `vae_tile` widget was on the node and in no line of the README). An input is named by its name (the
widget names have underscores, so they do not match by chance), or by its type in capitals where the README lists the
wired ones that way (MODEL, LATENT, CLIP, VAE)."""
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


@pytest.mark.parametrize("module", sorted(SECTIONS))
def test_each_input_is_named_in_its_section(monkeypatch, module):
    from support.fit_stubs import fresh_node
    head, cls = SECTIONS[module]
    mod = fresh_node(monkeypatch, Path(__file__).parent / "stubs", module)
    names = [i.args[0] for i in getattr(mod, cls).define_schema().inputs]
    assert names, cls
    text = section(head)
    missing = [n for n in names if n not in text and n.upper() not in text]
    assert not missing, (cls, missing)
