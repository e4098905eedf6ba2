"""Model files the process may not read (ux58: chmod 000 under the models folder, picked in the open graph's
estimate). The header readers raised a bare PermissionError, which POST /gpu_garden/estimate/workflow answered as
"PermissionError: [Errno 13] ..." and counted as a failure of the route itself on /gpu_garden/health. Now it is one
UserError line naming the file and why. The process here runs as root, which reads any file, so the denial is made
by the open call itself (builtins.open refuses that one path, as the kernel does for another user)."""
import builtins
import struct

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import headers, workflow

SD15_UNET_KEY = "model.diffusion_model.input_blocks.0.0.weight"


@pytest.fixture
def unreadable(tmp_path, monkeypatch):
    blob = ('{"%s": {"dtype": "F16", "shape": [320, 4, 3, 3], "data_offsets": [0, 23040]}}' % SD15_UNET_KEY).encode()
    path = tmp_path / "locked.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob)
        f.truncate(8 + len(blob) + 23040)
    real = builtins.open

    def refuse(file, *a, **k):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *a, **k)

    monkeypatch.setattr(builtins, "open", refuse)
    return path


@pytest.mark.parametrize("reader", [headers.read_tensors, headers.read_safetensors_header, headers.read_gguf_metadata])
def test_an_unreadable_file_is_one_line_naming_it(unreadable, reader):
    with pytest.raises(UserError) as ei:
        reader(unreadable)
    msg = str(ei.value)
    assert msg == f"{unreadable}: cannot be read (Permission denied)"


def test_the_open_graph_estimate_names_the_unreadable_file(unreadable):
    """What the route runs (nodes/estimate_routes.estimate_graph -> workflow.estimate_workflow with ComfyUI's
    resolver): a UserError, so the route answers 400 with this text and leaves its health feature alone."""
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": unreadable.name}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}}}
    with pytest.raises(UserError, match=r"locked\.safetensors: cannot be read \(Permission denied\)"):
        workflow.estimate_workflow(wf, None, resolve=lambda folders, name: str(unreadable))


def test_the_route_says_when_the_family_is_unknown(monkeypatch, tmp_path):
    """A file of random tensor names: the route's answer carries unknown (the page flags the generic figures)."""
    from support.fit_stubs import fresh_node
    from pathlib import Path as P
    routes = fresh_node(monkeypatch, P(__file__).parent / "stubs", "estimate_routes")
    blob = b'{"zz_1.weight": {"dtype": "F16", "shape": [64, 64], "data_offsets": [0, 8192]}}'
    path = tmp_path / "random.safetensors"
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(8192))
    monkeypatch.setattr(routes, "resolve", lambda folders, name: str(path))
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": path.name}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 256, "height": 256, "batch_size": 1}}}
    out = routes.estimate_graph({"workflow": wf})
    assert out["unknown"] is True and out["verdict_caveat"].startswith("unknown architecture: its weights (")  # mend60
