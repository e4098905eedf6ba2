"""Task ellm65 (kv-accuracy round 87, batch 91 after its first sight).

llama.cpp's build_info: common/build-info.cpp.in's llama_build_info() returns "b" + LLAMA_BUILD_NUMBER + "-" +
LLAMA_COMMIT (cmake/build-info.cmake: `git rev-list --count HEAD` and `git rev-parse --short HEAD`; read in
TheTom/llama-cpp-turboquant at 69d8e4be, which carries upstream's history). llama-server prints it at start and in
/props; the Strix Halo row of batch 91 gives 'b8157-2943210c1', and upstream commit 2943210c1 (2026-02-26, #19889) has
rev-list count 8157. The form was added at 485dc0121 ("server : add system_fingerprint", #10917, 2024-12-23), whose
count is 4383: a lower number in it is no upstream build (havenoammo's image prints 'b484-2c4055912').
"""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm.runtimes import BUILD_INFO_SINCE, parse_version

PERSONA = "llamacpp-persona-qwen3-30b-a3b-2507-q5km-strixhalo-vulkan-32k-np4-q8kv"


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_build_info_reads_as_its_build():
    assert parse_version("b8157-2943210c1", "llama.cpp") == (8157,)
    assert parse_version("b4383-485dc0121", "llama.cpp") == (4383,)  # the first build that prints the form
    # the forms parse_version already read, unchanged: the build tag and llama_print_build_info's "8157 (2943210c1)"
    assert parse_version("b8157", "llama.cpp") == (8157,)
    assert parse_version("8157 (2943210c1)", "llama.cpp") == (8157,)
    # Lemonade's text still reads as its own numbering (the newest), not as build 1
    assert parse_version("lemonade llamacpp-rocm b1259 (build_info b1-e77056f)", "llama.cpp") is None


def test_build_info_below_its_first_build_is_refused():
    assert BUILD_INFO_SINCE == 4383
    for v in ("b484-2c4055912", "b1-e77056f", "b4382-485dc012"):
        with pytest.raises(UserError, match="from b4383 on"):
            parse_version(v, "llama.cpp")


def test_the_strix_halo_row_is_scored():
    # Qwen3-30B-A3B: 48 layers x 4 KV heads x 128 x (K + V) = 49,152 values a cell; 32,768 cells (4 sequences of
    # 8192, not unified) -> 1,610,612,736 values at q8_0's 34 bytes a 32-value block (1.0625 bytes) = 1,711,276,032
    # bytes = 1632.00 MiB, the printed 'KV buffer size = 1632.00 MiB' (816 MiB K + 816 MiB V)
    b, rows = _rows()
    s = b.score(rows[PERSONA])
    assert "error" not in s
    assert s["kv"][:2] == (1632.0, 1632.0) and s["kv_exact"]


PHI4 = "ollama-jazzwang-phi4-14b-q4km-4060laptop-2k-29of41"


def test_phi4_is_the_ollama_library_tag_of_phi4():
    from gpu_garden.memory.llm.ollama_tags import ollama_tag
    # ollama/ollama README at 57f038ec7 (2025-01-08, #8350): 'Phi 4 | 14B | 9.1GB | ollama run phi4'
    for name in ("phi4", "phi4:latest", "phi4:14b"):
        built, quant, _ = ollama_tag(name)
        assert (built, quant) == ("Phi-4", "Q4_K_M")  # no F16 attn_qkv: published before the March 2025 quantizer
    assert ollama_tag("phi4:14b-q8_0")[:2] == ("Phi-4", "Q8_0")
    with pytest.raises(UserError, match="sizes read are 14b"):
        ollama_tag("phi4:3.8b")  # phi4-mini's size is its own library's, not phi4's


def test_the_phi4_row_is_scored():
    # Phi-4: 40 layers x 10 KV heads x 128 x (K + V) x 2 bytes (f16) = 204,800 bytes a cell; 2048 cells (one
    # sequence) = 419,430,400 bytes = 400.00 MiB, the printed 'KV self size = 400.00 MiB' (200 K + 200 V). Output
    # tensor: 100,352 x 5120 = 513,802,240 values at Q6_K's 210 bytes a 256-value block = 421,478,400 bytes =
    # 401.95 MiB (printed memory.weights.nonrepeating 402.0 MiB)
    b, rows = _rows()
    s = b.score(rows[PHI4])
    assert "error" not in s
    assert s["kv"][:2] == (400.0, 400.0) and s["kv_exact"]
    assert s["output_mib"] == (402.0, 402.0)
    assert s["fits"] == (False, False)  # 29 of 41 layers on the 6.9 GiB available
