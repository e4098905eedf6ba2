"""Sparse .safetensors files for tests: the header, then a hole as long as the data (no bytes written)."""
import json
import struct


def sparse_safetensors(path, tensors, nbytes=None):
    """tensors: {name: (dtype, shape)}. nbytes: bytes an element by dtype; F32 takes 4 and any other dtype 2
    unless given (a packed I32 of GPTQ/AWQ takes 4 where a test says so)."""
    size = {"F32": 4, **(nbytes or {})}
    header, off = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = size.get(dtype, 2)
        for x in shape:
            n *= x
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + off)
