"""Host RAM and Dynamic VRAM of a run: the models ComfyUI keeps in RAM for a fast reload, offloaded and pinned
weights, the CPU copy Dynamic VRAM (comfy-aimdo) streams from, and what that streaming costs per step. Split from
verdict.py, which judges the run with these figures; Fit to Card (memory/fit/plan.py) judges its plan by the same
ram_need and ram_short."""
import importlib.util
import os

from ..errors import UserError
from ..units import GiB, MiB, fmt_bytes

PCIE_GBPS = 25.0  # effective host->device copy rate assumed for streamed weights (PCIe 4.0 x16), GB/s

def host_ram(est: dict, budget, spilled=None) -> dict:
    """RAM the run needs on the host: models ComfyUI keeps in RAM for a fast reload while another model is on
    the GPU, and the weights that are not on the GPU while they run: those a partial load leaves off it (offloaded:
    spill, the most of any phase ComfyUI loads partially; pinned in place by ComfyUI unless --disable-pinned-memory,
    capped at 95 % of RAM, 45 % on Windows: model_management.MAX_PINNED_MEMORY). Against available RAM.

    With Dynamic VRAM (comfy-aimdo) nothing leaves the CPU. ModelPatcherDynamic.load (comfy/model_patcher.py,
    comfyanonymous/ComfyUI 01ca403) only reserves a VBAR for each weight (vbar.alloc) and never moves a weight; the
    GPU copy is a cache the allocator may evict (comfy-aimdo README: a failed fault() copies the weight in again). So
    every model's CPU copy stays whole in host RAM while it runs (cpu_copy: the state dict as loaded, pageable, or in
    later comfy-aimdo the model file's mmap'd pages, comfy_aimdo/model_mmap.py, which the OS may drop and re-read:
    slower, not fatal). A layer whose fault fails (streamed: dynamic_vram's figure) is copied from that CPU weight into
    a new pinned buffer the size of its weight and bias (comfy/ops.py cast_bias_weight_with_vbar ->
    comfy/pinned_memory.py pin_memory: torch.empty(size) pinned through model_management.pin_memory, so within
    MAX_PINNED_MEMORY), kept for later steps: a second copy, pinned. --cache-ram's RAM-pressure cache drops cached
    models and partially_unload_ram unpins those buffers when RAM runs low (then it streams from the pageable copy):
    the figure is what the run holds when RAM is not short. Feature-detected (dynamic_vram), never pinned to a version.
    spilled: the weights a partial load leaves in RAM where a knob forces it (verdict.knobs' partial offload), instead
    of what the budget leaves. With Dynamic VRAM what leaves the card is its own line's figure (dynamic_stream
    pinned_by_model: each model's streamed layers, pinned) plus a GGUF model's partial load (dyn_partial), never the
    legacy spill of a row that counts the models kept beside it (rev67k R2); those it evicts are kept for reload."""
    from .verdict import MAIN, PARTIAL, partial_load, spill
    forced = spilled  # the caller's (a knob's partial offload), before the legacy spill or the streamed pins fill it
    pol, c = est["policy"], est["_ctx"]
    res = {x["role"]: 0 for x in c["components"]}
    for x in c["components"]:
        if x["role"] != "other":
            res[x["role"]] = res.get(x["role"], 0) + x["resident"]
    # the models a workflow loads beside these (side_models.py: a ControlNet or model patch is a ModelPatcher whose offload
    # device is the CPU, comfy/controlnet.py; an audio encoder; a style model in fp32 on the CPU, its host_ram) and the
    # pixel upscale model (pixel_upscale.py: moved back to the CPU after its step, nodes_upscale_model.py:93): each node's
    # output stays in ComfyUI's cache, in RAM, between phases (ups63, rev63 #3): every upscale model file the graph loads,
    # each once (pixel_upscale.held; arch65: not only the step's). A CLIP vision file is a component already
    up = pol.get("pixel_upscale") or {}
    beside = sum(m.get("host_ram") or m.get("weights", 0) for m in pol.get("side_models") or () if m.get("how") != "component") \
        + (sum(up["held"].values()) if "held" in up else up.get("weights", 0))
    total = sum(v for k, v in res.items() if k != "other") + int(beside)
    bd = est["breakdown"]
    d = est.get("dynamic_vram") or {}
    dyn = bool(d.get("enabled"))
    from . import dynamic_stream as DS
    pins, partial = (DS.pinned_by_model(d), dyn_partial(est, budget)) if dyn and spilled is None else ({}, 0)
    if "dm" in pins and "sample" in est["breakdown"] and DS.side_weights(est, "sample"):  # a ControlNet streams with it
        pins = {("dm+side" if m == "dm" else m): n for m, n in pins.items()}
    if spilled is None and dyn:  # what leaves the card: the streamed layers, pinned copies; a GGUF model's partial load
        spilled = sum(pins.values())  # stays in place, in that model's CPU copy (counted with it): offloaded below
    elif spilled is None:
        spilled = max((spill(bd[k], budget) for k in PARTIAL if k in bd), default=0) if budget else 0
    wk = max((k for k in MAIN if k in bd), key=lambda k: bd[k]["weights"], default=None)
    on_gpu = min(total, bd[wk]["weights"]) if wk else 0
    gpu_roles = set(PHASE_ROLES.get(wk, ()))
    te = res.get("text_encoder", 0)
    te_kept = bd.get("sample", {}).get("te_kept", 0)  # what ComfyUI's loads left of them (te_loaded.py: one rule, F5)
    if te and te_kept and pol.get("text_encoders") == "unload" and not c.get("keep") and partial_load(pol):
        on_gpu = min(total, max(on_gpu, bd["sample"]["weights"] + te_kept))  # ComfyUI had no need to unload them
        gpu_roles = {"diffusion_model", "text_encoder"}
    parts = [(x["role"], x["resident"], x.get("source")) for x in c["components"] if x["role"] != "other"]

    def need(dynamic):
        opts = ram_options(pol, dynamic)
        opts["file_backed"] = mapped_split(parts, opts["file_backed"], gpu_roles, pol.get("files"))
        return ram_need(total, on_gpu, spilled, dynamic=dynamic, available=pol.get("host_ram"), **opts)

    out = need(dyn)
    out["streamed"] = int((d.get("streamed_per_step") or 0) if dyn else 0)
    if dyn:  # the models a phase's row keeps beside its own (--models resident) Dynamic VRAM evicts (DS.OWN): in RAM
        own = max((DS.weights(est, k) for k in DS.OWN if k in bd), default=on_gpu)  # for reload, not the running copy
        evicted = min(max(0, on_gpu - own), out["cpu_copy"])
        out.update(cpu_copy=out["cpu_copy"] - evicted, kept_for_reload=out["kept_for_reload"] + evicted, evicted=evicted)
        if pins or partial:  # offloaded: all that leaves the card, the streamed layers (pinned) and a partial load's
            out.update(streamed_pinned=pins, partial=int(partial), offloaded=int(spilled + partial))
    if pol.get("dynamic_vram", "auto") == "auto" and not dyn and pol.get("device", "cuda") in AIMDO_DEVICES \
            and (pol.get("runner") or "comfyui") == "comfyui":  # comfy-aimdo is ComfyUI's alone (runner_off_note)
        # the figures --dynamic-vram on gives, from its own streamed layers (one source: rev68b F1, the legacy spill was
        # read here where the on line reads dynamic_stream's)
        e_on = dict(est, policy=dict(pol, dynamic_vram="on"))
        e_on["dynamic_vram"] = dynamic_vram(e_on, budget)
        out["assumed_dynamic_vram"] = assumed_dynamic(host_ram(e_on, budget, forced))
    return out


