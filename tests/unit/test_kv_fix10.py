"""fix10k: review rev9's S3-S6 and D6-D8 on kv's GGUF reader and rules, with hand-built headers and values worked out
by hand from llama.cpp's / ik_llama.cpp's source (each test says where).

S6. Type id 36 is ik's / MS BitNet's I2_S only in a header that is ik's (another id from ik's range, 97 up) or BitNet's
    (general.architecture bitnet*); else "ambiguous type id 36": a 2024 mainline IQ4_NL_4_4 is not sized as I2_S."""
import struct

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import headers


def _gguf(path, tensors, arch=None):
    """A GGUF v3 header by hand: general.architecture (when given), tensor infos (name, type id, dims fastest first,
    bytes), data at 32."""
    kv = b""
    if arch is not None:
        key = b"general.architecture"
        kv = struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, len(arch)) + arch.encode()
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1 if arch is not None else 0) + kv
    off = 0
    for name, qt, dims, nbytes in tensors:
        head += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        head += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", qt, off)
        off += nbytes
    head += b"\0" * (-len(head) % 32)
    path.write_bytes(head + b"\0" * off)
    return path


# i2_s 128 x 4: 512 values / 4 + 32 = 160 bytes (ik's ggml_nbytes "hack for I2_S"); as IQ4_NL_4_4 (18 bytes a 32) the
# same tensor would be 16 blocks x 18 = 288 bytes, so the data region below holds both readings
I2S = ("blk.0.attn_q.weight", 36, (128, 4), 288)


def test_id_36_alone_is_ambiguous(tmp_path):
    # no other ik id (F32 0 and Q4_K 12 are both forks'), architecture llama: refused, not read as I2_S
    p = _gguf(tmp_path / "m.gguf", [I2S, ("output_norm.weight", 0, (128,), 512), ("token_embd.weight", 12, (256, 2), 288)],
              arch="llama")
    with pytest.raises(UserError, match="ambiguous type id 36") as e:
        headers.read_tensors(p)
    assert "corrupt" not in str(e.value)
    # no metadata at all: the same
    with pytest.raises(UserError, match="ambiguous type id 36"):
        headers.read_tensors(_gguf(tmp_path / "n.gguf", [I2S]))


@pytest.mark.parametrize("arch", ["bitnet", "bitnet-25", "bitnet-b1.58"])   # ik's llama-arch.cpp names
def test_id_36_in_a_bitnet_header_is_i2_s(tmp_path, arch):
    table = headers.read_tensors(_gguf(tmp_path / "b.gguf", [I2S], arch=arch))
    assert table == {"blk.0.attn_q.weight": ("I2_S", (4, 128))}
    assert headers.table_bytes(table) == 160


def test_id_36_beside_another_ik_id_is_i2_s(tmp_path):
    # ik's IQ4_K (139) 256 x 1: one block of 144 bytes; arch llama
    p = _gguf(tmp_path / "ik.gguf", [I2S, ("blk.0.ffn_up.weight", 139, (256, 1), 144)], arch="llama")
    table = headers.read_tensors(p)
    assert table["blk.0.attn_q.weight"] == ("I2_S", (4, 128)) and headers.table_bytes(table) == 160 + 144
