"""Bad input to the run store's readers and `gpu-garden estimate --measured`: bounded memory and a clear error.
A wrong file given as --measured (a model, a log without newlines) was read one "line" at a time, each line whole
in memory before the length check: 300 MB without a newline took 600 MB. An API workflow whose "prompt" is not an
object ended in an AttributeError traceback."""
import io
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.recorder import measured, store


def test_read_lines_never_holds_more_than_one_bounded_line():
    good = store.dumps({"prompt_id": "a", "nodes": []})
    src = io.StringIO("x" * 10_000 + "\n" + good + "\n" + "y" * 5_000)  # an overlong line, a run, an overlong tail
    got = list(store.read_lines(src, 100))
    assert got == [good + "\n"]
    assert [r["prompt_id"] for r in store.parse_lines(store.read_lines(io.StringIO(good + "\n" + good), 100))] == ["a", "a"]


def test_measured_file_that_holds_no_run_is_a_usage_error(tmp_path):
    junk = tmp_path / "model.safetensors"
    junk.write_bytes(b"\x08\x01\x00\x00\x00\x00\x00\x00" + b"a" * 200_000)
    with pytest.raises(UserError, match="no recorded run"):
        measured.read_runs(str(junk))
    empty = tmp_path / "runs.jsonl"
    empty.write_text("")
    assert measured.read_runs(str(empty)) == []  # a fresh recorder's file: nothing recorded yet, not an error


def test_measured_workflow_is_checked_like_any_workflow(tmp_path):
    bad = tmp_path / "wf.json"
    bad.write_text(json.dumps({"prompt": [1, 2]}))
    with pytest.raises(UserError, match="prompt"):
        measured._from_workflow(str(bad))
    with pytest.raises(UserError):
        measured._from_workflow(str(tmp_path))  # a folder
