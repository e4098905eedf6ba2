"""fix68k: review rev68d's findings on fix68d (issue 15): the image-to-video nodes read in one pass, the VAE encode
sized by its pixel shape as ComfyUI's memory_used_encode sizes it, the text encoders and the audio encoder where
ComfyUI's text_encoder_device() puts them, and the phase rows' text."""
from gpu_garden.memory.estimate import i2v_nodes

MiB, GiB = 1024 ** 2, 1024 ** 3


class _CountingNodes(list):
    """A workflow's node list that counts the scans over it (a spy; no timing)."""
    scans = 0

    def __iter__(self):
        type(self).scans += 1
        return super().__iter__()


def test_i2v_nodes_read_in_one_scan_of_the_graph():
    """rev68d F3: largest() scanned every node once per image-to-video node (16,000 pairs: 32 s). It now builds one
    id -> node index per graph: the node list is walked once however many i2v nodes there are."""
    n = 200
    nodes = _CountingNodes({"id": i, "type": "Wan22ImageToVideoLatent", "inputs": [{"name": "start_image", "link": i}],
                            "widgets_values": [1280, 704, 1]} for i in range(1, n + 1))
    wf = {"nodes": nodes, "links": []}
    keyed = {(None, i): ("Wan22ImageToVideoLatent", {"width": 1280, "height": 704 if i != 7 else 720, "length": 1})
             for i in range(1, n + 1)}
    _CountingNodes.scans = 0
    assert i2v_nodes.largest(wf, keyed) == (1280, 720, 1)
    assert _CountingNodes.scans == 1


# (family, width, height, frames): ComfyUI 0.8.0's encode activation peak in bytes, bf16, one sample, traced with the
# project's tracer (benchmarks/results/vae_encode_traces.json, benchmarks/trace_vae_encode.py): measurements, not the
# code under test's figures. The review's four (rev68d F1) plus a longer clip of each.
ENCODE_TRACED = {("wan22", 1280, 704, 1): 811114240, ("wan22", 832, 480, 81): 1633812480,
                 ("wan22", 1280, 704, 121): 4123962880, ("hunyuan-video", 1280, 720, 1): 1188252672,
                 ("hunyuan-video", 640, 360, 33): 2648129536, ("hunyuan-video-15", 1280, 720, 33): 12308132784,
                 ("ltxv", 768, 512, 1): 58982400, ("ltxv", 1216, 704, 121): 8962990080,
                 ("wan21", 832, 480, 81): 2860448256}


def test_vae_encode_sized_by_the_pixel_shape_as_traced():
    """rev68d F1: wan22 and the other video VAEs' encode was sized by the latent (30-55x too small); ComfyUI's
    memory_used_encode uses the pixel shape (comfy/sd.py:517, :543). Each within 1 % of the trace."""
    from gpu_garden.memory.estimate import spec, vae

    for (fam, w, h, f), traced in ENCODE_TRACED.items():
        kind = fam if fam in spec.VAE else spec.vae_kind_for(fam, "unknown")
        got = vae._encode_acts(kind, w, h, f, "bf16")
        assert abs(got / traced - 1) < 0.01, (fam, w, h, f, got / traced)


def test_pascal_keeps_the_text_encoders_on_the_cpu_off_windows():
    """rev68d F5: --gpu-arch pascal left the text encoders on the GPU (on_device read only --gpu-halves). ComfyUI's
    should_use_fp16 is False for every Pascal card on Linux (model_management.py:1403-1409, :1416), so
    text_encoder_device() is the CPU; on Windows a GeForce 10 / Quadro P card keeps fp16 (and the GPU)."""
    from gpu_garden.memory.estimate import te_loaded

    assert not te_loaded.on_device({"gpu_arch": "pascal"})
    assert not te_loaded.on_device({"gpu_arch": "pascal", "platform": "linux", "device": "cuda"})
    assert te_loaded.on_device({"gpu_arch": "pascal", "platform": "windows"})
    assert te_loaded.on_device({"gpu_arch": None}) and te_loaded.on_device({"gpu_arch": "pascal", "te_on_device": True})