PIN_WHAT = {"dm": "of the diffusion model (streamed each step)",
            "dm+side": "of the diffusion model and the ControlNet or model patch run with it (streamed each step)",
            "te": "of the text encoders (in text encode)", "vae": "of the VAE (in its decode or encode)"}


def ram_parts(r: dict) -> str:
    """host_ram's figures in the report's 'host RAM: needs ...' parentheses. With Dynamic VRAM: the models it evicts
    from the card kept for reload apart from the running model's CPU copy, and the pinned copies of the layers that
    stream, each model's (dynamic_stream.pinned_by_model): the figures its own line gives (rev67k R2), where they sum
    to the pinned total (not with --disable-pinned-memory or past the pin cap: then what streams, and the cap)."""
    ev = r.get("evicted") or 0
    pins = r.get("streamed_pinned") or {}
    out = f"kept for reload {fmt_bytes(r['kept_for_reload'])}" + (
        f" ({fmt_bytes(ev)} of it evicted from the card by Dynamic VRAM)" if ev else "")
    if r.get("cpu_copy"):
        out += f", CPU copy of the running model {fmt_bytes(r['cpu_copy'])} (Dynamic VRAM)"
    if pins and r["pinned"] == sum(pins.values()):
        out += (f", pinned copies of the streamed layers {fmt_bytes(r['pinned'])} ("
                + ", ".join(f"{fmt_bytes(n)} {PIN_WHAT.get(m, m)}" for m, n in pins.items()) + ")")
    elif pins:  # --disable-pinned-memory, or ram_need's pin cap: the per-model figures would not sum to it (rev68b F3)
        out += f", streamed layers {fmt_bytes(sum(pins.values()))} (" + (
            f"pinned copies capped at {fmt_bytes(r['pinned'])})" if r["pinned"] else "not pinned: read from the CPU copy)")
    if pins or r.get("partial"):
        out += (f", offloaded by a partial load {fmt_bytes(r['partial'])} (in place, within its model's copy)"
                if r.get("partial") else "")
    else:
        out += f", offloaded {fmt_bytes(r['offloaded'])}" + (f", streamed {fmt_bytes(r['streamed'])}" if r.get("streamed") else "") \
            + f", pinned {fmt_bytes(r['pinned'])}"
    return out + (f"; file-backed {fmt_bytes(r['file_backed'])}, hard need {fmt_bytes(r['hard_need'])}" if r.get("file_backed") else "")


