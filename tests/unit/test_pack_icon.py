"""The Comfy Registry icon: pyproject.toml's [tool.comfy] Icon is a URL (comfy-cli's ComfyConfig.icon, a string) to a
file of this repository's main branch, which must exist, be a small square SVG, and be shipped in the repo."""
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_registry_icon_is_a_small_square_svg_in_this_repo():
    icon = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["comfy"]["Icon"]
    prefix = "https://raw.githubusercontent.com/gpu-garden/comfyui-gpu-garden/main/"
    assert icon.startswith(prefix), icon
    path = REPO / icon[len(prefix):]
    assert path.is_file(), f"{icon} names {path.relative_to(REPO)}, which is not in the repository"
    assert path.stat().st_size < 2048
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, w, h = (float(v) for v in root.get("viewBox").split())
    assert w == h > 0
