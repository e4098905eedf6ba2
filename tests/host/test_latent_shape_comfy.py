"""fix68c: memory/estimate/latent_shape.py against the checkout in COMFYUI_DIR: each row's class is at the file:line its
src names, and for the rows it sizes (batch, concat, cut, rotate) the latent ComfyUI's own node makes of zeros of the
input shapes is the size latent_shape.through() gives (links.latent on an API prompt of EmptyLatentImage nodes);
UI_WIDGETS are the nodes' widget inputs in the order ComfyUI declares them.
Breaking it: LatentCut's negative index not clamped, or LatentRotate's 180 degrees taken as a swap."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from support.comfy_host import host_unavailable_reason
from support.pack import BOOT

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]

# (node, widgets, input latents (width, height, batch) in pixels); the inputs in the row's order
CASES = [("RepeatLatentBatch", {"amount": 3}, [(512, 768, 2)]),
         ("LatentFromBatch", {"batch_index": 2, "length": 5}, [(512, 512, 4)]),
         ("LatentBatch", {}, [(512, 768, 2), (256, 256, 3)]),
         ("BatchLatentsNode", {}, [(512, 512, 1), (512, 512, 2), (640, 512, 1)]),
         ("LatentConcat", {"dim": "x"}, [(512, 768, 2), (256, 768, 1)]),
         ("LatentConcat", {"dim": "-y"}, [(512, 768, 1), (512, 256, 1)]),
         ("LatentCut", {"dim": "x", "index": 16, "amount": 200}, [(1024, 768, 1)]),
         ("LatentCut", {"dim": "y", "index": -40, "amount": 8}, [(512, 768, 1)]),
         ("LatentCut", {"dim": "y", "index": -400, "amount": 300}, [(512, 768, 1)]),
         ("LatentRotate", {"rotation": "90 degrees"}, [(512, 768, 1)]),
         ("LatentRotate", {"rotation": "180 degrees"}, [(512, 768, 1)]),
         ("LatentRotate", {"rotation": "270 degrees"}, [(512, 768, 3)])]

CODE = """
import asyncio, inspect, json, logging, os
logging.disable(logging.WARNING)
root, cases = sys.argv[1], json.loads(sys.argv[2])
os.chdir(root); sys.path.insert(0, root); sys.argv = [sys.argv[0], "--cpu"]
import comfy.options; comfy.options.enable_args_parsing()
import nodes, torch
r = nodes.init_extra_nodes(init_custom_nodes=False)
if inspect.iscoroutine(r):
    asyncio.run(r)
from gpu_garden.memory.estimate.latent_shape import SHAPE, UI_WIDGETS
src = {}
for name in SHAPE:
    cls = nodes.NODE_CLASS_MAPPINGS[name]
    src[name] = [os.path.relpath(inspect.getsourcefile(cls), root), inspect.getsourcelines(cls)[1]]
ui = {}
for name in UI_WIDGETS:
    cls = nodes.NODE_CLASS_MAPPINGS[name]
    ui[name] = [k for section in ("required", "optional") for k, v in cls.INPUT_TYPES().get(section, {}).items()
                     if (isinstance(v[0], list) or v[0] in ("INT", "FLOAT", "STRING", "BOOLEAN", "COMBO"))
                     and not (v[1] if len(v) > 1 else {}).get("forceInput")]
shapes = []
for name, widgets, ins in cases:
    cls, lat = nodes.NODE_CLASS_MAPPINGS[name], [{"samples": torch.zeros(b, 4, h // 8, w // 8)} for w, h, b in ins]
    if name == "BatchLatentsNode":
        out = cls.execute(latents={f"latent{i}": x for i, x in enumerate(lat)})
    elif not hasattr(cls, "define_schema"):  # a legacy node: its FUNCTION
        out = getattr(cls(), cls.FUNCTION)(lat[0], **widgets)
    else:
        names = [n for n in inspect.signature(cls.execute).parameters if n not in widgets]
        out = cls.execute(**dict(zip(names, lat)), **widgets)
    s = (out.result if hasattr(out, "result") else out)[0]["samples"].shape
    shapes.append([s[-1] * 8, s[-2] * 8, s[0]])
print(json.dumps(ui))
print(json.dumps(src))
print(json.dumps(shapes))
"""


def _through(name, widgets, ins):
    from gpu_garden.memory.estimate import latent_shape, links
    row = latent_shape.SHAPE[name]
    prompt = {str(i): {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": b}}
              for i, (w, h, b) in enumerate(ins)}
    names = [f"latents.latent{i}" for i in range(len(ins))] if row.input == "latents.latent0" else [row.input, *row.more]
    prompt["20"] = {"class_type": name, "inputs": dict(widgets, **{n: [str(i), 0] for i, n in enumerate(names)})}
    return list(links.latent(links.view(prompt), ["20", 0], 0))


def test_shape_rows_are_what_comfyuis_nodes_make():
    from gpu_garden.memory.estimate.latent_shape import SHAPE, UI_WIDGETS
    p = subprocess.run([os.environ["COMFYUI_PYTHON"], "-c", BOOT + CODE, os.environ["COMFYUI_DIR"], json.dumps(CASES)],
                       capture_output=True, text=True, timeout=600, cwd=str(REPO))
    assert p.returncode == 0, p.stderr[-3000:]
    widgets, src, shapes = (json.loads(x) for x in p.stdout.strip().splitlines()[-3:])
    assert widgets == {k: list(v) for k, v in UI_WIDGETS.items()}  # a UI workflow's widgets_values order
    for name, (f, line) in src.items():  # "file:a-b ..." with the class's first line from a to b
        at, lines = SHAPE[name].src.split(" ")[0].split(":")
        lo, _, hi = lines.partition("-")
        assert at == f and int(lo) <= line <= int(hi or lo), (name, f, line, SHAPE[name].src)
    assert [_through(*c) for c in CASES] == shapes