def dyn_partial(est: dict, budget) -> int:
    """What a GGUF model's partial load leaves in RAM under Dynamic VRAM (ComfyUI-GGUF's patcher is not the dynamic
    one: dynamic_stream.GGUF_ROLES): its phase's spill, at most its own model (the others Dynamic VRAM evicts)."""
    from . import dynamic_stream as DS
    from .verdict import spill
    bd = est["breakdown"]
    return max((min(spill(bd[k], budget), DS.weights(est, k)) for k in DS.gguf_phases(est) if k in bd), default=0) \
        if budget else 0


def assumed_dynamic(r: dict) -> dict:
    """Automatic mode where comfy-aimdo is not found here (the CLI outside ComfyUI's environment): the RAM the run would
    need with Dynamic VRAM on, ComfyUI's default where comfy-aimdo is installed, judged by the same ram_need and
    ram_short; an assumption beside the verdict (which stays as detected: off), never the verdict itself."""
    keep = ("needed", "kept_for_reload", "cpu_copy", "pinned", "file_backed", "hard_need", "available", "verdict")
    return dict({k: r[k] for k in keep}, short=ram_short(r))


ASSUMED_DYNAMIC = "Dynamic VRAM (assumed):"


def assumed_dynamic_line(a: dict) -> str:
    """The assumption line for assumed_dynamic's judgement (judge appends it; '' without a RAM figure)."""
    if not a or not a.get("available"):
        return ""
    return (f"{ASSUMED_DYNAMIC} comfy-aimdo was not found here, so host RAM is judged with Dynamic VRAM off; where ComfyUI "
            f"runs with it (its default when comfy-aimdo is installed) the run would keep {fmt_bytes(a['needed'])} in RAM "
            f"(the running models' CPU copy {fmt_bytes(a['cpu_copy'])}, pinned streamed layers {fmt_bytes(a['pinned'])}, "
            f"kept for reload {fmt_bytes(a['kept_for_reload'])}) of {fmt_bytes(a['available'])}: "
            + ("host RAM short, does not fit" if a["short"] else a["verdict"]) + "; --dynamic-vram on|off says which")


def ram_options(pol: dict, dynamic: bool) -> dict:
    """ram_need's keyword arguments from a policy (the estimate's, or the one Fit to Card passes): cache_models,
    pinned_memory (False: --disable-pinned-memory), platform windows (the pin cap), weights_mmap auto|on|off (whether
    Dynamic VRAM's CPU copy is the file's pages; auto: aimdo_maps_files)."""
    mm = pol.get("weights_mmap", "auto")
    if mm not in ("auto", "on", "off", True, False):
        raise UserError(f"weights_mmap must be auto, on or off, not {mm!r}")
    return {"cache_models": pol.get("cache_models", True), "pinned_memory": pol.get("pinned_memory") is not False,
            "windows": pol.get("platform") == "windows",
            "file_backed": bool(dynamic) and (aimdo_maps_files() if mm == "auto" else mm in ("on", True))}


