"""Calls one export of a web/ ES module in Node.js and returns its JSON result (skips the test when node is missing):
the unit tier checks the frontend's pure functions without a browser."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"


def call(module: str, export: str, *args):
    """`export(*args)` of web/<module>, its arguments and result passed as JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    src = (WEB / module).as_uri()
    script = (f"import {{ {export} }} from {json.dumps(src)}; "
              f"console.log(JSON.stringify({export}(...{json.dumps(list(args))})));")
    done = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
