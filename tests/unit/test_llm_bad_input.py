"""Bad input to `gpu-garden kv`'s readers: any model name, repo id or Ollama tag, any --runtime-version and any
bytes in a --gguf or --config file give a spec or a clear UserError, never a traceback (the name reader gained
repo-id read-through, distilled bases and quant suffixes this session; none had a garbage test)."""
import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from gpu_garden.memory.errors import UserError  # noqa: E402
from gpu_garden.memory.llm import kv as llm  # noqa: E402
from gpu_garden.memory.llm.runtimes import parse_version  # noqa: E402

PIECES = ["qwen2.5", "Qwen2.5-72B", "-", "/", ":", "unsloth", "distill", "-qwen-", "32b", "0.5b", "mini", "q4_k_m", "-GGUF",
          "bnb-4bit", "AWQ", "llama3.1", ":8b-instruct-q8_0", "deepseek-r1", "-v0.3", "b", ".", "é", "\x00", " ", "latest", "9" * 30]


def _name_ok(name):
    try:
        s = llm.describe(model=name)
    except UserError as e:
        assert str(e)
        return
    assert s.n_layers > 0 and s.hidden > 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_any_model_name_gives_a_spec_or_a_clear_error(name):
    _name_ok(name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=10))
def test_pieces_of_real_names_give_a_spec_or_a_clear_error(parts):
    _name_ok("".join(parts))


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=30), st.integers(), st.floats(allow_nan=True)))
def test_any_runtime_version_reads_or_says_why(v):
    try:
        out = parse_version(v)
    except UserError as e:
        assert "cannot read a version" in str(e)
        return
    assert out is None or (isinstance(out, tuple) and all(isinstance(p, int) for p in out))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2000))
def test_garbage_gguf_and_config_files_are_clear_errors(tmp_path_factory, data):
    d = tmp_path_factory.mktemp("bad")
    for name, kw in (("x.gguf", "gguf"), ("config.json", "config")):
        p = d / name
        p.write_bytes(data)
        try:
            llm.describe(**{kw: str(p)})
        except UserError as e:
            assert str(e)


def test_a_gguf_with_a_real_magic_and_a_truncated_header_is_a_clear_error(tmp_path):
    p = tmp_path / "cut.gguf"
    p.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (10 ** 12).to_bytes(8, "little") + (10 ** 12).to_bytes(8, "little"))
    with pytest.raises(UserError):
        llm.describe(gguf=str(p))
