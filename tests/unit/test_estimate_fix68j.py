"""fix68j: review rev68c's findings on fix68c (latent_shape.py, issue 15 item 5)."""
import pytest

from gpu_garden.memory.estimate import links, workflow
from test_estimate_fix67l import SG, _sub
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


REP4 = {"type": "RepeatLatentBatch", "outputs": [_o("LATENT", 10)], "widgets_values": [4]}


def _sized(est):
    return est["batch"], est["workflow"]["size_uncertain"], [a for a in est["assumptions"] if "makes the latent" in a]


def test_a_shape_node_behind_a_bypassed_node_is_sized(tmp_path):
    """rev68c #2 (t2.py 4): RepeatLatentBatch x4 -> LatentFlip bypassed (mode 4) -> the sampler: ComfyUI runs the
    flip's latent input in its place, batch 4. Old code: links._source raised Unread on the bypassed flip, the
    repeat named as uncertain and the estimate at batch 1."""
    rep = dict(REP4, id=10, inputs=[_i("samples", 2, "LATENT")])
    flip = {"id": 11, "type": "LatentFlip", "mode": 4, "inputs": [_i("samples", 10, "LATENT")], "outputs": [_o("LATENT", 11)],
            "widgets_values": ["x-axis: vertically"]}
    wf = _ui([rep, flip], [[2, 2, 0, 10, 0, "LATENT"], [10, 10, 0, 11, 0, "LATENT"], [11, 11, 0, 3, 1, "LATENT"]], 11)
    assert _sized(workflow.estimate_workflow(wf, _models(tmp_path))) == (
        4, [], ["RepeatLatentBatch (node 10) makes the latent 512x512, batch 4"])


def test_a_shape_node_inside_a_subgraph_is_sized(tmp_path):
    """rev68c #2 (t3.py): RepeatLatentBatch x4 inside a subgraph on the sampler's latent: batch 4, named with the
    subgraph. Old code: the instance's UUID not followed, the repeat named as uncertain, batch 1."""
    rep = dict(REP4, id=1, inputs=[_i("samples", 1, "LATENT")], outputs=[_o("LATENT", 2)])
    sub = _sub("rep x4", [rep], [(1, -10, 0, 1, 0, "LATENT"), (2, 1, 0, -20, 0, "LATENT")], [{"name": "samples", "type": "LATENT"}])
    inst = {"id": 30, "type": SG, "inputs": [_i("samples", 2, "LATENT")], "outputs": [_o("LATENT", 30)], "widgets_values": []}
    wf = _ui([inst], [[2, 2, 0, 30, 0, "LATENT"], [30, 30, 0, 3, 1, "LATENT"]], 30)
    wf["definitions"] = {"subgraphs": [sub]}
    assert _sized(workflow.estimate_workflow(wf, _models(tmp_path))) == (
        4, [], ["RepeatLatentBatch (node 1 in subgraph rep x4) makes the latent 512x512, batch 4"])


@pytest.mark.parametrize("empty, cut_w", [("EmptyFlux2LatentImage", 768), ("EmptyHunyuanImageLatent", 1024),
                                          ("EmptyChromaRadianceLatentImage", 48), ("EmptyLatentImage", 384)])
def test_a_cut_counts_its_latents_own_pixels(tmp_path, empty, cut_w):
    """rev68c #3 (t4.py): LatentCut x from 0, 48 latent px (nodes_latent.py:189-209), of a 1024x1024 latent, then
    LatentUpscaleBy 1 and RepeatLatentBatch 2: FLUX.2's latent is 1024/16 = 64 wide, 48 of it = 768 px
    (comfy_extras/nodes_flux.py:55); HunyuanImage's 32 wide (nodes_hunyuan.py:354), all 32 = 1024 px; Chroma
    Radiance's is pixels (nodes_chroma_radiance.py:11), 48 px; EmptyLatentImage's 8x, 384 px. Old code: 384 for all
    (8 px assumed)."""
    between = {"5": (empty, {"width": 1024, "height": 1024, "batch_size": 1}),
               "10": ("LatentCut", {"samples": ["5", 0], "dim": "x", "index": 0, "amount": 48}),
               "11": ("LatentUpscaleBy", {"samples": ["10", 0], "upscale_method": "nearest-exact", "scale_by": 1.0}),
               "20": ("RepeatLatentBatch", {"samples": ["11", 0], "amount": 2})}
    est = workflow.estimate_workflow(_api(between, ["20", 0]), _models(tmp_path))
    assert est["workflow"]["size_uncertain"] == [] and [a.split(" the latent ")[-1] for a in est["assumptions"] if
                                                         "RepeatLatentBatch (node 20) make" in a] == [f"{cut_w}x1024, batch 2"]


