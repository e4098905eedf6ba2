"""Which LoadedModel entries the unload touches and how, against stand-ins that behave like ComfyUI's
LoadedModel / ModelPatcher / ModelPatcherDynamic (comfy/model_management.py, comfy/model_patcher.py of
the 2026 host: LoadedModel.model_unload -> patcher.detach; ModelPatcherDynamic.partially_unload frees
its VBAR pages and keeps pinned host buffers; free_memory keeps a partially unloaded entry registered).
The real host path (classic ModelPatcher) runs in tests/host/test_unload.py."""
import importlib
import sys
import types
from pathlib import Path

import pytest
torch = pytest.importorskip("torch")

STUBS = Path(__file__).parent / "stubs"
MiB = 1 << 20


class Weights:  # the nn.Module a patcher wraps; identity is what is_clone compares
    pass


class Patcher:
    def __init__(self, model, size, is_clip=False, load_device="cuda:0"):
        self.model, self.size, self.loaded, self.is_clip = model, size, size, is_clip
        self.load_device, self.offload_device = torch.device(load_device), torch.device("cpu")
        self.parent, self.calls = None, []

    def is_clone(self, other):
        return hasattr(other, "model") and self.model is other.model

    def clone(self):
        n = type(self)(self.model, self.size, self.is_clip, str(self.load_device))
        n.loaded, n.parent = 0, self
        return n

    def model_size(self):
        return self.size

    def loaded_size(self):
        return self.loaded

    def detach(self, unpatch_all=True):
        self.calls.append("detach")
        self.loaded = 0

    def is_dynamic(self):
        return False


class GGUFStylePatcher(Patcher):
    """city96/ComfyUI-GGUF: CLIPLoaderGGUF sets clip.patcher = GGUFModelPatcher.clone(clip.patcher)."""


class DynamicPatcher(Patcher):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.pinned = self.size

    def is_dynamic(self):
        return True

    def partially_unload(self, device_to, memory_to_free=0, force_patch_weights=False):
        self.calls.append(("partially_unload", memory_to_free))
        freed, self.loaded = self.loaded, 0
        return freed

    def detach(self, unpatch_all=True):
        super().detach(unpatch_all)
        self.pinned = 0  # unpatch_model(unpatch_weights=True) -> partially_unload_ram(1e32)


class LoadedModel:
    def __init__(self, patcher):
        self._model, self.device = patcher, patcher.load_device
        self.model_finalizer, self.currently_used = types.SimpleNamespace(detach=lambda: None), True

    @property
    def model(self):
        return self._model

    def model_memory(self):
        return self.model.model_size()

    def model_loaded_memory(self):
        return self.model.loaded_size()

    def model_unload(self, memory_to_free=None, unpatch_weights=True):
        self.model.detach(unpatch_weights)
        self.model_finalizer = None
        return True


@pytest.fixture
def host(monkeypatch):
    mm = types.ModuleType("comfy.model_management")
    mm.current_loaded_models, mm.emptied = [], []
    mm.soft_empty_cache = lambda force=False: mm.emptied.append(force)
    sh = types.ModuleType("comfy.sampler_helpers")
    sh.prepare_sampling = lambda model, *a, **k: ("sampled", model)
    comfy = types.ModuleType("comfy")
    comfy.model_management, comfy.sampler_helpers = mm, sh
    monkeypatch.setitem(sys.modules, "comfy", comfy)
    monkeypatch.setitem(sys.modules, "comfy.model_management", mm)
    monkeypatch.setitem(sys.modules, "comfy.sampler_helpers", sh)
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k.startswith("gpu_garden.nodes")]:
        monkeypatch.delitem(sys.modules, k)
    unload = importlib.import_module("gpu_garden.nodes.unload")
    auto = importlib.import_module("gpu_garden.nodes.auto_unload")
    yield types.SimpleNamespace(mm=mm, sh=sh, unload=unload, auto=auto)
    for k in [k for k in sys.modules if k.startswith("gpu_garden.nodes")]:
        del sys.modules[k]


