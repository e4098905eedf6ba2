"""`--write`: the workflow written back with its requirement in extra.gpu_garden.memory (workflow.metadata), to a file
check_write_target allows: new, empty, or a ComfyUI workflow JSON the user may write; written beside it and renamed
over it, so a crash or a full disk leaves the old file whole. Split from workflow.py (its size)."""
import json
import os
import tempfile
from pathlib import Path

from .host_ram import MODEL_FILE_EXT
from .workflow import MAX_WORKFLOW_BYTES, load, metadata
from ..errors import UserError

# ComfyUI's prompt format is node id -> node, with no other key its loader accepts: the estimate has nowhere to go
API_WRITE = ("--write: nothing written: --write needs the workflow in UI format (the .json of ComfyUI's Workflow > Save "
             "or Export, not Export (API)): an API-format prompt has no field to carry the estimate; --workflow reads "
             "either format")


class _Incomplete(UserError):
    pass


def is_workflow(data) -> bool:
    """A ComfyUI UI workflow (its nodes objects with an id and a type, its links a list) or an API prompt (every value
    an object with a string class_type and an inputs object). A d3/networkx graph also has "nodes"; it is neither."""
    if not isinstance(data, dict) or not data:
        return False
    if "nodes" in data:
        return (isinstance(data["nodes"], list) and isinstance(data.get("links"), list)
                and all(isinstance(n, dict) and "id" in n and isinstance(n.get("type"), str) for n in data["nodes"]))
    return all(isinstance(v, dict) and isinstance(v.get("class_type"), str) and isinstance(v.get("inputs"), dict)
               for v in data.values())


def check_write_target(out_path) -> Path:
    """--write's file, refused before anything is estimated unless it is new, empty (or only whitespace) or a ComfyUI
    workflow JSON the user may write: a model file's name given by mistake (--write vae/ae.safetensors) was replaced
    by the workflow's few KB, and a read-only file was replaced through its folder."""
    p = Path(out_path)
    refuse = f"--write {out_path}: nothing written: "
    if p.suffix.lower() in MODEL_FILE_EXT:
        raise UserError(refuse + f"{p.suffix} is a model file's extension; --write takes the .json to write the workflow to")
    if p.is_dir():
        raise UserError(refuse + "it is a directory; --write takes the .json to write the workflow to")
    if not p.parent.is_dir():
        raise UserError(refuse + f"no folder {p.parent}")
    if not p.exists():
        return p
    if not p.is_file():
        raise UserError(refuse + "not a regular file")
    if not os.access(p, os.W_OK) or not p.stat().st_mode & 0o200:  # root passes os.access; the mode still says read-only
        raise UserError(refuse + "the file is read-only; make it writable or give another file")
    size = p.stat().st_size
    if size <= MAX_WORKFLOW_BYTES and not p.read_bytes().strip(b" \t\r\n"):
        return p  # empty, or only whitespace
    try:
        data = load(p)
    except (UserError, OSError, RecursionError) as exc:
        why = str(exc).removeprefix(f"{p}: ")
    else:
        if is_workflow(data):
            return p
        why = "a JSON object, but no ComfyUI nodes with an id and a type and no API prompt of class_type entries"
    raise UserError(refuse + f"it holds something other than a ComfyUI workflow ({why}); only a workflow JSON is "
                    "replaced, so give a new file or the workflow's own .json")


def write(wf: dict, est: dict, p: Path) -> Path:
    """Write wf with est's requirement to p, a target check_write_target has passed."""
    if not isinstance(wf.get("nodes"), list):
        raise UserError(API_WRITE)
    if est["workflow"]["missing"]:  # a shared workflow must not carry "fits" for a graph we could not see whole
        raise _Incomplete(f"--write: nothing written: the estimate is incomplete ({est['outcome']['reason']})")
    wf.setdefault("extra", {}).setdefault("gpu_garden", {})["memory"] = metadata(est)
    # a temporary file beside the target, renamed over it: a crash or a full disk leaves the old file whole
    target = Path(os.path.realpath(p))  # a symlink's target is written, the link kept
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:  # a folder not writable: name the file asked for, not the temporary
        raise OSError(exc.errno, exc.strerror, str(p)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(wf, indent=1))
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
