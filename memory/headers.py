"""Tensor tables of model files, read from their headers only: safetensors (bounded read of the 8-byte
length + JSON) and GGUF (the `gguf` package). Cost is flat in file size; bad files raise UserError.

A tensor table is {name: (dtype, shape)}: dtype a safetensors name ("BF16", "F8_E4M3") or a GGML type
name ("Q4_K"), shape in PyTorch order. The node builds the same table from loaded state dicts."""
import json
import math
import os
import struct
from pathlib import Path

from .errors import UserError

# safetensors dtypes -> bytes per element (F8 "scaled" files are plain F8 tensors plus F32 scale tensors)
ST_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
            "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E4M3FNUZ": 1, "F8_E5M2FNUZ": 1, "F8_E8M0": 1,
            "I8": 1, "U8": 1, "BOOL": 1}
# GGML types -> (elements per block, bytes per block), as gguf.GGML_QUANT_SIZES (kept here so the byte
# count of a table needs no optional package)
GGML_BLOCKS = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "F64": (1, 8), "I8": (1, 1), "I16": (1, 2), "I32": (1, 4),
    "I64": (1, 8), "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q8_1": (32, 40), "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176),
    "Q6_K": (256, 210), "Q8_K": (256, 292), "IQ2_XXS": (256, 66), "IQ2_XS": (256, 74), "IQ3_XXS": (256, 98),
    "IQ1_S": (256, 50), "IQ4_NL": (32, 18), "IQ3_S": (256, 110), "IQ2_S": (256, 82), "IQ4_XS": (256, 136),
    "IQ1_M": (256, 56), "TQ1_0": (256, 54), "TQ2_0": (256, 66), "MXFP4": (32, 17), "NVFP4": (64, 36),
    "Q1_0": (128, 18),
}
# torch dtype names (what a loaded state dict says) -> safetensors names
TORCH_NAMES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3",
               "float8_e5m2": "F8_E5M2", "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ",
               "float8_e8m0fnu": "F8_E8M0", "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
               "uint8": "U8", "bool": "BOOL", "uint16": "U16", "uint32": "U32", "uint64": "U64"}

MAX_HEADER = 100 * 1000 * 1000  # the safetensors library's own limit
MAX_GGUF_COUNT = 1 << 20
GGUF_MAGIC = b"GGUF"


def dtype_bytes(dtype: str) -> float:
    """Bytes per element (fractional for block quants)."""
    if dtype in ST_BYTES:
        return ST_BYTES[dtype]
    if dtype in GGML_BLOCKS:
        n, b = GGML_BLOCKS[dtype]
        return b / n
    raise KeyError(dtype)