def load(host, *patchers):
    for p in patchers:
        host.mm.current_loaded_models.insert(0, LoadedModel(p))


def names(host):
    return [type(lm.model).__name__ + ("/clip" if lm.model.is_clip else "") for lm in host.mm.current_loaded_models]


def test_classic_gguf_clone_is_matched_and_only_it_leaves(host):
    base = Patcher(Weights(), 1200 * MiB, is_clip=True)
    encoded_with = GGUFStylePatcher.clone(base)  # the clone that CLIPTextEncode loaded
    encoded_with.loaded = 1200 * MiB
    unet = Patcher(Weights(), 5000 * MiB)
    load(host, encoded_with, unet)
    report = host.unload.unload_clip(types.SimpleNamespace(patcher=base), "offload")
    assert names(host) == ["Patcher"]
    assert encoded_with.calls == ["detach"] and unet.calls == []
    assert report["left_device"] == ["Weights"] and report["freed_bytes"] == 1200 * MiB
    assert report["strategy"] == "classic" and report["others_changed"] == []
    # the face says what the unload means for the user (ux21b), not "moved to cpu, unregistered"
    assert report["notes"] == ["weights moved to system RAM; ComfyUI reloads them when next needed"]
    assert host.mm.emptied  # allocator cache released after unloading


def test_dynamic_offload_releases_vram_pages_keeps_pins_and_registration(host):
    clip = DynamicPatcher(Weights(), 9500 * MiB, is_clip=True)
    unet = DynamicPatcher(Weights(), 23000 * MiB)
    load(host, clip, unet)
    report = host.unload.unload_clip(types.SimpleNamespace(patcher=clip), "offload")
    assert clip.calls == [("partially_unload", 1e32)] and clip.pinned == 9500 * MiB
    assert len(host.mm.current_loaded_models) == 2 and unet.calls == []
    (t,) = report["targets"]
    assert t["status"] == "left_device" and t["registered_after"] is True
    assert report["strategy"] == "dynamic"
    assert "dynamic: VRAM pages released, pinned RAM copy kept" in report["notes"]


def test_dynamic_free_releases_everything(host):
    clip = DynamicPatcher(Weights(), 9500 * MiB, is_clip=True)
    load(host, clip)
    report = host.unload.unload_clip(types.SimpleNamespace(patcher=clip), "free")
    assert clip.calls == ["detach"] and clip.pinned == 0 and host.mm.current_loaded_models == []
    assert "dynamic: VRAM pages and pinned RAM released; ComfyUI reloads the weights when next needed" in report["notes"]


def test_a_non_encoder_sharing_the_weights_is_left_alone(host):
    w = Weights()
    clip, other = Patcher(w, 100 * MiB, is_clip=True), Patcher(w, 100 * MiB)
    load(host, clip, other)
    report = host.unload.unload_clip(types.SimpleNamespace(patcher=clip), "offload")
    assert other.calls == [] and clip.calls == ["detach"]
    assert any("left alone: Weights" in n for n in report["notes"])


def test_clip_without_patcher_is_a_clear_error(host):
    with pytest.raises(ValueError, match="no ModelPatcher"):
        host.unload.unload_clip(object(), "offload")
    with pytest.raises(ValueError, match="mode must be one of"):
        host.unload.unload([], "delete")


def test_auto_unload_takes_encoders_on_the_sampler_device_only(host, monkeypatch):
    unet = Patcher(Weights(), 5000 * MiB)
    te_same = Patcher(Weights(), 9500 * MiB, is_clip=True)
    te_other = Patcher(Weights(), 250 * MiB, is_clip=True, load_device="cuda:1")
    load(host, te_same, te_other, unet)
    monkeypatch.setattr(host.auto, "enabled", lambda: True)
    original = host.sh.prepare_sampling
    host.auto.install()
    try:
        assert host.sh.prepare_sampling(unet) == ("sampled", unet)
    finally:
        host.auto.teardown()
    assert te_same.calls == ["detach"] and te_other.calls == [] and unet.calls == []
    assert host.auto._state["last"]["left_device"] == ["Weights"]
    assert host.sh.prepare_sampling is original  # unwrapped


