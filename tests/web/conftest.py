"""Real Chromium (Debian's package, never a downloaded browser) driven by Playwright for Python
against the real ComfyUI of the `comfy_host` fixture."""
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
# A fresh offline install logs these; anything else in the console is a failure.
EXPECTED_CONSOLE = ("/user.css", "/api/userdata", "ERR_NAME_NOT_RESOLVED", "api.comfy.org", "status of 404",
                    "Failed to load resource", "ERR_INTERNET_DISCONNECTED")
# Known mismatches between ComfyUI 0.8.0's backend and a newer frontend, by name: each is a message the
# frontend logs about an endpoint the backend does not have. Not our bug; every test still runs.
BACKEND_MISMATCH = {
    "[Jobs API] Error fetching jobs": "frontend >= 1.5x polls /api/jobs, which ComfyUI 0.8.0 answers with 400",
}


def pytest_report_header(config):
    from support.comfy_host import frontend_cache_dir

    root, version = os.environ.get("COMFYUI_FRONTEND_ROOT"), os.environ.get("COMFYUI_FRONTEND")
    if root:
        return f"web frontend: --front-end-root {root}"
    if version:
        return f"web frontend: comfyui-frontend-package=={version} (cache {frontend_cache_dir(version)})"
    return "web frontend: the one bundled with COMFYUI_DIR"


def chromium_path():
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser(comfy_host):
    exe = chromium_path()
    if not exe:
        pytest.skip("web tests need Debian's chromium package (apt-get install chromium); not found")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("web tests need Playwright for Python (pip install playwright); not installed")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class ConsoleLog(list):
    def unexpected(self):
        return [m for m in self if m["type"] in ("error", "pageerror") and not any(x in m["text"] for x in EXPECTED_CONSOLE)
                and not any(m["text"].startswith(name) for name in BACKEND_MISMATCH)]

    def from_pack(self):
        return [m for m in self.unexpected() if "gpu_garden" in m["text"].lower() or "gpu-garden" in m["text"].lower()
                or "GPU Garden" in m["text"] or "extensions/comfyui-gpu-garden" in m.get("url", "")]


# The page's api object, feature-detected (each frontend this tier runs exposes window.comfyAPI.api.api; app.api
# is the fallback), and what it says about its websocket: the client id ComfyUI gave it, if any.
PAGE_API = """() => {
    const found = [['window.comfyAPI.api.api', window.comfyAPI?.api?.api], ['window.app.api', window.app?.api]]
        .find(([, api]) => api && typeof api.addEventListener === 'function');
    if (!found) return {where: null};
    const [where, api] = found;
    return {where, clientId: api.clientId || null, socket: api.socket ? api.socket.readyState : null};
}"""
CLIENT_ID_TIMEOUT_MS = 120000  # the socket's first message can wait behind a loaded machine's module loading


def wait_for_client_id(page, timeout=None):
    """Wait until the page's websocket has named it (the "status" message's sid becomes api.clientId). A prompt
    queued before carries client_id "" and ComfyUI sends its executed/progress messages to no page, so whatever
    the test waits for next would time out however long it is. Fails here, saying so, when the id never comes."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    timeout = CLIENT_ID_TIMEOUT_MS if timeout is None else timeout
    try:
        page.wait_for_function(f"() => !!({PAGE_API})().clientId", timeout=timeout)
    except PlaywrightTimeout:
        state = page.evaluate(PAGE_API)
        where = state["where"] or "no api object (neither window.comfyAPI.api.api nor window.app.api)"
        socket = {None: "no socket", 0: "connecting", 1: "open", 2: "closing", 3: "closed"}.get(state.get("socket"), state.get("socket"))
        pytest.fail(f"the page's websocket never named it: {where}.clientId still unset after "
                    f"{timeout / 1000:g} s (socket {socket}); a prompt queued now would carry client_id '' and its "
                    "results would reach no page", pytrace=False)


def open_comfy(browser, comfy_host, vue_nodes=False, settings=None):
    """A fresh context on ComfyUI's page with first-run screens pre-dismissed, once the graph is up and the page's
    websocket has named it (so a prompt queued next gets its results back); returns (page, console)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=comfy_host.url)
    page = ctx.new_page()
    console = ConsoleLog()
    page.on("console", lambda m: console.append({"type": m.type, "text": m.text, "url": (m.location or {}).get("url", "")}))
    page.on("pageerror", lambda e: console.append({"type": "pageerror", "text": str(e), "url": ""}))
    pre = {"Comfy.TutorialCompleted": True, "Comfy.VueNodes.Enabled": vue_nodes, "Comfy.Workflow.ShowMissingModelsWarning": False}
    pre.update(settings or {})
    for key, value in pre.items():
        comfy_host.post(f"/settings/{key}", value)
    page.goto(comfy_host.url + "/", wait_until="domcontentloaded")
    page.wait_for_function("() => window.app && window.app.graph && window.LiteGraph && window.app.canvas", timeout=60000)
    page.keyboard.press("Escape")
    page.frontend = comfy_host.frontend
    try:
        wait_for_client_id(page)
    except BaseException:
        ctx.close()
        raise
    return page, console


@pytest.fixture
def comfy_page(browser, comfy_host):
    page, console = open_comfy(browser, comfy_host)
    yield page, console
    page.context.close()


@pytest.fixture(scope="session")
def output_dir(comfy_host):
    """Screenshots per frontend: tests/output/ for the bundled one, tests/output/frontend-<version>/ for
    another (the README's pictures come from tests/output/frontend-1.58.1/, copied to docs/screenshots/)."""
    base = Path(__file__).resolve().parents[1] / "output"  # as tests/conftest.py's output_dir
    out = base if comfy_host.frontend == "bundled" else base / f"frontend-{comfy_host.frontend}"
    out.mkdir(parents=True, exist_ok=True)
    return out
