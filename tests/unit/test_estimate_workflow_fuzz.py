"""`gpu-garden estimate --workflow` on mis-shaped graphs: valid JSON whose nodes, widgets and inputs have the wrong
types (a hand-edited or truncated workflow, another tool's export). The reader must give a result or one clear
line, never a traceback (test_estimate_workflow.py covers bytes that are not JSON and a document that is no graph)."""
import json

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from gpu_garden.memory import cli  # noqa: E402
from gpu_garden.memory.errors import UserError  # noqa: E402
from gpu_garden.memory.estimate import workflow  # noqa: E402

TYPES = ["UNETLoader", "CheckpointLoaderSimple", "VAELoader", "DualCLIPLoader", "CLIPLoader", "EmptyLatentImage",
         "EmptySD3LatentImage", "EmptyHunyuanLatentVideo", "KSampler", "KSamplerAdvanced", "VAEDecodeTiled", "VAEDecode", "Note"]
JUNK = st.recursive(st.none() | st.booleans() | st.integers(-2, 10 ** 6) | st.floats(allow_nan=True) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
UI_NODE = st.fixed_dictionaries({"id": JUNK, "type": st.sampled_from(TYPES) | JUNK}, optional={"widgets_values": JUNK, "inputs": JUNK})
API_NODE = st.fixed_dictionaries({"class_type": st.sampled_from(TYPES) | JUNK}, optional={"inputs": JUNK})
GRAPH = (st.fixed_dictionaries({"nodes": st.lists(UI_NODE | JUNK, max_size=6)}, optional={"links": JUNK, "extra": JUNK})
         | st.dictionaries(st.text(max_size=4), API_NODE | JUNK, max_size=6))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(GRAPH)
def test_mis_shaped_workflows_give_a_result_or_one_line(tmp_path, capsys, wf):
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    rc = cli.main(["estimate", "--workflow", str(p), "--models-dir", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert rc in (0, 1, 2), rc
    if rc == 2:
        assert err.count("\n") == 1 and "Traceback" not in err, err


@settings(max_examples=200, deadline=None)
@given(GRAPH)
def test_the_reader_itself_gives_a_result_or_a_user_error(wf):
    try:
        info = workflow.read(wf, None)
    except UserError as e:
        assert "not a ComfyUI workflow" in str(e)
        return
    assert set(info) >= {"files", "missing", "size", "cfg", "tiled"}
