"""Review rev3 T4/D5 (session 41): llama.cpp's build_info 'b<N>-<hash>' is read for llama.cpp only, its hash part is a
commit's short hex, and a fork's count at or past b4383 reads as that upstream build (not told apart; said in kv.md)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm.runtimes import parse_version


def test_build_info_is_read_for_llama_cpp_and_an_unnamed_runtime_only():
    assert parse_version("b8157-2943210c1", "llama.cpp") == (8157,)
    assert parse_version("b8157-2943210c1") == (8157,)
    for runtime in ("vllm", "ollama", "sglang"):
        with pytest.raises(UserError, match="cannot read a version"):
            parse_version("b8157-2943210c1", runtime)


def test_the_hash_part_is_a_short_commit():
    for text in ("b8157-dirty", "b6500-unknown", "b8157-29432", "b8157-" + "a" * 41):
        with pytest.raises(UserError):
            parse_version(text, "llama.cpp")
    assert parse_version("b8157-" + "a" * 40, "llama.cpp") == (8157,)
    assert parse_version("b8157-2943210", "llama.cpp") == (8157,)