PHASE_ROLES = {"sample": ("diffusion_model",), "text_encode": ("text_encoder",), "vae_decode": ("vae",), "vae_encode": ("vae",)}
# comfy/utils.py load_torch_file hands only .safetensors / .sft to safetensors (mapped); every other file goes through
# torch.load. ComfyUI-GGUF's gguf_sd_loader wraps gguf.GGUFReader's np.memmap (torch.from_numpy(tensor.data), loader.py)
MAPPED_EXT = (".safetensors", ".sft", ".gguf")
# a model file's name: folder_paths.supported_pt_extensions (ComfyUI 0.8.0) and ComfyUI-GGUF's .gguf; any other name is
# not a file's (a layout such as sd3_sd3.5_medium, a node's model title)
MODEL_FILE_EXT = (".ckpt", ".pt", ".pt2", ".bin", ".pth", ".safetensors", ".pkl", ".sft", ".gguf")


def mapped_file(source, maps: bool) -> bool:
    """Whether a component's CPU copy is its file's mapped pages, where the loader maps files (`maps`: ComfyUI's
    load_torch_file hands .safetensors / .sft to load_safetensors, comfy_aimdo.model_mmap, when Dynamic VRAM is on;
    ComfyUI 0.8.0 does not). Only MAPPED_EXT files are mapped: .ckpt / .pt / .pt2 / .pth / .bin / .pkl go through
    torch.load, anonymous memory whatever `maps` says. A name that is not a model file's is as `maps` says."""
    ext = os.path.splitext(str(source or "").lower())[1]
    return bool(maps) and (ext in MAPPED_EXT or ext not in MODEL_FILE_EXT)


def mapped_split(parts, maps: bool, running, files=None) -> tuple[int, int]:
    """(bytes of the running models, bytes of those kept for reload) whose CPU copy is their file's mapped pages:
    ram_need's per-file file_backed, for the estimate (host_ram) and Fit to Card (plan) alike. parts: (role, bytes,
    source); running: the roles on the GPU. files: {role: [file names]} the loaders name (a workflow, the queued
    prompt: workflow.files_by_role); a role named there is mapped only when every file named for it is (a .ckpt
    among them is read by torch.load: anonymous), else the component's own source decides."""
    out = [0, 0]
    for role, n, source in parts:
        names = (files or {}).get(role) or [source]
        if all(mapped_file(x, maps) for x in names):
            out[role not in running] += int(n)
    return out[0], out[1]


def ram_short_by(r) -> int:
    """Bytes of host RAM missing: the hard need (what the model files' pages do not cover) over what is available."""
    return max(0, int(r.get("hard_need", r.get("needed")) or 0) - int(r.get("available") or 0)) if r else 0


def ram_on_dynamic(d: dict, r: dict):
    """Dynamic VRAM's verdict with host RAM's: streamed weights are read from the running model's CPU copy (pageable,
    or the model file's mapped pages) into pinned buffers (host_ram's docstring has the source), so a run whose RAM is
    short (ram_short) does not fit however little VRAM it needs; one whose RAM need the file's pages cover is slower.
    vram_verdict keeps the VRAM side alone; verdict is the run's, the same words in text and JSON. In place."""
    v = d.get("vram_verdict")
    d["host_ram_short_by"] = None
    if not v or not r or not r.get("available"):
        return
    if ram_short(r):
        d["host_ram_short_by"] = ram_short_by(r)
        d["verdict"] = (f"does not fit: host RAM short by {fmt_bytes(ram_short_by(r))} (the run needs {fmt_bytes(r['hard_need'])}"
                        f" of it, {fmt_bytes(r['available'])} available); in VRAM alone it {v}")
    elif str(r.get("verdict") or "").startswith("slower"):
        d["verdict"] = (f"{v}; host RAM holds {fmt_bytes(r['hard_need'])} of the {fmt_bytes(r['needed'])} the run keeps, the "
                        "rest is the model file's pages, read again from disk (slower)")


def ram_short(r) -> bool:
    """Host RAM decides the run: what must be in RAM (ram_need's hard need) is over what is available. The one
    predicate for the estimate's outcome and Fit to Card's plan. Short means the OS swaps or ends the process, even
    when nothing spills (with Dynamic VRAM every running weight's CPU copy stays); a need the file's pages cover is
    slower, not short."""
    return bool(r) and str(r.get("verdict") or "").startswith("does not fit")


