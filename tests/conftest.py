"""Loads the repository as the package `gpu_garden` (as `pip install .` names it) and provides the
real-ComfyUI `comfy_host` fixture used by tests/host and tests/web."""
import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "tests" / "output"


def _load_pack_as_gpu_garden():
    mod = sys.modules.get("gpu_garden")
    if mod is not None and Path(mod.__file__).resolve().parent == REPO:
        return
    spec = importlib.util.spec_from_file_location("gpu_garden", REPO / "__init__.py", submodule_search_locations=[str(REPO)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_garden"] = mod
    spec.loader.exec_module(mod)


_load_pack_as_gpu_garden()
sys.path.insert(0, str(REPO / "tests"))  # `support` helpers


@pytest.fixture(scope="session")
def comfy_host(tmp_path_factory):
    """A real ComfyUI (--cpu) on a free loopback port with this pack and the test-only nodes linked in."""
    from support.comfy_host import ComfyHost, host_unavailable_reason

    reason = host_unavailable_reason()
    if reason:
        pytest.skip(reason)
    host = ComfyHost(tmp_path_factory.mktemp("comfy"))
    host.start()
    yield host
    host.stop()


@pytest.fixture(scope="session")
def output_dir():
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT
