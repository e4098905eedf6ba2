"""Read a workflow file: a clear error for a folder, a missing file, an oversized or non-JSON one (workflow.py re-exports
load, the entry the CLI, the route and --write use)."""
import json
from pathlib import Path

from ..errors import UserError

MAX_WORKFLOW_BYTES = 32 << 20


def load(path) -> dict:
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{path}: is a directory, not a workflow file (give the .json that ComfyUI saved or exported)")
    if not p.is_file():
        raise UserError(f"{path}: no such workflow file")
    if p.stat().st_size > MAX_WORKFLOW_BYTES:
        raise UserError(f"{path}: {p.stat().st_size} bytes is too large for a workflow")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a JSON workflow ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a workflow is a JSON object")
    return data