def test_cli_pascal_text_encode_off_the_card(capsys):
    """The CLI's SDXL run on 8 GB with --gpu-arch pascal: no text-encode weights on the card, as --gpu-halves none."""
    from gpu_garden.memory import cli
    import json

    def te(*extra):
        assert cli.main(["estimate", "sdxl", "--vram", "8", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    pascal, halves, newer = te("--gpu-arch", "pascal"), te("--gpu-halves", "none"), te()
    assert newer["breakdown"]["text_encode"]["weights"] > 1.5 * GiB  # SDXL's CLIP-L + CLIP-G on the card
    assert pascal["breakdown"]["text_encode"] == halves["breakdown"]["text_encode"]
    assert pascal["breakdown"]["text_encode"]["weights"] == 0


def test_audio_encoder_off_the_card_with_the_text_encoders_on_the_cpu(tmp_path):
    """rev68d F4: AudioEncoderModel loads on text_encoder_device() (comfy/audio_encoders/audio_encoders.py:12), so
    where that is the CPU (policy te_on_device False) the audio encoder's 2,099,200 bytes (wf66's wav2vec2 stub in
    fp16) are off the card with the CLIP; on the GPU they stay in the text-encode phase."""
    from gpu_garden.memory.estimate import workflow
    from test_estimate_wf66 import F32, _file, _wan, _wan_graph

    enc = {"encoder.layer_norm.bias": (F32, (1024,)), "encoder.layers.0.attention.q_proj.weight": (F32, (1024, 1024))}
    ae = {"type": "AudioEncoderLoader", "widgets_values": ["wav2vec2_large.safetensors"]}
    d = _wan(tmp_path / "models")
    wf = _wan_graph(ae)
    no_file = {k: workflow.estimate_workflow(wf, d, policy={"te_on_device": k}) for k in (True, False)}
    _file(d / "audio_encoders" / "wav2vec2_large.safetensors", enc)
    with_file = {k: workflow.estimate_workflow(wf, d, policy={"te_on_device": k}) for k in (True, False)}
    te = lambda e: e["breakdown"]["text_encode"]  # noqa: E731
    assert te(with_file[True])["weights"] - te(no_file[True])["weights"] == 2_099_200
    assert te(with_file[False])["weights"] == te(no_file[False])["weights"] == 0
    assert "side_models" not in te(with_file[False])


def test_the_encode_line_names_the_node_and_its_rule_and_the_row_its_kept_text_encoders(tmp_path):
    """rev68d F2/F6: the assumption line said "WanImageToVideo pads it to every frame" for every node; it names the
    node and what it does (Wan22ImageToVideoLatent encodes the start image's own frame). The encode row shows the text
    encoders still loaded through it (te_kept, as the sample row's): on 48 GB nothing unloads them, all of umt5's
    weights (the text-encode row's), loaded beside the encode."""
    from gpu_garden.memory.estimate import formula, workflow
    from test_estimate_fix68d import _wan22_files, _wan22_i2v

    _wan22_files(tmp_path)
    e = formula.judge(workflow.estimate_workflow(_wan22_i2v(), tmp_path), 48 * GiB)
    line = next(a for a in e["assumptions"] if a.startswith("image-to-video: the start image"))
    assert "(1280x704, 1 frame: Wan22ImageToVideoLatent encodes the start image's own frames)" in line, line
    assert "WanImageToVideo" not in line
    te = e["breakdown"]["text_encode"]["weights"]
    assert te > 5 * GiB and e["breakdown"]["vae_encode"]["te_kept"] == te
    w = formula.judge(workflow.estimate_workflow(_wan22_i2v(node="WanImageToVideo", length=81), tmp_path), 48 * GiB)
    assert "81 frames: WanImageToVideo pads it to all 81 frames)" in \
        next(a for a in w["assumptions"] if a.startswith("image-to-video: the start image"))


def test_i2v_nodes_cite_comfyui_lines():
    """rev68d F7: HunyuanImageToVideo encodes at nodes_hunyuan.py:332-333, LTXVImgToVideo at nodes_lt.py:65-67."""
    from gpu_garden.memory.estimate import i2v_nodes

    doc = i2v_nodes.__doc__
    assert "HunyuanImageToVideo nodes_hunyuan.py:332-333" in doc and "nodes_lt.py:65-67" in doc


def test_more_i2v_nodes_and_the_ones_that_always_encode():
    """rev68d item 6: WanFirstLastFrameToVideo encodes its `length` gray-padded frames even with no image linked
    (nodes_wan.py:216-227), WanFunInpaintToVideo through it (:279-281), WanVaceToVideo twice at `length` (:340-341);
    HunyuanVideo15ImageToVideo (nodes_hunyuan.py:108-110), WanCameraImageToVideo (nodes_wan.py:426-427),
    Wan(22)FunControlToVideo (:96-97, :154-155) encode a linked start image's one frame, WanHuMoImageToVideo its
    ref_image[:1] (:1072-1073)."""
    def one(t, inputs):
        wf = {"5": {"class_type": t, "inputs": dict(inputs, width=832, height=480, length=81)}}
        return i2v_nodes.largest(wf, {k: (n["class_type"], n["inputs"]) for k, n in wf.items()})

    for t in ("WanFirstLastFrameToVideo", "WanFunInpaintToVideo", "WanVaceToVideo"):
        assert one(t, {}) == (832, 480, 81), t
    for t, name in (("HunyuanVideo15ImageToVideo", "start_image"), ("WanCameraImageToVideo", "start_image"),
                    ("WanFunControlToVideo", "start_image"), ("Wan22FunControlToVideo", "start_image"),
                    ("WanHuMoImageToVideo", "ref_image")):
        assert one(t, {name: ["1", 0]}) == (832, 480, 1), t
        assert one(t, {}) is None, t
    assert one("WanImageToVideo", {}) is None  # needs its start image (nodes_wan.py:42)
