"""hv16: memory/estimate/latent_nodes.py against the checkout in COMFYUI_DIR: each row's widgets are the node's own
widget inputs in the order ComfyUI declares them (what a UI workflow's widgets_values lists), with its defaults, and its
file:line is where the class is. Nodes whose file does not import on this host (audio: no torchaudio) are left out.
Breaking it: WanMoveTrackToVideo's strength moved after batch_size, or EmptyHunyuanVideo15Latent's length default 33,
or workflow.LAYERS_MAX 4096."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from support.comfy_host import host_unavailable_reason
from support.pack import BOOT

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]

CODE = """
import asyncio, inspect, json, logging, os
logging.disable(logging.WARNING)
root = sys.argv[1]
os.chdir(root); sys.path.insert(0, root); sys.argv = [sys.argv[0], "--cpu"]
import comfy.options; comfy.options.enable_args_parsing()
import nodes
r = nodes.init_extra_nodes(init_custom_nodes=False)
if inspect.iscoroutine(r):
    asyncio.run(r)
from gpu_garden.memory.estimate.latent_nodes import LATENT_NODES
WIDGETS = {"INT", "FLOAT", "STRING", "BOOLEAN", "COMBO"}
out = {}
for name in LATENT_NODES:
    cls = nodes.NODE_CLASS_MAPPINGS.get(name)
    if cls is None:
        continue
    ws = []
    for section in ("required", "optional"):
        for k, v in cls.INPUT_TYPES().get(section, {}).items():
            t, opts = v[0], (v[1] if len(v) > 1 else {})
            if (isinstance(t, list) or t in WIDGETS) and not opts.get("forceInput"):
                options = t if isinstance(t, list) else opts.get("options")
                ws.append([k, opts.get("default", options[0] if options else None)])
    src = inspect.getsourcefile(cls)
    out[name] = [ws, os.path.relpath(src, root) + ":" + str(inspect.getsourcelines(cls)[1])]
q = nodes.NODE_CLASS_MAPPINGS.get("EmptyQwenImageLayeredLatentImage")
print(json.dumps({"layers_max": q.INPUT_TYPES()["required"]["layers"][1].get("max") if q else None}))
print(json.dumps(out))
"""


def test_latent_node_rows_are_the_nodes_widgets_in_comfyuis_order():
    from gpu_garden.memory.estimate.latent_nodes import LATENT_NODES
    p = subprocess.run([os.environ["COMFYUI_PYTHON"], "-c", BOOT + CODE, os.environ["COMFYUI_DIR"]], capture_output=True,
                       text=True, timeout=600, cwd=str(REPO))
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(got) >= 50, sorted(set(LATENT_NODES) - set(got))  # the audio nodes may be missing on this host
    bad = {}
    for name, (widgets, src) in got.items():
        row = LATENT_NODES[name]
        want = [[n, d] for n, d in row.widgets]
        have = [[n, d if d is not None else dict(row.widgets)[n]] if n in dict(row.widgets) else [n, d] for n, d in widgets]
        if name == "LoadLatent":  # its default is the first saved latent file in ComfyUI's input folder
            have = [[n, ""] for n, _ in have]
        if have != want or not row.src.startswith(src):
            bad[name] = {"comfyui": [widgets, src], "table": [want, row.src.split(" ")[0]]}
    assert not bad, json.dumps(bad, indent=1)
    # mend55: workflow.LAYERS_MAX is the layers widget's max (ComfyUI refuses a prompt above it)
    from gpu_garden.memory.estimate.workflow import LAYERS_MAX
    assert json.loads(p.stdout.strip().splitlines()[-2]) == {"layers_max": LAYERS_MAX}