def test_auto_wraps_once_and_is_inert_when_off(host, monkeypatch):
    clip = Patcher(Weights(), 100 * MiB, is_clip=True)
    load(host, clip)
    monkeypatch.setattr(host.auto, "enabled", lambda: False)
    host.auto.install()
    wrapped = host.sh.prepare_sampling
    host.auto.install()
    assert host.sh.prepare_sampling is wrapped
    host.sh.prepare_sampling(Patcher(Weights(), 1))
    assert clip.calls == []
    host.auto.teardown()


def test_setting_is_read_from_comfyui_settings_file(host, monkeypatch, tmp_path):
    fp = types.ModuleType("folder_paths")
    fp.get_public_user_directory = lambda user: str(tmp_path / user)
    monkeypatch.setitem(sys.modules, "folder_paths", fp)
    (tmp_path / "default").mkdir()
    f = tmp_path / "default" / "comfy.settings.json"
    assert host.auto.enabled() is False  # no file yet
    f.write_text('{"GPUGarden.AutoUnloadTextEncoders": true}')
    assert host.auto.enabled() is True
    f.write_text('{"GPUGarden.AutoUnloadTextEncoders": false, "x": 1}')
    import os

    os.utime(f, ns=(1, 10**18))  # a new mtime even on coarse clocks
    assert host.auto.enabled() is False


def test_settings_follow_the_user_whose_prompt_runs(host, monkeypatch, tmp_path):
    fp = types.ModuleType("folder_paths")
    fp.get_public_user_directory = lambda user: str(tmp_path / user)
    monkeypatch.setitem(sys.modules, "folder_paths", fp)
    for user, on in (("alice", "true"), ("bob", "false"), ("default", "false")):
        (tmp_path / user).mkdir()
        (tmp_path / user / "comfy.settings.json").write_text('{"GPUGarden.AutoUnloadTextEncoders": %s}' % on)
    host.auto.remember("page-a", "alice")
    host.auto.remember("page-b", "bob")  # bob's page loaded last: it must not decide for alice's prompts
    running = {"cid": "page-a"}
    monkeypatch.setattr(host.auto, "running_client_id", lambda: running["cid"])
    assert host.auto.enabled() is True
    running["cid"] = "page-b"
    assert host.auto.enabled() is False
    running["cid"] = None  # an API script: the default user's settings
    assert host.auto.enabled() is False and host.auto.current_user() == "default"
    running["cid"] = "page-a"
    assert host.auto.status()["user"] == "alice"


def test_a_failing_setting_read_never_reaches_the_sampler(host, monkeypatch):
    def broken():
        raise OSError("settings store unreadable")

    monkeypatch.setattr(host.auto, "enabled", broken)
    host.auto.install()
    try:
        assert host.sh.prepare_sampling("m") == ("sampled", "m")
        assert host.auto.FEATURE.as_dict()["working"] is False
        assert "settings store unreadable" in host.auto.FEATURE.last_error
    finally:
        host.auto.teardown()


def test_ownership_is_by_identity_not_copied_attributes(host, monkeypatch):
    import functools

    monkeypatch.setattr(host.auto, "enabled", lambda: False)
    original = host.sh.prepare_sampling
    host.auto.install()
    ours = host.sh.prepare_sampling

    @functools.wraps(ours)  # copies __dict__ and sets __wrapped__ = ours
    def foreign(model, *a, **k):
        return ours(model, *a, **k)

    host.sh.prepare_sampling = foreign
    host.auto.install()
    assert host.sh.prepare_sampling is foreign  # ours is still in the chain: not wrapped twice
    host.auto.teardown()
    assert host.sh.prepare_sampling is foreign  # the foreign wrapper is not ours to remove
    host.sh.prepare_sampling = original
