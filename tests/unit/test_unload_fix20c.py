"""Task fix20c: the report's lines read build()'s others_changed, the one list of the non-targets that changed (review20b:
lines() recomputed it from the rows)."""
from gpu_garden.memory.unload import report as unload_report
from gpu_garden.memory.units import MiB

CLIP = {"key": "1", "name": "SD1ClipModel", "device": "cuda:0", "bytes": 235 * MiB, "total_bytes": 235 * MiB,
        "is_text_encoder": True, "label": "text encoder (SD1 CLIP)"}
UNET = {"key": "2", "name": "BaseModel", "device": "cuda:0", "bytes": 1640 * MiB, "total_bytes": 1640 * MiB,
        "is_text_encoder": False, "label": "SD1.5 model"}
VAE = {"key": "3", "name": "AutoencoderKL", "device": "cuda:0", "bytes": 160 * MiB, "total_bytes": 160 * MiB,
       "is_text_encoder": False, "label": "VAE"}


def _snap(models):
    return {"models": models, "devices": {}, "host_available": None}


def test_also_changed_names_what_others_changed_holds_by_label():
    r = unload_report.build(_snap([CLIP, UNET, VAE]), _snap([dict(UNET, bytes=0), VAE]), targets={"1"})
    assert r["others_changed"] == ["BaseModel"]
    assert "also changed: SD1.5 model" in unload_report.lines(r)
    # the line is that list, not a second reading of the rows: a report whose list names the VAE says the VAE
    r["others_changed"] = ["AutoencoderKL"]
    assert "also changed: VAE" in unload_report.lines(r)
    r["others_changed"] = []
    assert not any(line.startswith("also changed") for line in unload_report.lines(r))
