"""fix9: review rev8's S3 and D2 on kv's GGUF header reader, with hand-built headers and sizes worked out by hand from
ik_llama.cpp's ggml.h enum, ggml.c type_traits and ggml-common.h (8337e4cd).

S3. ik's repacks that keep their base's block (row_meta_size 0) and BitNet's I2_S (36) are read, not "corrupt GGUF
    header"; an ik id the pack does not size says so.
D2. The gguf package only adds ids the pack sizes: an older package's 36 or ik's own gguf-py removes none."""
import enum
import sys
import types

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import headers
from test_kv_fix8 import _ik_gguf


def test_repacks_keep_their_base_block():
    b = headers.GGML_BLOCKS
    assert b["Q4_0_R8"] == (32, 18)          # sizeof(block_iq4_nl) = half + 16
    assert b["Q8_0_R8"] == (32, 34)          # sizeof(block_q8_0) = half + 32
    assert b["Q4_K_R4"] == (256, 144) and b["Q6_K_R4"] == (256, 210)
    assert b["IQ4_XS_R8"] == (256, 136) and b["IQ2_XXS_R4"] == (256, 66)
    assert b["BF16_R16"] == (1, 2) and b["Q6_0_R4"] == (32, 26) and b["MXFP4_R8"] == (32, 17)
    ids = headers.GGML_TYPE_IDS
    assert (ids[202], ids[206], ids[208], ids[212], ids[216], ids[223], ids[230], ids[233], ids[36]) == (
        "Q4_0_R8", "Q5_0_R4", "Q8_0_R8", "Q4_K_R4", "IQ2_XXS_R4", "IQ4_XS_R8", "BF16_R16", "Q6_0_R4", "I2_S")


def test_ik_file_with_repacks_and_i2_s_reads(tmp_path):
    # q4_k_r4 256 x 4: 4 blocks x 144 = 576; iq4_xs_r8 256 x 8: 8 x 136 = 1088; q4_0_r8 64 x 8: 16 blocks x 18 = 288;
    # bf16_r16 16 x 16: 256 x 2 = 512; i2_s 128 x 4: 512 values / 4 + 32 = 160 (ggml_nbytes' I2_S hack)
    p = _ik_gguf(tmp_path / "ik.gguf", [("a", 212, (256, 4), 576), ("b", 223, (256, 8), 1088), ("c", 202, (64, 8), 288),
                                        ("d", 230, (16, 16), 512), ("e", 36, (128, 4), 160)])
    table = headers.read_tensors(p)
    assert table == {"a": ("Q4_K_R4", (4, 256)), "b": ("IQ4_XS_R8", (8, 256)), "c": ("Q4_0_R8", (8, 64)),
                     "d": ("BF16_R16", (16, 16)), "e": ("I2_S", (4, 128))}
    assert headers.table_bytes(table) == 576 + 1088 + 288 + 512 + 160


def test_ik_type_the_pack_does_not_size_is_no_corrupt_header(tmp_path):
    # 134 is ik's IQ1_BN (row meta 2, a 64-value block): not sized here
    p = _ik_gguf(tmp_path / "bn.gguf", [("a", 134, (64, 2), 64)])
    with pytest.raises(UserError) as e:
        headers.read_tensors(p)
    assert "ik_llama.cpp tensor type (id 134) the pack does not size" in str(e.value) and "corrupt" not in str(e.value)
    # an id neither fork defines below ik's range stays a corrupt header
    p = _ik_gguf(tmp_path / "bad.gguf", [("a", 37, (64, 2), 64)])
    with pytest.raises(UserError, match="corrupt GGUF header.*unknown type 37"):
        headers.read_tensors(p)


def test_package_only_adds_ids(monkeypatch):
    # an older mainline gguf-py (36 IQ4_NL_4_4, since removed) or ik's own (I2_S 36, no TQ1_0 34, NVFP4 40): neither
    # renames 36 nor removes 34 / 40
    Q = enum.IntEnum("GGMLQuantizationType", {"F32": 0, "Q4_0": 2, "IQ4_NL_4_4": 36, "IQ4_K": 139})
    monkeypatch.setitem(sys.modules, "gguf", types.SimpleNamespace(GGMLQuantizationType=Q))
    names = headers._ggml_type_names()
    assert names[36] == "I2_S" and names[34] == "TQ1_0" and names[40] == "NVFP4" and names[139] == "IQ4_K"


# --- D6 (benchmarks/llm_score.py) ----------------------------------------------------------------------------------------
def test_rel_err_zero_tolerance_in_the_call_unit():
    from support.pack import load_benchmark
    load_benchmark("bench_llm")  # puts benchmarks/ on the path
    import llm_score
    # a printed 0.00 GiB: 0.0005 GiB (0.5 MiB) placed is under 1 / 1024 GiB (1 MiB): exact; 0.5 GiB is a 100 % miss
    assert llm_score.rel_err(0.0005, 0.0, zero_tol=1 / 1024) == 0.0
    assert llm_score.rel_err(0.5, 0.0, zero_tol=1 / 1024) == 1.0
    assert llm_score.rel_err(0.5, 0.0) == 0.0            # the default unit is MiB: 0.5 MiB is under 1
    assert abs(llm_score.rel_err(1.1, 1.0, zero_tol=1 / 1024) - 0.1) < 1e-12