def aimdo_maps_files() -> bool:
    """comfy-aimdo ships model_mmap (ModelMMAP: the model file mapped read-only and private, src-posix/model-mmap.c
    mmap(PROT_READ, MAP_PRIVATE); bounce() = madvise(MADV_DONTNEED), Comfy-Org/comfy-aimdo ce3c59e), the loader that
    keeps Dynamic VRAM's CPU weights as the file's pages. A file check: comfy_aimdo is never imported here."""
    try:
        found = importlib.util.find_spec("comfy_aimdo")
    except (ValueError, ImportError):
        return False
    dirs = (found.submodule_search_locations or []) if found else []
    return any(os.path.isfile(os.path.join(d, "model_mmap.py")) for d in dirs)


def ram_need(total, on_gpu, spilled, *, dynamic, available=None, cache_models=True, pinned_memory=True,
             windows=False, file_backed=False) -> dict:
    """Host RAM of a run, the one figure the estimate (host_ram) and Fit to Card (memory/fit/plan.py) both judge by.
    total: every model's weights as loaded; on_gpu: the running phase's (its whole model, spilled part included);
    spilled: what a partial load leaves off the GPU (Dynamic VRAM: streams). Models other than the running ones stay
    in RAM for a fast reload (cache_models); the spill stays in place, pinned, and with Dynamic VRAM the running model's
    whole CPU copy stays too, plus a pinned copy of each streamed layer (host_ram's docstring has the source).
    file_backed: the CPU copies are the model files' mapped pages (comfy-aimdo's ModelMMAP, Dynamic VRAM only), which
    the kernel drops under pressure and reads again from disk: True for every model (the running ones' cpu_copy and those
    kept for reload, loaded the same way), or (running bytes, kept bytes) mapped (mapped_file, per file). Needed beyond
    available is then slower, not fatal, as long as the rest (hard_need: anonymous copies, pins, spill) fits. A copy made by load_state_dict into the module's own parameters (ComfyUI
    0.8.0 model_base.py l.309, no assign) is anonymous memory: a hard need like the rest."""
    kept = max(0, int(total) - int(on_gpu)) if cache_models else 0
    cpu_copy = int(on_gpu) if dynamic else 0
    pinned = int(spilled) if pinned_memory else 0
    if available:
        pinned = min(pinned, int(available * (0.45 if windows else 0.95)))
    need = kept + cpu_copy + (pinned if dynamic else int(spilled))  # in place when partially loaded; a second copy when streamed
    if isinstance(file_backed, tuple):  # bytes mapped among the running models and among those kept for reload
        fb = min(cpu_copy, int(file_backed[0])) + min(kept, int(file_backed[1])) if dynamic else 0
    else:  # every model loaded the same way: all mapped or none
        fb = cpu_copy + kept if file_backed and dynamic else 0
    out = {"needed": int(need), "kept_for_reload": int(kept), "cpu_copy": int(cpu_copy), "offloaded": int(spilled),
           "pinned": int(pinned), "available": int(available) if available else None, "file_backed": int(fb),
           "hard_need": int(need - fb)}
    if not available:
        out["verdict"] = "no RAM figure"
    elif need <= 0.85 * available:
        out["verdict"] = "fits"
    elif need <= available:
        out["verdict"] = "tight"
    elif need - fb <= available:
        out["verdict"] = "slower, re-reading weights from disk (the CPU copy is the model file's pages, dropped when RAM is short)"
    else:
        out["verdict"] = "does not fit (swap / pagefile: slow, or the process is killed)"
    return out


def host_available_ram():
    """Available host RAM in bytes (psutil when present, /proc/meminfo on Linux), or None."""
    try:
        import psutil
        return int(psutil.virtual_memory().available)
    except Exception:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# -- Dynamic VRAM ---------------------------------------------------------------------------------

def aimdo_detected() -> bool:
    """comfy-aimdo importable (ComfyUI's Dynamic VRAM allocator). Inside ComfyUI the node also asks
    comfy.cli_args.enables_dynamic_vram() when it exists. Never imports it here."""
    try:
        return importlib.util.find_spec("comfy_aimdo") is not None
    except (ValueError, ImportError):
        return False


