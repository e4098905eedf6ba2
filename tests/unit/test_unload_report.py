"""The unload report is computed from two snapshots only: numbers are differences of measured numbers."""
from gpu_garden.memory.unload import report as unload_report
from gpu_garden.memory.units import MiB

CLIP = {"key": "1", "name": "SD1ClipModel", "device": "cuda:0", "bytes": 235 * MiB, "total_bytes": 235 * MiB,
        "is_text_encoder": True}
UNET = {"key": "2", "name": "SD15 (BaseModel)", "device": "cuda:0", "bytes": 1640 * MiB, "total_bytes": 1640 * MiB,
        "is_text_encoder": False}
VAE = {"key": "3", "name": "AutoencoderKL", "device": "cuda:0", "bytes": 160 * MiB, "total_bytes": 160 * MiB,
       "is_text_encoder": False}


def snap(models, allocated=None, reserved=None, free=None, host=None):
    dev = {"torch_allocated": allocated, "torch_reserved": reserved, "free": free, "total": None}
    return {"models": models, "devices": {"cuda:0": dev}, "host_available": host}


def test_encoder_leaving_the_list_counts_as_freed_and_others_are_kept():
    before = snap([CLIP, UNET, VAE], allocated=2100 * MiB, reserved=2200 * MiB, free=5000 * MiB)
    after = snap([UNET, VAE], allocated=1865 * MiB, reserved=1965 * MiB, free=5235 * MiB)
    r = unload_report.build(before, after, targets={"1"})
    assert r["freed_bytes"] == 235 * MiB
    assert r["left_device"] == ["SD1ClipModel"]
    assert r["others_changed"] == []
    (t,) = r["targets"]
    assert t["status"] == "left_device" and t["registered_after"] is False
    (d,) = r["devices"]
    assert d["loaded_before"] == 2035 * MiB and d["loaded_after"] == 1800 * MiB and d["freed"] == 235 * MiB
    assert d["torch_allocated_freed"] == 235 * MiB and d["torch_reserved_freed"] == 235 * MiB
    assert d["free_gained"] == 235 * MiB
    assert r["summary"] == "Freed 235.00 MiB on cuda:0 (mode offload): SD1ClipModel left the device."
    assert r["in_host_ram"] is False  # memory came back: the face shows the summary as a success
    text = unload_report.text(r)
    assert "cuda:0: ComfyUI loaded 1.99 GiB → 1.76 GiB" in text
    assert "torch allocated 2.05 GiB → 1.82 GiB" in text
    assert "kept: SD15 (BaseModel) (1.60 GiB on cuda:0), AutoencoderKL (160.00 MiB on cuda:0)" in text


def test_dynamic_vram_entry_stays_registered_with_nothing_on_device():
    after_clip = dict(CLIP, bytes=0)
    r = unload_report.build(snap([CLIP, UNET]), snap([after_clip, UNET]), targets={"1"}, strategy="dynamic")
    (t,) = r["targets"]
    assert t["status"] == "left_device" and t["registered_after"] is True
    assert r["freed_bytes"] == 235 * MiB and r["strategy"] == "dynamic"


def test_partial_unload_is_reported_as_partial():
    r = unload_report.build(snap([CLIP]), snap([dict(CLIP, bytes=35 * MiB)]), targets={"1"})
    assert r["reduced"] == ["SD1ClipModel"] and r["left_device"] == []
    assert r["freed_bytes"] == 200 * MiB
    assert "partly left the device" in r["summary"]


def test_nothing_loaded_says_so():
    r = unload_report.build(snap([UNET]), snap([UNET]), targets=set())
    assert r["freed_bytes"] == 0
    assert r["summary"].startswith("No text encoder")
    r = unload_report.build(snap([dict(CLIP, bytes=0)]), snap([dict(CLIP, bytes=0)]), targets={"1"})
    assert "already off the device" in r["summary"]


def test_a_non_target_that_changed_is_named_not_hidden():
    r = unload_report.build(snap([CLIP, UNET]), snap([dict(UNET, bytes=0)]), targets={"1"})
    assert r["others_changed"] == ["SD15 (BaseModel)"]
    assert r["freed_bytes"] == 235 * MiB  # freed counts the targets only
    assert "also changed: SD15 (BaseModel)" in unload_report.text(r)


def test_unknown_allocator_numbers_stay_null():
    r = unload_report.build(snap([CLIP]), snap([]), targets={"1"})
    (d,) = r["devices"]
    assert d["torch_allocated_before"] is None and d["torch_allocated_freed"] is None and d["free_gained"] is None
    assert "torch allocated" not in unload_report.text(r)


def test_multiple_devices_and_encoders():
    t5 = {"key": "4", "name": "FluxClipModel_", "device": "cuda:1", "bytes": 9 * 1024 * MiB, "total_bytes": 9 * 1024 * MiB,
          "is_text_encoder": True}
    before = {"models": [CLIP, t5, UNET], "devices": {}, "host_available": 10}
    after = {"models": [UNET], "devices": {}, "host_available": 5}
    r = unload_report.build(before, after, targets={"1", "4"}, mode="free")
    assert [d["device"] for d in r["devices"]] == ["cuda:0", "cuda:1"]
    assert r["freed_bytes"] == 235 * MiB + 9 * 1024 * MiB
    assert r["summary"] == "Freed 9.23 GiB on cuda:0, cuda:1 (mode free): SD1ClipModel, FluxClipModel_ left the device."
    assert r["host_available_before"] == 10 and r["host_available_after"] == 5


def test_an_encoder_on_the_cpu_is_not_reported_as_freed_memory():
    """--cpu (or a CLIP loaded on the CPU): the offload device is the CPU too, so the encoder leaves ComfyUI's
    list but its weights stay in host RAM. The summary must not say "Freed"."""
    cpu_clip, cpu_unet = dict(CLIP, device="cpu"), dict(UNET, device="cpu")
    before = {"models": [cpu_clip, cpu_unet], "devices": {}, "host_available": 8000 * MiB}
    after = {"models": [cpu_unet], "devices": {}, "host_available": 8000 * MiB}
    r = unload_report.build(before, after, targets={"1"})
    assert r["left_device"] == ["SD1ClipModel"] and r["freed_bytes"] == 235 * MiB  # ComfyUI's count, as measured
    assert r["in_host_ram"] is True  # the face must not colour it as freed memory (web/unload.js)
    # web50 item 10: "Unregistered 235.84 MiB on cpu (offload)" read as jargon; the same figure, in words
    assert r["summary"] == ("SD1ClipModel is no longer in ComfyUI's list of loaded models (235.00 MiB on the CPU, mode "
                            "offload); its weights stay in host RAM, so no memory is freed.")
    assert "->" not in unload_report.text(r) and " 0 B" not in unload_report.text(r)
    assert "- SD1ClipModel on cpu: 235.00 MiB → 0 MiB" in unload_report.text(r)
