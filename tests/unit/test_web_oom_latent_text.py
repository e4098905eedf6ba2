"""The OOM panel's latent line (web/lib/oom_parts.js latentText), run in node: video frames and latent frames are
named apart, so a 81-frame Wan run no longer reads "×81f" from the prompt and "×21f" from the tensor."""

from support import node_js


def latent_text(latent: dict) -> str:
    return node_js.call("lib/oom_parts.js", "latentText", latent).strip()


def test_video_and_latent_frames_are_named_apart():
    assert latent_text({"width": 832, "height": 480, "frames": 21, "video_frames": 81, "batch": 1}) == \
        "latent 832×480, 81 frames (21 latent), batch 1"
    assert latent_text({"width": 832, "height": 480, "frames": None, "video_frames": 49, "batch": 2}) == \
        "latent 832×480, 49 frames, batch 2"
    assert latent_text({"width": 832, "height": 480, "frames": 16, "video_frames": None, "batch": 1}) == \
        "latent 832×480, 16 latent frames, batch 1"
    assert latent_text({"width": 1024, "height": 1024, "frames": 1, "video_frames": 1, "batch": 1}) == \
        "latent 1024×1024, batch 1"


def test_a_report_stored_before_video_frames_keeps_its_old_line():
    assert latent_text({"width": 832, "height": 480, "frames": 21, "batch": 1}) == "latent 832×480×21f, batch 1"
