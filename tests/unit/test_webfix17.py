"""The open graph's route (nodes/estimate_routes.estimate_graph) judges on the device ComfyUI computes on, through the
node's own helper (nodes/estimate.host_policy), and takes the Footprint Estimate node's size when the graph has no
latent node; without one its error says what to do in the browser, while the CLI keeps its flags."""
import importlib
import json
import math
from pathlib import Path

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import layouts, verdict
from gpu_garden.nodes import host_models

STUBS = Path(__file__).parent / "stubs"
CKPT = "sd15.safetensors"
# the Footprint Estimate node on SD1.5 loaded by ComfyUI 0.8.0 with --cpu, 512x768 batch 4 (docs/estimate.md, Device,
# measured at 5126703): the node's figure, not one this route computed, less ComfyUI's 400 MiB reserve that it held
# then (ui49: ComfyUI keeps no reserve on a CPU device)
NODE_CPU_PEAK = 5_580_862_019 - 419_430_400
NO_SIZE_ROUTE = ("the workflow has no latent size (EmptyLatentImage, ...): set width and height on the Footprint "
                 "Estimate node (its size when no latent is connected), or add an EmptyLatentImage node")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / CKPT)
    return d


@pytest.fixture
def routes(monkeypatch, models):
    from support.fit_stubs import fresh_node
    r = fresh_node(monkeypatch, STUBS, "estimate_routes")
    monkeypatch.setattr(r, "resolve", lambda folders, name: next(
        (str(models / f / name) for f in folders if (models / f / name).is_file()), None))  # folder_paths' part
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 << 30)
    return r


def on(monkeypatch, backend):
    monkeypatch.setattr(host_models, "compute_backend", lambda: backend)


def graph(latent=True, w=512, h=768, b=4):
    g = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CKPT}},
         "3": {"class_type": "KSampler", "inputs": {"cfg": 7.0, "model": ["4", 0]}}}
    if latent:
        g["5"] = {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": b}}
    return g


def unet_numel() -> int:
    tensors = layouts.load("sd15_v1-5-pruned-emaonly-fp16")["tensors"]
    return sum(math.prod(t["shape"]) for k, t in tensors.items() if k.startswith("model.diffusion_model."))


# -- (a) the device ---------------------------------------------------------------------------------------------
def test_on_a_cpu_host_the_route_answers_as_the_node_runs(routes, monkeypatch):
    """ComfyUI --cpu: fp32 weights, judged on host RAM, no card tier; the node's own peak for the same graph to the
    byte. Before, the route judged a CUDA card (16-bit weights, peak 3.5 GiB) beside a node that said 5.2 GiB."""
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph()})
    assert out["device"] == "cpu" and out["peak"] == NODE_CPU_PEAK, (out.get("device"), out["peak"])
    assert out["budget"] is None and out["min_vram_gb"] is None and out["verdict"] == "fits"
    assert out["outcome"]["reason"].startswith("CPU run: the running phase ") and out["outcome"]["reason"].endswith(
        "in host RAM, 64.00 GiB available")
    assert out["assumptions"][0].startswith("CPU device: ComfyUI holds the diffusion model in fp32")
    assert out["phases"]["sample"] > unet_numel() * 4  # fp32 weights and more, not fp16's numel * 2


def test_on_a_cuda_host_it_states_the_card(routes, monkeypatch):
    on(monkeypatch, "cuda")
    out = routes.estimate_graph({"workflow": graph()})
    assert out["device"] == "cuda" and out["min_vram_gb"] == 4 and out["verdict"] == "no budget"
    # the UNet in fp16 as stored, not fp32 (the card's peak holds ComfyUI's 400 MiB reserve, the CPU run's none)
    assert out["peak"] <= NODE_CPU_PEAK + 419_430_400 - unet_numel() * 2
    assert not any(a.startswith("CPU device") for a in out["assumptions"])


def test_vram_gb_on_a_cpu_host_plans_for_a_card_as_the_node_does(routes, monkeypatch):
    """nodes/estimate.live_budget takes vram_gb on a CPU host as a card to plan for: so does the route."""
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph(), "vram_gb": 8})
    assert out["device"] == "cpu" and out["budget"] == 8 << 30 and not out["outcome"]["reason"].startswith("CPU run")


def test_the_node_and_the_route_take_the_host_from_one_helper(routes, monkeypatch):
    node = importlib.import_module("gpu_garden.nodes.estimate")  # the copy fresh_node's stubs import

    host = {"device": "mps", "platform": "darwin", "reserve": 123 << 20, "dynamic_vram": "off"}
    monkeypatch.setattr(node, "host_policy", lambda: dict(host))
    out = routes.estimate_graph({"workflow": graph()})
    assert out["device"] == "mps"

    class Dm:
        def state_dict(self):
            return {}

    class Base:
        diffusion_model, manual_cast_dtype = Dm(), None

    class Model:
        model = Base()

    _, pol = node.model_components(Model())
    assert {k: pol[k] for k in host} == host


def test_host_policy_reads_the_compute_device(routes, monkeypatch):
    node = importlib.import_module("gpu_garden.nodes.estimate")  # the copy fresh_node's stubs import

    on(monkeypatch, "cpu")
    assert node.host_policy()["device"] == "cpu"
    on(monkeypatch, None)  # unknown: the node's default, a CUDA card
    assert node.host_policy()["device"] == "cuda"


