"""Task fix19b (session 19): the kv/CLI findings of this session's code review. Expected values are read from the
rows' own text and from the code paths named in each test, never computed by the code under test."""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- 1. a SGLang row that names a pool flag carries it
# SGLang's own log line 'max_mamba_cache_size: 82' is a printed result, not a flag: only the flag spelling counts.
_FLAGS = (("--max-mamba-cache-size", "max_mamba_cache_size", int),
          ("--swa-full-tokens-ratio", "swa_full_tokens_ratio", float))


def _texts(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for v in o.values():
            yield from _texts(v)
    elif isinstance(o, list):
        for v in o:
            yield from _texts(v)


def test_every_sglang_row_that_names_a_pool_flag_has_the_setting():
    rows = json.loads((ROOT / "benchmarks/data/llm_measured.json").read_text())["rows"]
    named = 0
    for row in rows:
        if row.get("runtime") != "sglang":
            continue
        text = " ".join(_texts({k: row.get(k) for k in ("inferred", "notes")}))
        for flag, field, cast in _FLAGS:
            said = {cast(m) for m in re.findall(re.escape(flag) + r"[ =]([0-9.]+)", text)}
            if said:
                named += 1
                assert len(said) == 1, (row["id"], flag, said)
                assert row["input"].get(field) == said.pop(), (row["id"], field)
    # batch 47's three rows and batch 36's sglang-alpharomercoma-qwen38-27b-int4-4090-65k-fp8-r4
    assert named >= 4


# ---------------------------------------------------------------- 2. which spellings mean --ctx: the table alone says
def _cli():
    from gpu_garden.memory import cli
    return cli


def test_a_ctx_spelling_added_to_the_table_gets_the_auto_hint(monkeypatch):
    # a row of RUNTIME_SPELLINGS["kv"] whose option to type is --ctx is all it takes; no second list to keep in step
    cli = _cli()
    kv = dict(cli.RUNTIME_SPELLINGS["kv"], **{"--max-seq-len": ("--ctx N", "a runtime's --max-seq-len")})
    monkeypatch.setitem(cli.RUNTIME_SPELLINGS, "kv", kv)
    msg = cli._unrecognized("kv", ["--max-seq-len", "auto"])
    assert "a runtime's --max-seq-len is --ctx N here" in msg
    assert "leave --ctx out" in msg


def test_the_auto_hint_follows_each_ctx_row_and_no_other():
    cli = _cli()
    for name in ("--max-model-len", "--context-length", "-c", "--ctx-size"):
        assert "leave --ctx out" in cli._unrecognized("kv", [f"{name}=auto"]), name
    # -np auto is not a context: no context hint
    assert "leave --ctx out" not in cli._unrecognized("kv", ["-np", "auto"])
    # a number after a context spelling: the spelling's hint only
    assert "leave --ctx out" not in cli._unrecognized("kv", ["-c", "8192"])
