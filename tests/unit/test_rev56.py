"""rev56: review of session 55's merges. DeepSeek-V4 on vLLM with no release named (no --runtime-version, a nightly, a
commit, an untagged build without a stated base): kv sizes its pool by vLLM 0.20.2's rule with one batch in flight
(deepseek_v4.layout_kind, runtimes/vllm.swa_slack), while the plan's header reads "(newest)" and version_note says the
newest release's start checks apply. The plan now says which rule it took and that 0.26 and later hold fewer tokens."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

SAYS = "DeepSeek-V4 with no vLLM release named"


def _notes(version):
    spec = llm.describe(model="deepseek-ai/DeepSeek-V4-Flash")
    kw = {"runtime_version": version} if version is not None else {}
    return llm.plan(spec, "vllm", ctx=131072, kv_dtype="fp8", tensor_parallel_size=4, vram=141 * GiB, **kw)["notes"]


# Breaks on the old code (no such note: the 0.20.2 pool under a "(newest)" header, unexplained), if the note is given
# for a named release (0.26.1 packs the pool; 0.21.1 is 0.20.2's rule by name), or if a stated base is ignored.
@pytest.mark.parametrize("version, noted", [(None, True), ("nightly", True), ("0.1.dev5+gabcdef1", True),
                                             ("0.26.1", False), ("0.21.1", False),
                                             ("0.1.dev5+gabcdef1 based on 0.26.1", False)])
def test_dsv4_pool_of_an_unnamed_vllm_release_is_said(version, noted):
    notes = [n for n in _notes(version) if n.startswith(SAYS)]
    assert len(notes) == int(noted), notes
    if noted:
        assert "vLLM 0.20.2's rule" in notes[0] and "--runtime-version" in notes[0]

