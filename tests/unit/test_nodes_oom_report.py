"""The OOM report's latent size from the failing node's LATENT tensor (nodes/oom_report.py)."""
from gpu_garden.nodes import oom_report


def test_pixel_size_from_the_vae_that_made_the_latent():
    """FLUX.2 latents are 128 channels at 16x, LTX-Video's 128 channels at 32x (5-d), HunyuanImage's 64 at 32x:
    reading them at 8x reported a 1024 px FLUX.2 image as 512 px and a 768x512 LTX-Video clip as 192x128."""
    assert oom_report.latent_from_samples([1, 128, 64, 64])["width"] == 1024  # FLUX.2
    lat = oom_report.latent_from_samples([1, 128, 16, 16, 24])  # LTX-Video 768x512
    assert (lat["width"], lat["height"]) == (768, 512)
    assert oom_report.latent_from_samples([1, 64, 64, 64])["width"] == 2048  # HunyuanImage 2.1
    assert oom_report.latent_from_samples([1, 48, 31, 44, 80])["width"] == 1280  # Wan 2.2 TI2V: 16x
    assert oom_report.latent_from_samples([2, 4, 128, 96])["width"] == 768  # SD: 8x
    assert oom_report.latent_from_samples([1, 16, 21, 60, 104])["width"] == 832  # Wan 2.1: 8x


def test_frames_are_latent_frames_from_the_tensor_and_from_the_prompt():
    """The panel and triage read `frames` as latent frames: a Wan 2.1 run of 81 video frames is a 21-frame latent
    whether the report found the tensor or only the prompt's EmptyHunyuanLatentVideo (length 81). The prompt path
    used to report 81 and the tensor path 21 for the same run."""
    from_tensor = oom_report.latent_from_samples([1, 16, 21, 60, 104], "wan21")
    prompt = {"5": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": 832, "height": 480, "length": 81, "batch_size": 1}},
              "3": {"class_type": "KSampler", "inputs": {"latent_image": ["5", 0]}},
              "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0]}}}
    from_prompt = oom_report.latent_from_prompt(prompt, "8")
    for lat in (from_tensor, from_prompt):
        assert (lat["frames"], lat["video_frames"]) == (21, 81)


def test_each_video_node_compresses_time_by_its_own_factor():
    """ComfyUI 0.8.0: LTX-Video and Cosmos (length - 1) // 8 + 1, Mochi // 6, Wan 2.2 and Hunyuan // 4."""
    def frames(class_type, length, family=None):
        prompt = {"1": {"class_type": class_type, "inputs": {"width": 768, "height": 512, "length": length}},
                  "2": {"class_type": "KSampler", "inputs": {"latent_image": ["1", 0]}}}
        return oom_report.latent_from_prompt(prompt, "2", family)["frames"]

    assert frames("EmptyLTXVLatentVideo", 97) == 13
    assert frames("EmptyCosmosLatentVideo", 121) == 16
    assert frames("EmptyMochiLatentVideo", 31) == 6
    assert frames("Wan22ImageToVideoLatent", 121) == 31
    assert frames("SomePackVideoLatent", 49) is None  # neither the node nor the model says: unknown, not 49
    assert frames("SomePackVideoLatent", 49, "ltxv") == 7  # the running model's family decides
    # from the tensor: the channel count decides where it is unambiguous, else the model's family
    assert oom_report.latent_from_samples([1, 128, 13, 16, 24])["video_frames"] == 97  # LTX-Video
    assert oom_report.latent_from_samples([1, 48, 31, 44, 80])["video_frames"] == 121  # Wan 2.2
    assert oom_report.latent_from_samples([1, 16, 16, 60, 104])["video_frames"] is None  # Wan 2.1 (x4) or Cosmos (x8)
    assert oom_report.latent_from_samples([1, 16, 16, 60, 104], "cosmos")["video_frames"] == 121
    assert oom_report.latent_from_samples([2, 4, 128, 96])["video_frames"] == 1


def test_length_nodes_take_their_time_factor_from_the_one_latent_node_table():
    """mend55: oom_report kept its own node -> family table, which named WanFirstLastFrameToVideo wan21 (its latent
    follows the VAE: Wan 2.1's or 2.2's) and missed Kandinsky 5; CosmosPredict2's length is // 4 while Cosmos's
    family (Predict 1) is // 8 (ComfyUI 0.8.0 nodes_cosmos.py:106, nodes_kandinsky5.py:37, nodes_wan.py:210).
    Deliberate error checked: the old LENGTH_NODE_FAMILY table (Kandinsky 5 -> None, CosmosPredict2 under cosmos -> 12)."""
    def frames(class_type, length, family=None):
        prompt = {"1": {"class_type": class_type, "inputs": {"width": 848, "height": 480, "length": length}},
                  "2": {"class_type": "KSampler", "inputs": {"latent_image": ["1", 0]}}}
        return oom_report.latent_from_prompt(prompt, "2", family)["frames"]

    assert frames("WanFirstLastFrameToVideo", 81) == 21
    assert frames("WanFirstLastFrameToVideo", 81, "wan22") == 21
    assert frames("Kandinsky5ImageToVideo", 121) == 31
    assert frames("CosmosPredict2ImageToVideoLatent", 93, "cosmos") == 24
    assert frames("EmptyHunyuanLatentVideo", 25) == 7


def test_every_length_nodes_time_factor_is_the_one_its_source_line_shows():
    """Each row's src transcribes ComfyUI's shape, '(L-1)/4+1': the derived factor must be that N, for every row
    whose src shows one (a wrong t= on a row, or a family whose FAMILY t is not the node's, fails here)."""
    import re

    from gpu_garden.memory.estimate.latent_nodes import LATENT_NODES, length_time_factors

    got = length_time_factors()
    shown = {n: int(m.group(1)) for n, r in LATENT_NODES.items() if (m := re.search(r"\(L-1\)/(\d+)\+1", r.src))}
    assert len(shown) >= 20
    assert {n: got.get(n) for n in shown} == shown
    assert got["WanFunInpaintToVideo"] == 4  # nodes_wan.py:253 calls WanFirstLastFrameToVideo's execute
