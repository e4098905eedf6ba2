"""Bundled header-only layouts of real model files, and writing them out as sparse safetensors."""
import gzip
import json
import os
from pathlib import Path

LAYOUT_DIR = Path(__file__).with_name("layouts")

DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
               "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}


def names() -> list[str]:
    return sorted(p.name[:-len(".json.gz")] for p in LAYOUT_DIR.glob("*.json.gz"))


def load(name: str) -> dict:
    with gzip.open(LAYOUT_DIR / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def table(name: str) -> dict:
    """A layout as the tensor table the estimate reads from a file's header: {key: (dtype, shape)}."""
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in load(name)["tensors"].items()}


def tensor_nbytes(dtype: str, shape) -> int:
    n = DTYPE_BYTES[dtype]
    for d in shape:
        n *= d
    return n


def safetensors_header(layout: dict) -> dict:
    """The header a real file with these tensors has: data_offsets in key order, packed."""
    header, offset = {}, 0
    if layout.get("__metadata__"):
        header["__metadata__"] = layout["__metadata__"]
    for name, t in layout["tensors"].items():
        size = tensor_nbytes(t["dtype"], t["shape"])
        header[name] = {"dtype": t["dtype"], "shape": list(t["shape"]), "data_offsets": [offset, offset + size]}
        offset += size
    return header


def write_sparse(layout: dict | str, path: str | os.PathLike) -> Path:
    """Write a safetensors file with this layout; the data is zeros and left as a hole (sparse)."""
    if isinstance(layout, str):
        layout = load(layout)
    header = safetensors_header(layout)
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    data_len = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(len(blob).to_bytes(8, "little"))
        f.write(blob)
        f.truncate(8 + len(blob) + data_len)
    return path