# -- (b) the size -----------------------------------------------------------------------------------------------
def test_without_a_latent_node_the_node_s_size_is_used(routes, monkeypatch):
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph(latent=False), "width": 512, "height": 768, "frames": 1, "batch": 4})
    assert (out["width"], out["height"], out["frames"], out["batch"]) == (512, 768, 1, 4)
    assert out["size_from"] == "body" and out["peak"] == NODE_CPU_PEAK


def test_a_latent_node_in_the_graph_wins_over_the_node_s_size(routes, monkeypatch):
    on(monkeypatch, "cuda")
    out = routes.estimate_graph({"workflow": graph(w=640, h=384, b=2), "width": 1024, "height": 1024, "batch": 1})
    assert (out["width"], out["height"], out["batch"]) == (640, 384, 2) and out["size_from"] == "graph"


def test_no_size_anywhere_names_what_to_do_in_comfyui(routes, monkeypatch):
    on(monkeypatch, "cuda")
    with pytest.raises(UserError) as exc:
        routes.estimate_graph({"workflow": graph(latent=False)})
    assert str(exc.value) == NO_SIZE_ROUTE and "--" not in str(exc.value)


def test_the_cli_keeps_its_flags(models, tmp_path, capsys):
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(graph(latent=False)))
    rc = cli.main(["estimate", "--workflow", str(p), "--models-dir", str(models), "--vram", "8"])
    err = capsys.readouterr().err
    assert rc == 2 and err.strip() == ("gpu-garden estimate: error: the workflow has no latent size (EmptyLatentImage, "
                                       "...): pass --width and --height"), err


@pytest.mark.parametrize("extra, field", [
    ({"width": 512}, "width and height go together"), ({"height": 512}, "width and height go together"),
    ({"width": True, "height": 512}, "width"), ({"width": "512", "height": 512}, "width"),
    ({"width": 32, "height": 512}, "width"), ({"width": 512, "height": 512.5}, "height"),
    ({"width": 512, "height": float("nan")}, "height"), ({"width": 512, "height": 512, "frames": 0}, "frames"),
    ({"width": 512, "height": 512, "batch": 5000}, "batch"), ({"width": 512, "height": float("inf")}, "height"),
])
def test_a_wrong_size_is_refused_with_its_name(routes, extra, field):
    with pytest.raises(UserError, match=field):
        routes.estimate_graph({"workflow": graph(latent=False), **extra})


def test_the_answer_names_the_family_as_the_node_does(routes, monkeypatch):
    """ux21: the button's answer read a bare "sd1" on the face under the node's "Stable Diffusion 1.x (sd1)"; the route
    now sends the family's name (and variant) beside its slug; tests/web/test_estimate_tiers reads the face."""
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph()})
    assert (out["family"], out["family_name"], out["variant"]) == ("sd1", "Stable Diffusion 1.x", "")


def test_a_size_from_the_image_the_graph_encodes_is_not_called_the_node_s(routes, monkeypatch):
    """wf65's templates: with no latent node and no size in the body, the size comes from the image the graph encodes
    (EmptyImage 640x384 -> VAEEncode: the graph's) or, for a loaded image, from the family's native size (SD1.5's
    512x512, nodes.py EmptyLatentImage: assumed, and said so); "body" only when the node's size was used."""
    on(monkeypatch, "cpu")
    g = graph(latent=False)
    g["6"] = {"class_type": "EmptyImage", "inputs": {"width": 640, "height": 384, "batch_size": 1, "color": 0}}
    g["7"] = {"class_type": "VAEEncode", "inputs": {"pixels": ["6", 0], "vae": ["4", 2]}}
    out = routes.estimate_graph({"workflow": g})
    assert (out["width"], out["height"], out["size_from"]) == (640, 384, "graph"), out
    g["6"] = {"class_type": "LoadImage", "inputs": {"image": "x.png"}}
    out = routes.estimate_graph({"workflow": g})
    assert (out["width"], out["height"], out["size_from"]) == (512, 512, "assumed"), out
    assert out["size_assumed"] == "assumed: the native size of Stable Diffusion 1.x", out
    out = routes.estimate_graph({"workflow": g, "width": 768, "height": 512})
    assert (out["width"], out["height"], out["size_from"]) == (768, 512, "body"), out


def test_the_image_the_graph_encodes_wins_over_the_nodes_size(routes, monkeypatch):
    """rev62 F1: the button always sends the node's width/height (1024x1024 on a fresh node), and they stood in for the
    size an img2img graph sets (EmptyImage 640x384 -> VAEEncode), labelled "the node's size: no latent node". The node
    itself, its latent fed from that VAEEncode, runs at 640x384: the graph's size wins; the body is the fallback when
    the graph sets none, before the family's native size."""
    on(monkeypatch, "cpu")
    g = graph(latent=False)
    g["6"] = {"class_type": "EmptyImage", "inputs": {"width": 640, "height": 384, "batch_size": 1, "color": 0}}
    g["7"] = {"class_type": "VAEEncode", "inputs": {"pixels": ["6", 0], "vae": ["4", 2]}}
    out = routes.estimate_graph({"workflow": g, "width": 1024, "height": 1024})
    assert (out["width"], out["height"], out["size_from"]) == (640, 384, "graph"), out
    g["6"] = {"class_type": "LoadImage", "inputs": {"image": "x.png"}}  # a loaded image: the node's size beats native
    out = routes.estimate_graph({"workflow": g, "width": 768, "height": 512, "batch": 2})
    assert (out["width"], out["height"], out["batch"], out["size_from"]) == (768, 512, 2, "body"), out
