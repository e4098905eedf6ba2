"""A loaded model reads the same everywhere on the page: the budget bar and the sidebar (web/lib/format.js segments and
web/budget.js), the OOM panel's footer (web/oom_panel.js) all name it by format.js modelLabel, the server's label
(nodes/host_models.model_label: "text encoder (SD1 CLIP)", "VAE"), as the unload face does, never by its class name
("SD1ClipModel", "AutoencoderKL") where a label was sent. The bar's parts are run in node."""
import re
from pathlib import Path


from support import node_js

WEB = Path(__file__).resolve().parents[2] / "web"
GiB = 1 << 30


def segments(dev: dict) -> list:
    return node_js.call("lib/format.js", "segments", dev)


# what GET /gpu_garden/budget sends for a device holding SD1.5's text encoder and VAE (nodes/host_models.describe)
DEVICE = {"backend": "cuda", "index": 0, "name": "NVIDIA GeForce RTX 3060", "total": 12 * GiB, "free": 9 * GiB,
          "models": [{"name": "SD1ClipModel", "label": "text encoder (SD1 CLIP)", "bytes": 246 << 20},
                     {"name": "AutoencoderKL", "label": "VAE", "bytes": 160 << 20, "partial": True},
                     {"name": "BaseModel (SD15)", "bytes": 1640 << 20}]}


def test_the_bar_names_each_model_by_its_label():
    models = [p for p in segments(DEVICE) if p["kind"] == "model"]
    assert [p["label"] for p in models] == ["text encoder (SD1 CLIP)", "VAE", "BaseModel (SD15)"]
    assert models[0]["title"] == "text encoder (SD1 CLIP): 246.00 MiB"
    assert models[1]["title"] == "VAE: 160.00 MiB (partially loaded)"
    assert not any("SD1ClipModel" in p["title"] or "AutoencoderKL" in p["title"] for p in models)


def test_no_web_file_builds_a_model_name_of_its_own():
    """Each place that shows a loaded model goes through modelLabel (one function), none reads m.name / m.label."""
    for path in [WEB / "budget.js", WEB / "oom_panel.js", *sorted((WEB / "lib").glob("oom_*.js"))]:
        text = path.read_text()
        assert not re.search(r"\bm\.(name|label)\b", text), path
    assert "modelLabel(m)" in (WEB / "budget.js").read_text() and "modelLabel(m)" in (WEB / "oom_panel.js").read_text()
