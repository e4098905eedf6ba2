"""A stand-in for comfy.sd.VAE as Fit to Card's VAE copy sees it: ComfyUI's own memory_used_decode/encode as instance
attributes (as comfy.sd sets them), and each call recorded with the figure it was sized by."""


class Samples:
    def __init__(self, shape):
        self.shape, self.ndim = shape, len(shape)


class VAE:
    latent_dim, vae_dtype, device = 2, "torch.float32", None

    def __init__(self):
        self.memory_used_decode = lambda shape, dtype: 111  # ComfyUI's own, an instance attribute as in comfy.sd
        self.memory_used_encode = lambda shape, dtype: 222
        self.seen = []

    def decode(self, samples_in, vae_options={}):
        self.seen.append(("decode", self.memory_used_decode(samples_in.shape, self.vae_dtype)))
        return "untiled"

    def decode_tiled(self, samples, **args):
        self.seen.append(("tiled", self.memory_used_decode(samples.shape, self.vae_dtype), args))
        return "tiled"

    def encode(self, pixels):
        self.seen.append(("encode", self.memory_used_encode(pixels.shape, self.vae_dtype)))
        return "latent"


def fresh_node(monkeypatch, stubs, name: str):
    """nodes/<name>.py imported anew against the comfy_api stand-ins in `stubs` (tests/unit/stubs)."""
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(stubs))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k in ("gpu_garden.nodes.fit_to_card", "gpu_garden.nodes.estimate")]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module(f"gpu_garden.nodes.{name}")


def fresh_fit_to_card(monkeypatch, stubs):
    return fresh_node(monkeypatch, stubs, "fit_to_card")


def graph_route_on(monkeypatch, stubs, models):
    """nodes/estimate_routes.py imported anew with a folder_paths stand-in that finds files under `models`/<folder>
    as ComfyUI 0.8.0's get_full_path does (os.path.isfile, else None), 64 GiB of host RAM and a CUDA backend."""
    import os
    import sys
    import types

    from gpu_garden.memory.estimate import verdict
    from gpu_garden.nodes import host_models

    routes = fresh_node(monkeypatch, stubs, "estimate_routes")
    fp = types.ModuleType("folder_paths")

    def get_full_path(folder, name):
        full = os.path.join(str(models / folder), os.path.relpath(os.path.join("/", name), "/"))
        return full if os.path.isfile(full) else None

    fp.get_full_path, fp.get_folder_paths = get_full_path, (lambda folder: [str(models / folder)])
    for kind in ("input", "output", "temp"):  # ComfyUI's folders beside models/ (folder_paths.get_input_directory, ...)
        setattr(fp, f"get_{kind}_directory", lambda kind=kind: str(models.parent / kind))
    monkeypatch.setitem(sys.modules, "folder_paths", fp)
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 << 30)
    monkeypatch.setattr(host_models, "compute_backend", lambda: "cuda")
    return routes


def route_per_device(monkeypatch, stubs, files: dict, body: dict, devices=("cpu", "cuda"), ram=64 << 30) -> dict:
    """estimate_routes.estimate_graph(body) on a fake host of each compute device in `devices` (--cpu, a CUDA card):
    `files` maps the workflow's file names to paths, host RAM is `ram`, Dynamic VRAM off. {device: the route's answer}."""
    import importlib

    from gpu_garden.memory.estimate import verdict

    routes = fresh_node(monkeypatch, stubs, "estimate_routes")
    monkeypatch.setattr(routes, "resolve", lambda folders, name: files.get(name))
    monkeypatch.setattr(verdict, "host_available_ram", lambda: ram)
    node = importlib.import_module("gpu_garden.nodes.estimate")  # the one estimate_graph imports (sys.modules)
    monkeypatch.setattr(node, "dynamic_vram_mode", lambda: "off")
    out = {}
    for dev in devices:
        monkeypatch.setattr(node, "compute_device_kind", lambda d=dev: d)
        out[dev] = routes.estimate_graph(body)
    return out
