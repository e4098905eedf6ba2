"""fix68j: review rev68c's findings on fix68c (latent_shape.py, issue 15 item 5)."""
import pytest

from gpu_garden.memory.estimate import links, workflow
from test_estimate_fix68c import _api, _i, _models, _o, _ui


class _Stall(Exception):
    pass


def test_a_chain_of_batches_from_one_node_walks_each_input_once(tmp_path, monkeypatch):
    """rev68c #1: 24 LatentBatch in a chain, each with both inputs from the one before, then LatentFromBatch 4: links.latent once per input
    (memo per latent_shape.attach), not 2^24 times (old code: n=18 took 164 s; here it stops at 10,000 calls)."""
    calls, real = [0], links.latent

    def counted(v, ref, depth):
        calls[0] += 1
        if calls[0] > 10_000:
            raise _Stall(calls[0])
        return real(v, ref, depth)

    monkeypatch.setattr(links, "latent", counted)
    n, prev, between = 24, ["5", 0], {}
    for i in range(n):
        between[str(100 + i)] = ("LatentBatch", {"samples1": prev, "samples2": prev})
        prev = [str(100 + i), 0]
    between["200"] = ("LatentFromBatch", {"samples": prev, "batch_index": 0, "length": 4})  # 2^24 is past MAX_BATCH
    est = workflow.estimate_workflow(_api(between, ["200", 0]), _models(tmp_path))
    assert est["batch"] == 4 and est["workflow"]["size_uncertain"] == []
    assert calls[0] < 20 * n, calls[0]