# comfy-aimdo ships a CUDA and a ROCm build only (comfy_aimdo/control.py: detect_vendor reads '+cu' / '+rocm' from torch's
# version, init maps {"cuda": "aimdo", "rocm": "aimdo_rocm"}): no Dynamic VRAM on mps, xpu or the CPU (aud67a F9)
AIMDO_DEVICES = ("cuda", "rocm")


def aimdo_off_note(device) -> str:
    return (f"Dynamic VRAM off: comfy-aimdo has CUDA and ROCm builds only (comfy_aimdo/control.py), no {device} one; "
            "figured as ComfyUI loads without it")


def runner_off_note(runner) -> str:
    """comfy-aimdo is ComfyUI's allocator (main.py turns it on; its CoreModelPatcher is the dynamic patcher): a diffusers
    pipeline or Wan's own scripts load without it (rev67f F1)."""
    return (f"Dynamic VRAM off: comfy-aimdo runs inside ComfyUI only, not under --runner {runner}; figured as {runner} "
            "loads without it")


def dynamic_vram(est: dict, budget) -> dict:
    """With Dynamic VRAM the weights that do not fit stream in per layer each step instead of failing:
    GiB streamed per step and the time that adds at PCIE_GBPS (an estimate, not measured)."""
    pol = est["policy"]
    mode = pol.get("dynamic_vram", "auto")
    on = aimdo_detected() if mode == "auto" else mode == "on"
    device = pol.get("device", "cuda")
    runner = pol.get("runner") or "comfyui"
    if on and (runner != "comfyui" or device not in AIMDO_DEVICES and device != "cpu"):  # the CPU: verdict.cpu_run's
        return {"enabled": False, "source": f"--runner {runner}" if runner != "comfyui" else f"--device {device}",
                "off_note": aimdo_off_note(device) if runner == "comfyui" else runner_off_note(runner),
                "streamed_per_step": None, "added_seconds_per_step": None, "verdict": None, "vram_verdict": None}
    out = {"enabled": bool(on), "source": (("detected comfy-aimdo" if on else "comfy-aimdo not detected") if mode == "auto"
                                         else f"--dynamic-vram {mode}"),
           "streamed_per_step": None, "added_seconds_per_step": None, "verdict": None, "vram_verdict": None}
    bd = est["breakdown"]
    from . import dynamic_stream as DS  # every phase CoreModelPatcher loads streams, text encode too (aud67a F3)
    if not on:
        out["gguf_note"] = DS.needs_dynamic_note(est)
    if not on or not budget or "sample" not in bd:
        return out
    by, short = DS.by_phase(est, budget)
    gguf = DS.gguf_phases(est)
    out["gguf_note"] = DS.gguf_note(gguf) if gguf else None
    streamed = by.get("sample", 0)  # none from a GGUF diffusion model (DS.GGUF_ROLES)
    gbps = float(pol.get("pcie_gbps") or PCIE_GBPS)
    out["streamed_per_step"] = int(streamed)
    out["streamed_by_phase"] = {k: n for k, n in by.items() if n}
    out["added_seconds_per_step"] = round(streamed / (gbps * 1e9), 2)
    over = DS.not_streamed(est, budget)
    partial = [k for k in gguf if k in DS.over(est, budget)]
    if over:  # one verdict: the main one says DOES NOT FIT for that phase too (rev67f F2)
        out["verdict"] = DS.not_streamed_words(over)
    elif partial:  # not "fits": the main verdict is the partial load's (verdict._vram_outcome)
        out["verdict"] = DS.partial_words(partial) + DS.sample_words(out) + DS.others_words(by)
    elif short:
        out["verdict"] = "does not fit even streaming: activations alone exceed the budget" + (
            "" if short == ["sample"] else f" ({' and '.join(k.replace('_', ' ') for k in short)})")
    elif streamed:
        out["verdict"] = (f"fits, streaming {fmt_bytes(streamed)} of weights per step, slower by about "
                          f"{out['added_seconds_per_step']} s per step (estimate at {gbps:g} GB/s)" + DS.others_words(by))
    elif out["streamed_by_phase"]:
        out["verdict"] = "fits, sampling without streaming" + DS.others_words(by)
    else:
        out["verdict"] = "fits without streaming"
    out["vram_verdict"] = out["verdict"]  # finish adds host RAM's to verdict (ram_on_dynamic)
    return out