def test_a_cut_of_an_encoded_latent_is_named(tmp_path):
    """rev68c #3: a LatentCut of a VAEEncode's latent (its VAE's compression, not read): named as uncertain. Old code:
    sized as 8 px, not named."""
    between = {"30": ("EmptyImage", {"width": 1024, "height": 1024, "batch_size": 1, "color": 0}),
               "31": ("VAEEncode", {"pixels": ["30", 0], "vae": ["4", 2]}),
               "20": ("LatentCut", {"samples": ["31", 0], "dim": "x", "index": 0, "amount": 48})}
    est = workflow.estimate_workflow(_api(between, ["20", 0]), _models(tmp_path))
    assert [u["node"] for u in est["workflow"]["size_uncertain"]] == ["LatentCut (node 20)"]


def test_a_sampler_on_a_shaped_latent_is_estimated_at_its_size(tmp_path):
    """rev68c #4a (t5.py): EmptyLatentImage 512x768 batch 4 -> LatentFromBatch (0, 1) -> the sampler: it samples 1
    latent (nodes.py:1206-1236), the note says so and so does the estimate. Old code: batch 4 (the graph's largest
    latent) beside the note 'makes the latent 512x768, batch 1'. A second sampler on the batch of 4: batch 4."""
    between = {"5": ("EmptyLatentImage", {"width": 512, "height": 768, "batch_size": 4}),
               "20": ("LatentFromBatch", {"samples": ["5", 0], "batch_index": 0, "length": 1})}
    est = workflow.estimate_workflow(_api(between, ["20", 0]), _models(tmp_path))
    assert (est["width"], est["height"], est["batch"]) == (512, 768, 1)
    assert any("LatentFromBatch (node 20) makes the latent 512x768, batch 1" in a for a in est["assumptions"])
    g = _api(between, ["20", 0])
    g["13"] = dict(g["3"], inputs=dict(g["3"]["inputs"], latent_image=["5", 0]))
    g["18"] = dict(g["8"], inputs=dict(g["8"]["inputs"], samples=["13", 0]))
    g["19"] = dict(g["9"], inputs=dict(g["9"]["inputs"], images=["18", 0]))
    est = workflow.estimate_workflow(g, _models(tmp_path))
    assert (est["width"], est["height"], est["batch"]) == (512, 768, 4)


def test_the_note_gives_the_shape_nodes_own_output(tmp_path):
    """rev68c #4b (t6.py): RepeatLatentBatch x4 -> LatentUpscaleBy 2 -> the sampler: the repeat makes 512x768 batch
    4, the upscale 1024x1536 (estimated). Old code: the note said the repeat makes 1024x1536."""
    between = {"10": ("RepeatLatentBatch", {"samples": ["5", 0], "amount": 4}),
               "20": ("LatentUpscaleBy", {"samples": ["10", 0], "upscale_method": "nearest-exact", "scale_by": 2.0})}
    est = workflow.estimate_workflow(_api(between, ["20", 0]), _models(tmp_path))
    assert (est["width"], est["height"], est["batch"]) == (1024, 1536, 4)
    assert [a for a in est["assumptions"] if "makes the latent" in a] == [
        "RepeatLatentBatch (node 10) makes the latent 512x768, batch 4"]
