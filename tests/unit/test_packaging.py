"""`pip install .` ships every data file the code reads: guides, layouts, samples, LLM configs, web files."""
import fnmatch
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def package_data() -> dict:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return cfg["package-data"], cfg["packages"]


@pytest.mark.parametrize("folder,package", [("memory", "gpu_garden.memory"), ("web", "gpu_garden"), ("nodes", "gpu_garden.nodes")])
def test_every_data_file_is_shipped(folder, package):
    data, packages = package_data()
    assert package in packages
    prefix = "" if package == "gpu_garden" else folder + "/"
    base = REPO if package == "gpu_garden" else REPO / folder
    for f in (REPO / folder).rglob("*"):
        if f.is_dir() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
            continue
        rel = str(f.relative_to(base))
        assert any(fnmatch.fnmatch(rel, g) for g in data.get(package, [])), f"{prefix}{f.name} is not in package-data"


def test_python_subpackages_are_listed():
    _, packages = package_data()
    for init in list(REPO.glob("*/__init__.py")) + list(REPO.glob("memory/*/__init__.py")):
        pkg = ".".join(init.parent.relative_to(REPO).parts)
        if not pkg.startswith("tests"):
            assert f"gpu_garden.{pkg}" in packages