def tensor_bytes(dtype: str, shape) -> int:
    n = math.prod(int(d) for d in shape)
    if dtype in ST_BYTES:
        return n * ST_BYTES[dtype]
    block, size = GGML_BLOCKS[dtype]
    return -(-n // block) * size


def table_bytes(table: dict) -> int:
    return sum(tensor_bytes(d, s) for d, s in table.values())


def torch_dtype_name(dtype) -> str:
    """torch.bfloat16 (or its str) -> "BF16"."""
    name = str(dtype).replace("torch.", "")
    return TORCH_NAMES.get(name, name.upper())


def read_tensors(path) -> dict:
    """{name: (dtype, shape)} of a .safetensors or .gguf file, from its header."""
    path = _checked_path(path)
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == GGUF_MAGIC:
        return read_gguf(path)
    return read_safetensors(path)


def _checked_path(path) -> Path:
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a directory, not a model file")
    if not path.exists():
        raise UserError(f"{path}: no such file")
    if not path.is_file():
        raise UserError(f"{path}: not a regular file")
    if path.stat().st_size == 0:
        raise UserError(f"{path}: empty file (0 bytes)")
    return path


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def read_safetensors_header(path) -> dict:
    """The raw, validated header dict (without __metadata__ checks beyond its type)."""
    path = _checked_path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise UserError(f"{path}: truncated safetensors file ({size} bytes, header length needs 8)")
        (n,) = struct.unpack("<Q", head)
        if n < 2 or n > MAX_HEADER:
            raise UserError(f"{path}: not a safetensors file (header length {n} bytes is impossible)")
        if n > size - 8:
            raise UserError(f"{path}: truncated safetensors header (says {n} bytes, file has {size - 8} after the length)")
        blob = f.read(n)
    if len(blob) != n:
        raise UserError(f"{path}: truncated safetensors header")
    try:
        header = json.loads(blob.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError:
        raise UserError(f"{path}: safetensors header is not UTF-8 text") from None
    except ValueError as exc:
        raise UserError(f"{path}: safetensors header is not valid JSON ({_short(exc)})") from None
    if not isinstance(header, dict):
        raise UserError(f"{path}: safetensors header is not a JSON object")
    meta = header.get("__metadata__")
    if meta is not None and not isinstance(meta, dict):
        raise UserError(f"{path}: safetensors __metadata__ is not an object")
    data_len = size - 8 - n
    for name, t in header.items():
        if name != "__metadata__":
            _check_entry(path, name, t, data_len)
    return header


def _check_entry(path, name, t, data_len):
    if not isinstance(t, dict):
        raise UserError(f"{path}: tensor {name!r}: entry is not an object")
    dtype, shape, off = t.get("dtype"), t.get("shape"), t.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in ST_BYTES:
        raise UserError(f"{path}: tensor {name!r}: unknown dtype {str(dtype)[:20]!r}")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape) or len(shape) > 16:
        raise UserError(f"{path}: tensor {name!r}: bad shape {str(shape)[:40]}")
    if (not isinstance(off, list) or len(off) != 2 or not all(type(o) is int for o in off)
            or not 0 <= off[0] <= off[1]):
        raise UserError(f"{path}: tensor {name!r}: bad data_offsets {str(off)[:40]}")
    if off[1] - off[0] != tensor_bytes(dtype, shape):
        raise UserError(f"{path}: tensor {name!r}: data_offsets span {off[1] - off[0]} bytes but "
                        f"{dtype}{shape} needs {tensor_bytes(dtype, shape)}")
    if off[1] > data_len:
        raise UserError(f"{path}: tensor {name!r}: data ends at byte {off[1]} past the file's {data_len} data bytes (truncated?)")


def read_safetensors(path) -> dict:
    header = read_safetensors_header(path)
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in header.items() if k != "__metadata__"}


def read_gguf(path) -> dict:
    path = _checked_path(path)
    _check_gguf_preamble(path)
    try:
        import gguf
    except ImportError:
        raise UserError(f"{path}: reading GGUF files needs the 'gguf' package (pip install gguf)") from None
    try:
        reader = gguf.GGUFReader(str(path), "r")
        out = {}
        for t in reader.tensors:
            name = str(t.name)
            if name in out:
                raise ValueError(f"duplicate tensor {name!r}")
            qtype = gguf.GGMLQuantizationType(int(t.tensor_type)).name
            shape = tuple(int(d) for d in reversed([int(x) for x in t.shape]))
            out[name] = (qtype, shape)
        return out
    except UserError:
        raise
    except Exception as exc:  # the reader raises ValueError, KeyError, IndexError... on garbage
        raise UserError(f"{path}: unreadable GGUF file ({type(exc).__name__}: {_short(exc)})") from None


def _check_gguf_preamble(path):
    """Refuse absurd counts before the gguf reader loops over them."""
    with open(path, "rb") as f:
        pre = f.read(24)
    if len(pre) < 24 or pre[:4] != GGUF_MAGIC:
        raise UserError(f"{path}: truncated GGUF header")
    version, n_tensors, n_kv = struct.unpack("<IQQ", pre[4:24])
    if version not in (2, 3):
        raise UserError(f"{path}: unsupported GGUF version {version}")
    size = os.path.getsize(path)
    if n_tensors > MAX_GGUF_COUNT or n_kv > MAX_GGUF_COUNT or n_tensors * 24 > size:
        raise UserError(f"{path}: corrupt GGUF header ({n_tensors} tensors, {n_kv} metadata keys)")


def _short(exc) -> str:
    s = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return s[:120]
