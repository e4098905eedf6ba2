"""A PyTorch .pth/.pt file read without running its pickle: torch.save's zip format stores each tensor storage as an
archive entry (<archive>/data/<n>), so their sizes are the weights' stored bytes (zipfile, no unpickling). The keys and
shapes come from torch.load(weights_only=True, mmap=True, map_location="cpu") where torch is importable (ComfyUI's
Python always has it; load_torch_file(safe_load=True) reads the file so, comfy/utils.py:86-87): mapped, not read whole.
A pre-1.6 (legacy, not zip) file is loaded with weights_only=True without mmap when under LEGACY_MAX. Anything else (a
corrupt or truncated zip, a file that is no PyTorch file) is a UserError whose line names it; nothing is unpickled
beyond what weights_only allows."""
import re
import zipfile
from pathlib import Path

from .headers import checked_path, torch_dtype_name
from ..errors import UserError

# torch.serialization's legacy format starts with pickle protocol 2 and its magic number 0x1950a86a20f9469cfc6c
LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
LEGACY_MAX = 2 << 30
_DATA = re.compile(r"^[^/]+/data/\d+$")


def stored_bytes(path) -> int:
    """Total bytes of a torch zip file's tensor storages (its data/<n> entries); UserError for no such zip."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.infolist()
            if not any(i.filename.endswith("/data.pkl") or i.filename == "data.pkl" for i in names):
                raise UserError(f"{path}: a zip archive without data.pkl, not a PyTorch file")
            return sum(i.file_size for i in names if _DATA.match(i.filename))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise UserError(f"{path}: a corrupt PyTorch zip file ({exc})") from None


def _table(obj, depth=0):
    """torch.load's result as {key: (dtype, shape)} (nested dicts kept as dicts); non-tensor values dropped."""
    out = {}
    for k, v in obj.items() if isinstance(obj, dict) else ():
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            out[str(k)] = (torch_dtype_name(v.dtype), list(v.shape))
        elif isinstance(v, dict) and depth < 3:
            out[str(k)] = _table(v, depth + 1)
    return out


def read(path):
    """(table or None, stored bytes, why) of a .pth/.pt file: table {key: (dtype, shape)} from torch.load (weights_only,
    mmap), None where torch is not importable or cannot list it (why says so, stored bytes stand)."""
    path = checked_path(path)
    is_zip = zipfile.is_zipfile(path)
    if is_zip:
        stored = stored_bytes(path)
    else:
        with open(path, "rb") as f:
            head = f.read(len(LEGACY_MAGIC))
        if head != LEGACY_MAGIC:
            raise UserError(f"{path}: not a PyTorch file (neither torch.save's zip format nor its legacy format) and "
                            "not a .safetensors file")
        stored = Path(path).stat().st_size
        if stored > LEGACY_MAX:
            return None, stored, "a legacy (pre-zip) PyTorch file too large to load for its keys"
    try:
        import torch
    except ImportError:
        return None, stored, "torch is not importable here: its weights as stored, the architecture not read"
    try:
        sd = torch.load(str(path), map_location="cpu", weights_only=True, **({"mmap": True} if is_zip else {}))
    except Exception as exc:  # a truncated storage, a pickle weights_only refuses: that file's line, not a crash
        raise UserError(f"{path}: not loaded by torch.load(weights_only=True) ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:160] if str(exc) else ''})") from None
    if not isinstance(sd, dict):
        raise UserError(f"{path}: holds a {type(sd).__name__}, not a state dict")
    return _table(sd), stored, None
