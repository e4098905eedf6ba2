"""Starts and drives a real ComfyUI as a subprocess: `COMFYUI_PYTHON main.py --cpu` on 127.0.0.1, with
`--base-directory TMP` so nothing is written into the ComfyUI checkout.

Which frontend it serves (the web tier runs on each):
- default: the one bundled with COMFYUI_DIR's requirements (ComfyUI 0.8.0 -> 1.35.9);
- COMFYUI_FRONTEND_ROOT=<dir>: `--front-end-root <dir>` (a `.../comfyui_frontend_package/static` folder);
- COMFYUI_FRONTEND=<version>: that `comfyui-frontend-package` from the registry, installed once with
  `pip install --target` into a cache outside the repo (frontend_cache_dir(), e.g.
  ~/.cache/gpu_garden/frontend-1.58.1) and served from there.
"""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_NODES = REPO / "tests" / "host" / "test_nodes"
PACK_DIR_NAME = "comfyui-gpu-garden"
CHECKPOINT = "gg_sd15.safetensors"


def host_unavailable_reason() -> str | None:
    d, py = os.environ.get("COMFYUI_DIR"), os.environ.get("COMFYUI_PYTHON")
    if not d or not py:
        return "host tests need COMFYUI_DIR (a ComfyUI checkout) and COMFYUI_PYTHON (its interpreter); not set"
    if not (Path(d) / "main.py").is_file():
        return f"COMFYUI_DIR={d} has no main.py"
    if not os.access(py, os.X_OK):
        return f"COMFYUI_PYTHON={py} is not executable"
    return None


