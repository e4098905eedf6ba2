"""Type-checks the web/ modules that carry `// @ts-check` (JSDoc types) with TypeScript's tsc.

web/ is laid out as ComfyUI serves it (`extensions/<pack>/...` beside `scripts/app.js`), with `app` and `api`
stubbed as `any`, so the relative imports resolve and each module is checked against the others and the DOM.
Skips when node or tsc is missing. tsc is looked up as $GPU_GARDEN_TSC, on PATH, or in the cache that
`npm install --prefix ~/.cache/gpu_garden/node typescript@5` fills."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "web"
CACHE_TSC = Path(os.environ.get("GPU_GARDEN_CACHE") or Path.home() / ".cache" / "gpu_garden") / "node" / "node_modules" / ".bin" / "tsc"
TSCONFIG = """{"compilerOptions": {"allowJs": true, "checkJs": false, "noEmit": true, "target": "es2022", "module": "es2022",
  "moduleResolution": "bundler", "lib": ["es2023", "dom", "dom.iterable"], "strict": false, "skipLibCheck": true},
 "include": ["extensions/pack/**/*.js", "scripts/*.js"]}"""


def find_tsc():
    for cand in (os.environ.get("GPU_GARDEN_TSC"), shutil.which("tsc"), str(CACHE_TSC)):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def checked_files():
    return sorted(p.relative_to(WEB).as_posix() for p in WEB.rglob("*.js") if p.read_text().startswith("// @ts-check"))


def test_the_adapters_and_shared_helpers_are_type_checked():
    files = checked_files()
    for must in ("lib/format.js", "lib/frontend.js", "lib/graph_adapter.js", "lib/sidebar.js", "lib/oom_place.js", "oom_panel.js"):
        assert must in files, f"web/{must} lost its // @ts-check line"


def run_tsc(tmp_path, web_dir):
    tsc = find_tsc()
    if not tsc or not shutil.which("node"):
        pytest.skip("node and TypeScript's tsc are needed (npm install --prefix ~/.cache/gpu_garden/node typescript@5)")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "app.js").write_text("/** @type {any} */\nexport const app = {};\n")
    (tmp_path / "scripts" / "api.js").write_text("/** @type {any} */\nexport const api = {};\n")
    (tmp_path / "extensions").mkdir()
    shutil.copytree(web_dir, tmp_path / "extensions" / "pack")
    (tmp_path / "tsconfig.json").write_text(TSCONFIG)
    return subprocess.run([tsc, "-p", str(tmp_path / "tsconfig.json")], capture_output=True, text=True, timeout=240)


def test_web_modules_type_check(tmp_path):
    done = run_tsc(tmp_path, WEB)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checker_catches_a_type_error(tmp_path):
    """The check can fail: a number where format.js declares a string is reported."""
    bad = tmp_path / "bad_web"
    shutil.copytree(WEB, bad)
    src = (bad / "lib" / "format.js").read_text()
    (bad / "lib" / "format.js").write_text(src + "\n/** @type {string} */\nexport const broken = fmtBytes(1) * 2;\n")
    done = run_tsc(tmp_path / "run", bad) if (tmp_path / "run").mkdir() is None else None
    assert done.returncode != 0 and "format.js" in done.stdout, done.stdout
