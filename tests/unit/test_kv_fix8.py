"""fix8: review rev7's S/D findings on kv (one table of ggml block sizes, ik_llama.cpp's types read from a GGUF)."""
import struct

from gpu_garden.memory.estimate import headers
from gpu_garden.memory.llm import weights as W

# TYPE_BITS as it was spelled by hand before it was derived from headers.GGML_BLOCKS (rev7 S1): no value moves
MAINLINE_BITS = {"F32": 32, "F16": 16, "BF16": 16, "Q8_0": 8.5, "Q6_K": 6.5625, "Q5_K": 5.5, "Q5_0": 5.5, "Q5_1": 6.0,
                 "Q4_K": 4.5, "Q4_0": 4.5, "Q4_1": 5.0, "IQ4_NL": 4.5, "IQ4_XS": 4.25, "Q3_K": 3.4375,
                 "Q2_K": 2.625, "IQ3_S": 3.4375, "IQ3_XXS": 3.0625, "IQ2_S": 2.5625, "IQ2_XS": 2.3125,
                 "IQ2_XXS": 2.0625, "IQ1_M": 1.75, "IQ1_S": 1.5625, "TQ1_0": 1.6875, "TQ2_0": 2.0625, "MXFP4": 4.25}


def test_type_bits_derived_keeps_mainline_values():
    mainline = {t: b for t, b in W.TYPE_BITS.items() if t not in W.IK_TYPES}
    assert mainline == MAINLINE_BITS
    assert all(type(mainline[t]) is type(b) for t, b in MAINLINE_BITS.items())  # 32, not 32.0
    # the ik names: the five bases and the six _R4 repacks, the same bits as their base
    assert W.IK_TYPES == {"IQ2_K", "IQ3_K", "IQ4_K", "IQ5_K", "IQ6_K", "IQ2_K_R4", "IQ3_K_R4", "IQ4_K_R4", "IQ5_K_R4",
                          "Q2_K_R4", "Q3_K_R4",
                          # ellm75: the row-scale types (row_meta_size > 0), the iq1 _R4 repacks and q6_0
                          "IQ4_KS", "IQ4_KSS", "IQ5_KS", "IQ2_KS", "IQ3_KS", "IQ2_KL", "IQ1_KT", "IQ2_KT", "IQ3_KT",
                          "IQ4_KT", "IQ4_KS_R4", "IQ5_KS_R4", "IQ1_S_R4", "IQ1_M_R4", "Q6_0",
                          # fix9 (rev8 S3): the other base-sized repacks, MXFP4_R8 and BitNet's I2_S
                          "Q4_0_R8", "Q5_0_R4", "Q8_0_R8", "Q4_K_R4", "Q5_K_R4", "Q6_K_R4", "IQ2_XXS_R4", "IQ2_XS_R4",
                          "IQ3_XXS_R4", "IQ4_NL_R4", "IQ3_S_R4", "IQ2_S_R4", "IQ4_XS_R8", "BF16_R16", "Q6_0_R4",
                          "MXFP4_R8", "I2_S"}
    # one source: every type kv sizes, ik's too, is 8 x bytes / elements of a block in headers.GGML_BLOCKS
    assert all(W.TYPE_BITS[t] == 8 * headers.GGML_BLOCKS[t][1] / headers.GGML_BLOCKS[t][0] for t in W.TYPE_BITS)
    assert W.TYPE_BITS["IQ6_K"] == 212 * 8 / 256 == 6.625 and W.TYPE_BITS["Q3_K_R4"] == 3.4375


def _ik_gguf(path, tensors):
    """A GGUF v3 header by hand: no metadata, tensor infos (name, dims fastest first, type id, offset), data at 32."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 0)
    off, data = 0, 0
    for name, qt, dims, nbytes in tensors:
        head += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        head += struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", qt, off)
        off += nbytes
        data = off
    head += b"\0" * (-len(head) % 32)
    path.write_bytes(head + b"\0" * data)
    return path


def test_gguf_header_with_ik_types_reads(tmp_path):
    # iq4_k 512 x 4: 8 blocks of 256 x 144 B = 1152; q2_k_r4 256 x 2: 2 x 84 = 168; iq5_k_r4 256 x 1: 176
    p = _ik_gguf(tmp_path / "ik.gguf", [("blk.0.ffn_up_exps.weight", 139, (512, 4), 1152),
                                        ("blk.0.ffn_down_exps.weight", 210, (256, 2), 168),
                                        ("blk.0.ffn_gate_exps.weight", 340, (256,), 176)])
    table = headers.read_tensors(p)
    assert table == {"blk.0.ffn_up_exps.weight": ("IQ4_K", (4, 512)), "blk.0.ffn_down_exps.weight": ("Q2_K_R4", (2, 256)),
                     "blk.0.ffn_gate_exps.weight": ("IQ5_K_R4", (256,))}
    assert headers.table_bytes(table) == 1152 + 168 + 176
    # without the gguf package the same ids come from the table
    assert {headers.GGML_TYPE_IDS[i] for i in (139, 210, 340)} == {"IQ4_K", "Q2_K_R4", "IQ5_K_R4"}
    # (rev8 D1) ik's 41 (Q1_0_G128) is read as mainline's Q1_0, which sizes it right: both are 128 values in 18 bytes
    # (ik's ggml-common.h: QK1_0_G128 128, sizeof(block_q1_0_g128) == sizeof(ggml_half) + QK1_0_G128 / 8 = 2 + 16)
    assert headers.GGML_TYPE_IDS[41] == "Q1_0" and headers.GGML_BLOCKS["Q1_0"] == (128, 2 + 128 // 8)