def frontend_cache_dir(version: str) -> Path:
    base = Path(os.environ.get("GPU_GARDEN_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu_garden")
    return base / f"frontend-{version}"


def install_frontend(version: str) -> Path:
    """The static root of comfyui-frontend-package==version, pip-installed into the cache on first use."""
    target = frontend_cache_dir(version)
    static = target / "comfyui_frontend_package" / "static"
    if (static / "index.html").is_file():
        return static
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".partial-{os.getpid()}")
    python = os.environ.get("COMFYUI_PYTHON") or "python3"
    cmd = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(tmp),
           f"comfyui-frontend-package=={version}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not (tmp / "comfyui_frontend_package" / "static" / "index.html").is_file():
        raise RuntimeError(f"could not install comfyui-frontend-package=={version}: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    if not target.exists():
        tmp.rename(target)
    return static


def frontend_root() -> Path | None:
    """The --front-end-root this run asks for (None: ComfyUI's bundled frontend)."""
    root = os.environ.get("COMFYUI_FRONTEND_ROOT")
    if root:
        if not (Path(root) / "index.html").is_file():
            raise RuntimeError(f"COMFYUI_FRONTEND_ROOT={root} has no index.html")
        return Path(root)
    version = os.environ.get("COMFYUI_FRONTEND")
    return install_frontend(version) if version else None


def frontend_version(root: Path | None) -> str:
    """"1.58.1" for a frontend root (its dist-info or the version in a cache folder name); "bundled" for None."""
    if root is None:
        return "bundled"
    site = Path(root).resolve().parents[1]
    for info in site.glob("comfyui_frontend_package-*.dist-info"):
        return info.name[len("comfyui_frontend_package-"):-len(".dist-info")]
    return "unknown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ComfyHost:
    def __init__(self, base: Path):
        self.comfy_dir = Path(os.environ["COMFYUI_DIR"]).resolve()
        self.python = os.environ["COMFYUI_PYTHON"]
        self.base = Path(base)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.base / "comfyui.log"
        self.proc = None
        self.frontend_root = frontend_root()
        self.frontend = frontend_version(self.frontend_root)

    # -- lifecycle -------------------------------------------------------------------------------
    def prepare(self):
        from gpu_garden.memory.estimate import layouts  # loaded by tests/conftest.py

        nodes_dir = self.base / "custom_nodes"
        nodes_dir.mkdir(parents=True, exist_ok=True)
        for name, target in ((PACK_DIR_NAME, REPO), ("gpu_garden_test_nodes", TEST_NODES)):
            link = nodes_dir / name
            if not link.exists():
                link.symlink_to(target, target_is_directory=True)
        layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", self.base / "models" / "checkpoints" / CHECKPOINT)

    def start(self, timeout=180, extra_args=()):
        self.prepare()
        cmd = [self.python, "main.py", "--cpu", "--listen", "127.0.0.1", "--port", str(self.port),
               "--base-directory", str(self.base), "--disable-auto-launch", *extra_args]
        if self.frontend_root is not None:
            cmd += ["--front-end-root", str(self.frontend_root)]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, cwd=self.comfy_dir, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ComfyUI exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.get("/object_info/CheckpointLoaderSimple")
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ComfyUI did not answer within {timeout}s:\n{self.log_tail()}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if getattr(self, "_log", None):
            self._log.close()

    def restart(self):
        self.stop()
        self.start()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, n=60) -> str:
        return "\n".join(self.log_text().splitlines()[-n:])

    # -- HTTP ------------------------------------------------------------------------------------
    def request(self, method, path, body=None, timeout=30):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            ctype = r.headers.get("Content-Type", "")
        return json.loads(raw) if "json" in ctype and raw else raw

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body if body is not None else {}, **kw)

    # -- prompts ---------------------------------------------------------------------------------
    def websocket(self, client_id=None):
        import websocket  # websocket-client

        client_id = client_id or uuid.uuid4().hex
        ws = websocket.create_connection(f"ws://127.0.0.1:{self.port}/ws?clientId={client_id}", timeout=5)
        ws.client_id = client_id
        return ws

    def queue(self, prompt: dict, client_id=None) -> str:
        body = {"prompt": prompt}
        if client_id:
            body["client_id"] = client_id
        try:
            return self.post("/prompt", body)["prompt_id"]
        except urllib.error.HTTPError as e:
            raise AssertionError(f"/prompt refused: {e.read().decode(errors='replace')}") from e

    def wait(self, prompt_id: str, timeout=300) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hist = self.get(f"/history/{prompt_id}")
            if prompt_id in hist and hist[prompt_id].get("status", {}).get("completed") is not None:
                entry = hist[prompt_id]
                if entry["status"].get("status_str") in ("success", "error"):
                    return entry
            time.sleep(0.25)
        raise TimeoutError(f"prompt {prompt_id} did not finish in {timeout}s:\n{self.log_tail()}")

    def wait_idle(self, timeout=240):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            q = self.get("/queue")
            if not q["queue_running"] and not q["queue_pending"]:
                return
            time.sleep(0.5)
        raise TimeoutError(f"queue did not drain in {timeout}s")

    def run(self, prompt: dict, timeout=300, client_id=None) -> dict:
        return self.wait(self.queue(prompt, client_id), timeout)

    def collect_events(self, ws, until, timeout=120) -> list[dict]:
        """Read websocket JSON messages until `until(msg)` is true; returns all messages read."""
        import websocket

        msgs, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                raw = ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            if isinstance(raw, bytes):
                continue
            msg = json.loads(raw)
            msgs.append(msg)
            if until(msg):
                return msgs
        raise TimeoutError(f"no matching websocket event in {timeout}s; got types {[m.get('type') for m in msgs]}")


def sd15_prompt(text="a garden", width=64, height=64, steps=1, seed=1, extra: dict | None = None) -> dict:
    """The default text-to-image graph on the test checkpoint, API format. Node ids as ComfyUI's default."""
    p = {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CHECKPOINT}},
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": width, "height": height, "batch_size": 1}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": text, "clip": ["4", 1]}},
        "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["4", 1]}},
        "3": {"class_type": "KSampler", "inputs": {"seed": seed, "steps": steps, "cfg": 7.0, "sampler_name": "euler",
                                                   "scheduler": "normal", "denoise": 1.0, "model": ["4", 0],
                                                   "positive": ["6", 0], "negative": ["7", 0], "latent_image": ["5", 0]}},
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
        "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "gg", "images": ["8", 0]}},
    }
    p.update(extra or {})
    return p
