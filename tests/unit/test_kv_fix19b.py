"""Task fix19b (session 19): the kv/CLI findings of this session's code review. Expected values are read from the
rows' own text and from the code paths named in each test, never computed by the code under test."""
import json
import re
from pathlib import Path

import pytest

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


# ---------------------------------------------------------------- 3. kv's exit status, said once and as the code sets it
def _kv(argv, capsys):
    rc = _cli().main(["kv"] + argv)
    return rc, " ".join(capsys.readouterr().out.split())


def _clauses():
    from gpu_garden.memory.llm import report
    text = " ".join(report.KV_EXIT_STATUS.split())
    zero, rest = text.split("exit status: 0 ", 1)[1].split("; 1 ", 1)
    one, two = rest.split("; 2 ", 1)
    return zero, one, two


def test_kv_help_is_the_one_statement_of_the_exit_status(capsys):
    from gpu_garden.memory.llm import report
    with pytest.raises(SystemExit):
        _cli().main(["kv", "--help"])
    assert " ".join(report.KV_EXIT_STATUS.split()) in " ".join(capsys.readouterr().out.split())
    # README and docs/kv.md point to it rather than restate it (they said only "Exit code 1 when it does not fit")
    for doc in ("README.md", "docs/kv.md"):
        text = (ROOT / doc).read_text()
        assert "Exit code 1 when it does not fit" not in text, doc
        assert "gpu-garden kv --help" in text, doc


def test_each_exit_status_says_what_the_run_that_gets_it_prints(capsys):
    zero, one, two = _clauses()
    # llama.cpp on 6 GiB prints 'fits with the flags below' and exits 0 (the review's case)
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--vram", "6", "--weights-dtype", "Q4_K_M",
                   "--ctx", "32768"], capsys)
    assert (rc, "fits with the flags below" in out) == (0, True)
    assert "with the flags it prints" in zero
    # vLLM on 18 GiB at 64 requests: 'does NOT fit', the flags give the largest context that does (20224), exit 1
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--vram", "18", "--ctx", "40960", "--parallel", "64"],
                  capsys)
    assert (rc, "the largest context that does (20224)" in out) == (1, True)
    assert "largest context" in one and "not fit as asked" not in one
    # vLLM past the model's 40,960 tokens, no GPU to judge: refused, exit 1
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--ctx", "100000"], capsys)
    assert (rc, "refuses to start" in out) == (1, True)
    assert "refuses" in one and "no GPU to judge" in zero
    # SGLang on 20 GiB: it starts, a request capped at 4,772 tokens, exit 0 (its verdict is the pool, not --ctx)
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "sglang", "--vram", "20", "--ctx", "40960"], capsys)
    assert (rc, "capped at 4,772 tokens" in out) == (0, True)
    assert "SGLang" in zero and "caps a request below --ctx" in zero
    assert "depends on the file" in one and two.startswith("usage or input error")
    # vLLM holding 6.61 of 8 requests of 16,384 tokens: the verdict line says so and it exits 1 (it exited 0)
    rc, out = _kv(["--model", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "--vram", "24", "--parallel", "8",
                   "--ctx", "16384"], capsys)
    assert (rc, "holds only 6.61 of the 8 requests" in out) == (1, True)
    assert "fewer than --parallel requests" in one and "fewer than --parallel" not in zero
