"""Loads the repository as the package `gpu_garden` (as `pip install .` names it) and provides the
real-ComfyUI `comfy_host` fixture used by tests/host and tests/web."""
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "tests" / "output"


sys.path.insert(0, str(REPO / "tests"))  # `support` helpers
from support.pack import load_pack  # noqa: E402

load_pack()


def pytest_report_header(config):
    """The linear-time guards' machine factor, measured here once before any test (support/regex_time.py)."""
    from support.regex_time import header
    return header()


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


@pytest.fixture(autouse=True)
def _host_ram_is_not_this_machines(request, monkeypatch):
    """Unit tests judge host RAM on 64 GiB unless they give --ram or patch it: the estimate's outcome depends on the
    free RAM (what a partial load leaves in RAM must fit there), and this machine's free RAM changes with what else
    runs (a ComfyUI and a browser of the host tier read 6 GiB here while 23 GiB were free before)."""
    if "tests/unit" not in str(request.node.fspath).replace("\\", "/"):
        return
    from gpu_garden.memory.estimate import verdict
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 * 2**30)
