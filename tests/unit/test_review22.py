"""Review of session 22 (task review22): defects found in the session's changes, each test failing before its fix."""
from pathlib import Path
from types import SimpleNamespace

from support import unseen_corpus
from support.pack import load_benchmark


def _fake_corpus(names):
    """A corpus of one right case a batch, in the order unseen_corpus.batches() gives (by number)."""
    paths = {n: [Path(f"/nowhere/{n}/case.log")] for n in names}
    return SimpleNamespace(batches=lambda: dict(sorted(paths.items(), key=lambda kv: unseen_corpus.batch_number(kv[0]))),
                           score=lambda p: {"expect": "other", "got": "other", "cause_ok": True},
                           batch_number=unseen_corpus.batch_number)


def test_triage_groups_names_the_last_batch_by_number(monkeypatch, capsys):
    """The open-ended last group is labelled up to the newest batch: batch-102, not batch-99 (the last by name once
    batches pass 99, as 67fa7d56 fixed for unseen_corpus.batches())."""
    g = load_benchmark("triage_groups")
    monkeypatch.setattr(g, "load", lambda root: _fake_corpus(["batch-37", "batch-99", "batch-100", "batch-102"]))
    g.main([])
    out = capsys.readouterr().out
    assert "group E (37-102): 4/4" in out, out


def test_triage_signals_refuses_a_batch_name_it_cannot_read(capsys):
    """--through takes batch-NN: a bare word is a usage error (exit 2, the value named), not an IndexError traceback;
    NN alone is read as batch-NN."""
    import pytest
    s = load_benchmark("triage_signals")
    with pytest.raises(SystemExit) as e:
        s.main(["--through", "latest"])
    assert e.value.code == 2
    assert "'latest' is not a batch (batch-NN)" in capsys.readouterr().err
    assert s._batch("batch-97") == s._batch("97") == 97


def test_kv_api_refuses_a_cuda_graph_memory_it_cannot_use():
    """plan(cuda_graph_memory=...) (the API under --cuda-graph-gib, round 47): a negative size was counted as negative
    graph memory (the plan then fitted more), a string raised a bare ValueError, a size above the card was taken; each is
    now the UserError the CLI's other sizes give. A plausible figure still plans."""
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.units import GiB

    def plan(graph, runtime="vllm"):
        return llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), runtime=runtime, ctx=8192, vram=24 * GiB,
                        runtime_version="0.19.0" if runtime == "vllm" else None, cuda_graph_memory=graph)
    for bad in (-3 * GiB, 0, "3", float("nan"), 25 * GiB, True):
        with pytest.raises(UserError, match="--cuda-graph-gib"):
            plan(bad)
    with pytest.raises(UserError):
        plan(GiB, runtime="sglang")
    assert plan(GiB)["overhead"]["cuda_graphs"] == GiB
