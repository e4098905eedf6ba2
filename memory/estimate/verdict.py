"""Verdicts on an estimate: VRAM (fits / tight / does not fit, the smallest card, the VAE decode as ComfyUI
runs it on that budget), the outcome with host RAM and Dynamic VRAM (their figures: host_ram.py), and the knobs
that would make it fit."""
from . import cfg_batch, spec, vae_resident
from . import dynamic_stream as DS
from . import weights as W
from .host_ram import (ASSUMED_DYNAMIC, assumed_dynamic_line, dynamic_vram, host_ram, ram_on_dynamic, ram_short,
                       ram_short_by)
from .host_ram import host_available_ram  # noqa: F401  callers and tests' monkeypatch use verdict.host_available_ram
from .phase_peaks import peak_on
from ..units import GiB, MiB, fmt_bytes

# vae_encode: image-to-video's conditioning video only; audio_decode: LTX-2's audio VAE and vocoder (audio_decode.py);
# latent_upscale: LTX-2's two-stage upscale step (latent_upscale.py); pixel_upscale: ImageUpscaleWithModel (pixel_upscale.py)
MAIN = ("text_encode", "vae_encode", "sample", "latent_upscale", "vae_decode", "pixel_upscale", "audio_decode")


def as_run(r: dict, budget) -> tuple:
    """The main phases of peak_on's result `r` as ComfyUI runs them on `budget`: ({phase: bytes}, {phase:
    breakdown}, {phase: {"untiled": bytes, "tiled": bytes}} of the phases it retries tiled). comfy/sd.py VAE.decode
    and VAE.encode catch OOM_EXCEPTION and retry tiled (decode_tiled_ / decode_tiled_3d, encode_tiled_ /
    encode_tiled_3d): a VAE phase over the budget whose retry (r["retry"]) fits counts at the retry; a row that is
    the retry already (r["untiled"]) is listed with its untiled figure. One rule for the peak, the verdict, the
    smallest card and the outcome."""
    phases = {k: v for k, v in r["phases"].items() if k in MAIN}
    bd = {k: r["breakdown"][k] for k in phases}
    retried = {}
    for k, b in (r.get("retry") or {}).items():
        tiled = b["weights"] + b["activations"] + b["allocator_margin"] + b["fixed"]
        room = (r.get("vae") or {}).get("room_extra", 0) if k == "vae_decode" else 0  # decode_room.py (fix68g)
        if budget and k in phases and phases[k] + room > budget and tiled <= budget:
            retried[k] = {"untiled": phases[k] + room, "tiled": tiled}
            phases[k], bd[k] = tiled, b
    for k, v in (r.get("untiled") or {}).items():
        if budget and k in phases and phases[k] <= budget < v:
            retried[k] = {"untiled": v, "tiled": phases[k]}
    return phases, bd, retried


def run_phases(est: dict) -> dict:
    """est's main phases as ComfyUI runs them on its budget (as_run's figures, kept by finish)."""
    tr = est.get("tiled_retry") or {}
    return {k: tr[k]["tiled"] if k in tr else v for k, v in est["phases"].items() if k in MAIN}


def _apply(est, r, budget):
    from .formula import FRAGMENTATION
    est["phases"], est["breakdown"], est["vae"] = r["phases"], r["breakdown"], r["vae"]
    main, bd, retried = as_run(r, budget)
    pk = max(main, key=main.get)
    est["peak"], est["peak_phase"] = main[pk], pk
    est["tiled_retry"] = retried
    # the text's two rows of a retried phase (report.py): VAE Decode's untiled try, and the tiled retry the peak counts
    est["_retry_rows"] = {k: {"untiled": (r.get("untiled_breakdown") or {}).get(k, r["breakdown"][k]),
                              "tiled": (r.get("retry") or {}).get(k, r["breakdown"][k])} for k in retried}
    est["peak_untiled"] = max(retried[k]["untiled"] if k in retried else v for k, v in main.items())
    # what ComfyUI left loaded beside a phase, outside its row (the diffusion model and text encoders at the decode, its
    # tiled retry too: vae_resident.py; the text encoders at sampling: te_loaded.py): their weights are live tensors, so
    # max_memory_allocated counts them as nvidia-smi does (review aud67a F1)
    left = {k: 0 if bd[k].get("kept_in_row") else  # a tiled retry's row has them already (phase_peaks, fix68g)
            sum(r["breakdown"].get(k, {}).get(x, 0) for x in ("dm_kept", "te_kept", "vae_kept")) for k in bd}
    torch_by = {k: b["weights"] + b["activations"] + left[k] for k, b in bd.items()}
    device_by = {k: b["weights"] + b["activations"] + b["allocator_margin"] + b.get("cached_slack", 0) + left[k]
                 for k, b in bd.items()}
    # the phase each is reached in: not always the peak's (the text names it where it differs: rev67e F7)
    est["peak_torch_phase"], est["peak_device_phase"] = max(torch_by, key=torch_by.get), max(device_by, key=device_by.get)
    est["peak_torch"] = torch_by[est["peak_torch_phase"]]
    est["peak_device"] = device_by[est["peak_device_phase"]] + est["fixed"]["cuda_context"]
    c = est["_ctx"]
    w = c["w"]
    aud = c.get("audio") or {}  # LTX-2's audio VAE and vocoder (audio_decode.py)
    up = c.get("latent_upscale") or {}  # LTX-2's latent upscaler (latent_upscale.py)
    px = est["policy"].get("pixel_upscale") or {}  # ImageUpscaleWithModel's model (pixel_upscale.py)
    est["all_resident"] = int(w["dm"] + w["te"] + w["vae"] + aud.get("weights", 0) + up.get("weights", 0) + px.get("weights", 0)
                              + (1 + FRAGMENTATION) * max(c["act"], (r["vae"] or {}).get("bytes", 0), c["te_act"],
                                                          r["breakdown"].get("vae_encode", {}).get("activations", 0),
                                                          aud.get("bytes", 0), up.get("bytes", 0), px.get("bytes", 0))
                              + sum(est["fixed"].values()))


def _card(gb):
    return spec.card_bytes(gb)


def finish(est: dict, budget) -> dict:
    """Phases, peak, smallest card and verdicts of `est` on `budget` bytes (None: as ComfyUI would run on the
    smallest card that fits). In place; returns est."""
    cpu = on_cpu(est["policy"]) and not budget  # no card: the run is in host RAM (cpu_run); the node's vram_gb on a
    # CPU plans for a card instead (nodes/estimate.live_budget), the CLI refuses --vram with --device cpu
    if on_cpu(est["policy"]):  # a CPU estimate judged on a card (workflow.tiers) keeps the card's reserve
        est["fixed"] = dict(est["fixed"], comfyui_reserve=reserve_on(est["policy"], budget))
    min_gb = None
    for gb in (() if cpu else spec.CARD_SIZES_GB):  # each card with the conds as ComfyUI runs them there (cfg_batch)
        if max(as_run(peak_on(cfg_batch.choose(est, _card(gb)), _card(gb)), _card(gb))[0].values()) <= _card(gb):
            min_gb = gb
            break
    on = budget if budget else (_card(min_gb) if min_gb else None)
    chosen = est if cpu else cfg_batch.choose(est, on)  # cond and uncond batched or one at a time on this budget (samplers.py:263-274)
    if chosen is not est:
        est.clear()
        est.update(chosen)
    est["min_vram_gb"] = min_gb
    est["budget"] = int(budget) if budget else None
    if cpu:  # VAE.decode sizes its batch on get_free_memory(cpu), the RAM available, with the other models in it
        w, ram = est["_ctx"]["w"], est["policy"].get("host_ram")
        on = max(int(ram) - w["dm"] - w["te"], 0) if ram else None
    _apply(est, peak_on(est, on), on)
    v = est.get("vae") or {}
    est["assumptions"] = [a for a in est["assumptions"] if not a.startswith(("VAE decode:", "no budget:"))]
    if v:
        comfy = est["policy"].get("runner") != "diffusers"  # diffusers' pipelines neither size a batch nor use the node
        tile = dict(spec.TILE_NODE, **{k: x for k, x in (est["policy"].get("tile") or {}).items() if x is not None})
        est["assumptions"].append(  # the tile the tiled row was figured with (--vae-tile, a VAEDecodeTiled node's)
            f"VAE decode: {v['how']}, {v['dtype']} ({est['_ctx']['vae_dtype_why']}); per sample {fmt_bytes(v['per_sample'])}"
            + ((f"; ComfyUI loads the VAE with memory_required {fmt_bytes(v['comfy_per_sample'])}, one sample's untiled figure "
                "(VAE.decode_tiled, comfy/sd.py:831)" if est["policy"].get("vae_decode") == "tiled" else
                f"; ComfyUI sizes its batch with {fmt_bytes(v['comfy_per_sample'])} per sample") if comfy else "")
            + vae_resident.line(est["breakdown"].get("vae_decode", {}).get("dm_kept", 0),
                                est["breakdown"].get("vae_decode", {}).get("te_kept", 0))
            + (f"; tiled: VAE Decode (Tiled) {tile['tile']} px" + (f", {tile['frames']} frames" if est["frames"] > 1 else "")
               if comfy and v.get("tiled_bytes") is not None else ""))  # None: no tiles (the ShapeVAE, hunyuan3d.py)
    if not budget and min_gb:
        est["assumptions"].append(f"no budget: figured as ComfyUI would run on the smallest card that fits ({min_gb} GB)")
    if not budget:
        est["verdict"], est["headroom"] = "no budget", None
    else:
        est["headroom"] = int(budget - est["peak"])  # a phase retried tiled ran out of memory first: tight at best
        est["verdict"] = "fits" if est["peak"] <= spec.FITS_BELOW * budget and not est["tiled_retry"] \
            else "tight" if est["peak"] <= budget else "does not fit"
    pol = est["policy"]
    est["dynamic_vram"] = d = dynamic_vram(est, budget)
    for note in (d.get("off_note"), d.get("gguf_note")):  # comfy-aimdo detected here, not on that device; GGUF files
        if note and note not in est["assumptions"]:
            est["assumptions"].append(note)
    est["host_ram"] = host_ram(est, budget)
    short = ram_short(est["host_ram"])
    est["assumptions"] = [a for a in est["assumptions"] if not a.startswith(ASSUMED_DYNAMIC)]
    line = assumed_dynamic_line(est["host_ram"].get("assumed_dynamic_vram"))
    if line:
        est["assumptions"].append(line)
    if not pol.get("_no_knobs"):
        est["knobs"] = knobs(est)
        for k in est["knobs"]:
            k["fits"] = k["peak_after"] <= budget if budget else None
            if budget and ram_short(k.get("host_ram") or est["host_ram"]):  # the knob's own RAM need (knobs), else
                k["fits"], k["host_ram_short"] = False, True  # the run's: its weights stay in RAM as they are
    ram_on_dynamic(d, est["host_ram"])
    if streams(est, budget) and not short:  # Dynamic VRAM: the weights that do not fit stream in per step
        est["verdict"] = "fits with streaming"
    est["outcome"] = outcome(est, budget)
    seen = est["outcome"]
    if cpu:
        cpu_run(est)
    if seen["status"] == "incomplete":  # a graph not seen whole has no verdict, on a card or in host RAM (cpu_run's
        # judgement would be of the files found): the text's and the JSON's agree
        est["outcome"], est["verdict"], est["headroom"] = seen, "incomplete", None
    est["verdict_caveat"] = caveat = unknown_caveat(est)  # added beside verdict (JSON): its meaning and values unchanged
    if caveat:
        o = est["outcome"]
        o["reason"] = f"{o['reason']}; {caveat}" if o.get("reason") else caveat
    return est


def unknown_caveat(est: dict) -> str | None:
    """What a verdict on an unrecognised diffusion model rests on (ux58: a file of unknown architecture read FITS, from
    its weights and a generic guess at the rest, with nothing in the verdict saying so): the weights are the file's
    own bytes, the activations formula.py's generic figure, not this model's. None for a known family or no verdict."""
    if not est.get("unknown") or est["outcome"].get("status") == "incomplete":
        return None
    return (f"unknown architecture: its weights ({fmt_bytes(est['weights']['diffusion_model'])}) are read from the "
            "file, its activations are generic figures, not this model's, so the peak may be off either way")


def on_cpu(pol: dict) -> bool:
    """ComfyUI computing on the CPU (--cpu; the node's compute device cpu): every model in host RAM."""
    return pol.get("device") == "cpu" and pol.get("runner", "comfyui") == "comfyui"


def reserve_on(pol: dict, budget) -> int:
    """ComfyUI's reserve on the device an estimate is judged for. In host RAM (a CPU device, no card budget) none:
    ComfyUI 0.8.0's reserve enters load_models_gpu's extra_mem and minimum_memory_required (comfy/model_management.py
    :626,630), used only by free_memory for a device that is not the CPU (:672-681) and by the partial load, which a CPU
    load device skips (:686-687 VRAMState.DISABLED). On a card (a budget: the node's vram_gb, a card tier) the card's:
    --reserve-vram, else its platform's (spec.comfy_reserve)."""
    if on_cpu(pol) and not budget:
        return 0
    if pol.get("reserve") is not None:
        return int(pol["reserve"])
    return spec.comfy_reserve(pol.get("platform", "linux"), budget)


def cpu_run(est: dict):
    """The verdict of a CPU run, judged on host RAM: ComfyUI 0.8.0 --cpu sets vram_state DISABLED (cpu_state !=
    CPUState.GPU), loads each model whole on its CPU device (load_models_gpu: lowvram_model_memory 0 there) and
    frees nothing for a CPU device (free_memory skipped when device is cpu), so the running phase's weights and
    activations (the peak: reserve_on counts no reserve on a CPU device, as ComfyUI keeps none there) sit in RAM beside
    the models kept for reload. Host RAM's figures, the verdict, the outcome and the exit code are that sum against
    available RAM. In place."""
    r = est["host_ram"]
    running = int(est["peak"])
    need = running + r["kept_for_reload"]
    r.update(running=running, needed=need, hard_need=need, cpu_copy=0, file_backed=0)
    avail = r.get("available")
    r["verdict"] = ("no RAM figure" if not avail else "fits" if need <= 0.85 * avail else "tight" if need <= avail
                    else "does not fit (swap / pagefile: slow, or the process is killed)")
    est["verdict"] = "no budget" if not avail else r["verdict"].split(" (")[0]
    est["headroom"] = int(avail - need) if avail else None
    est["dynamic_vram"].update(enabled=False, source="--device cpu: no GPU", verdict=None, vram_verdict=None)
    est["knobs"] = [k for k in est.get("knobs", []) if k["id"] != "partial_offload"]  # nothing leaves a CPU device
    est["outcome"] = {"status": est["verdict"], "offloaded": 0, "reason": (
        f"CPU run: the running phase {fmt_bytes(running)}"
        f" and the models kept for reload {fmt_bytes(r['kept_for_reload'])} "
        f"in host RAM, {fmt_bytes(avail)} available" if avail else "CPU run: no host RAM figure")}


def streams(est: dict, budget) -> bool:
    """Dynamic VRAM runs it by streaming: its verdict fits (every phase over the budget streams: dynamic_stream, which
    says does not fit for one that does not, rev67f F2) where the peak does not. Whether host RAM holds it is
    host_ram's. Something must stream, or the peak be over the budget (the models --models resident keeps beside the
    running one, which Dynamic VRAM evicts: DS.reason): a tight run that streams nothing stays tight (rev68b F4)."""
    d = est.get("dynamic_vram") or {}
    moves = d.get("streamed_per_step") or d.get("streamed_by_phase") or est["verdict"] == "does not fit"
    return str(d.get("vram_verdict")).startswith("fits") and est["verdict"] in ("tight", "does not fit") and bool(moves)


def outcome(est: dict, budget) -> dict:
    """What happens when ComfyUI runs it on `budget` (_vram_outcome), and host RAM: a run whose RAM is short
    (ram_short) does not fit, whatever the VRAM says (Fit to Card's plan judges it by the same predicate)."""
    o = _vram_outcome(est, budget)
    r = est.get("host_ram") or {}
    if budget and ram_short(r) and o["status"] not in ("does not fit", "incomplete"):
        return {"status": "does not fit", "offloaded": 0, "reason": (
            f"host RAM is short: the run needs {fmt_bytes(r['needed'])} of it (kept for reload {fmt_bytes(r['kept_for_reload'])}"
            + (f", the running models' CPU copy {fmt_bytes(r['cpu_copy'])}" if r.get("cpu_copy") else "")
            + f"), {fmt_bytes(r['available'])} available: the OS would swap or end the process")}
    if budget and str(r.get("verdict") or "").startswith("slower") and not o["reason"]:
        o["reason"] = (f"host RAM holds {fmt_bytes(r['hard_need'])} of the {fmt_bytes(r['needed'])} the run would keep; "
                       "the rest is the model file's pages, read again from disk (slower)")
    return o


def _vram_outcome(est: dict, budget) -> dict:
    """What happens when ComfyUI runs it on `budget`: the headline and the exit code. `verdict` is the peak (as
    ComfyUI runs it: as_run) against the budget; this adds what ComfyUI does about it. status: incomplete (model
    files named by the workflow were not found: no verdict), fits, tight, fits with streaming, runs with offload,
    runs tiled (a VAE phase runs out of memory untiled and its tiled retry fits), does not fit, no budget."""
    missing = (est.get("workflow") or {}).get("missing") or []
    if missing:
        return {"status": "incomplete", "offloaded": 0,
                "reason": f"{len(missing)} model file{'s' if len(missing) > 1 else ''} not found"}
    v, bd = est["verdict"], est["breakdown"]
    tiled = est.get("tiled_retry") or {}
    note = " and ".join(RETRY_LABELS[k] for k in MAIN if k in tiled)
    note = f"{note} run{'' if len(tiled) > 1 else 's'} tiled after ComfyUI's out-of-memory fallback (slower)" if note else ""
    if v == "fits with streaming":
        d = est["dynamic_vram"]
        return {"status": v, "offloaded": 0, "reason": DS.reason(d, (est.get("host_ram") or {}).get("evicted"))
                + (f"; {note}" if note else "")}
    if not budget:
        return {"status": v, "offloaded": 0, "reason": ""}
    r = est.get("host_ram") or {}
    if streams(est, budget):  # and host RAM is short (else the verdict says fits with streaming)
        d = est["dynamic_vram"]
        return {"status": v, "offloaded": 0, "reason": f"Dynamic VRAM fits in VRAM, streaming {fmt_bytes(d['streamed_per_step'])} "
                f"of weights from RAM each step{DS.others_words(d.get('streamed_by_phase') or {})}; host RAM short by {fmt_bytes(ram_short_by(r))}: the run needs {fmt_bytes(r['needed'])} of it (the running "
                f"model's CPU copy {fmt_bytes(r['cpu_copy'])}, pinned copies of the streamed layers {fmt_bytes(r['pinned'])}, "
                f"kept for reload {fmt_bytes(r['kept_for_reload'])}), {fmt_bytes(r['available'])} available"}
    d = est.get("dynamic_vram") or {}  # a GGUF model loads partially beside phases that stream (DS.partial_words)
    by = d.get("streamed_by_phase") or {} if str(d.get("vram_verdict")).startswith("loads partially") else {}
    over = {k: p - budget for k, p in run_phases(est).items() if p > budget and k not in by}
    if not over:
        return {"status": "runs tiled", "offloaded": 0, "reason": note} if tiled else {"status": v, "offloaded": 0, "reason": ""}
    if not partial_load(est["policy"]):
        return {"status": v, "offloaded": 0, "reason": ""}
    if any(k not in PARTIAL or partial_floor(bd[k]) > budget for k in over):
        return {"status": v, "offloaded": 0, "reason": "more than ComfyUI can offload: activations and the least "
                "of the weights it keeps on the GPU are over the budget"}
    what = " and ".join(PARTIAL[k] for k in over)
    off = max(spill(bd[k], budget) for k in over)
    if ram_short(r):  # what stays in RAM must fit there too
        return {"status": v, "offloaded": 0, "reason": f"ComfyUI would leave {fmt_bytes(off)} of the {what} weights in RAM, "
                f"but host RAM is short: the run needs {fmt_bytes(r['needed'])} of it (offloaded {fmt_bytes(r['offloaded'])}, "
                f"kept for reload {fmt_bytes(r['kept_for_reload'])}), {fmt_bytes(r['available'])} available"}
    # Fit to Card plans the diffusion model's weights only: its figure is named where they are offloaded
    fit = "" if "sample" not in over else " (Fit to Card's figure)" if len(over) == 1 else \
        " (Fit to Card's figure for the diffusion model)"
    return {"status": "runs with offload", "offloaded": int(off),
            "reason": f"ComfyUI loads the {what} partially: at least {fmt_bytes(off)} of weights stay in RAM (slower): the "
            f"peak over the budget; its loader keeps max(0.8 GiB, memory_required) free, so it may offload more{fit}"
            + (DS.sample_words(d) if by.get("sample") else "") + (f"; {note}" if note else "")}


RETRY_LABELS = {"vae_encode": "VAE encode", "vae_decode": "VAE decode", "pixel_upscale": "pixel upscale (smaller tiles)"}


# phases whose model ComfyUI loads partially when it does not fit (model_management.load_models_gpu)
PARTIAL = {"sample": "diffusion model", "text_encode": "text encoders"}


def partial_load(pol: dict) -> bool:
    """ComfyUI's own partial load: load_models_gpu gives a model only the free memory (lowvram_model_memory) in
    NORMAL_VRAM / LOW_VRAM, not with --highvram / --gpu-only (offload none) nor in another runner."""
    return pol.get("runner", "comfyui") in (None, "comfyui") and pol.get("offload") in (None, "model") \
        and pol.get("block_swap") is None


def kept_weights(bd: dict) -> int:
    """The part of a partially loaded model's weights that stays on the GPU: a tenth, at least 256 MiB."""
    return max(bd["weights"] // 10, 256 * MiB)


def spill(bd: dict, budget) -> int:
    """A phase's weights that do not fit beside its activations, margin and fixed: what a partial load leaves in
    RAM (the outcome's offloaded and host_ram's, the largest over the PARTIAL phases)."""
    return max(0, bd["weights"] - max(0, budget - bd["fixed"] - bd["activations"] - bd["allocator_margin"]))


def partial_floor(bd: dict) -> int:
    """The least a phase needs when its model is partially loaded: activations, margin and fixed, and the weights
    that stay on the GPU (kept_weights)."""
    return bd["activations"] + bd["allocator_margin"] + bd["fixed"] + kept_weights(bd)


def label(status: str, offloaded: int) -> str:
    """An outcome in a few words (per card tier): the one wording of the CLI's tier line and the node's, which reads it
    from the tiers' label / vram_label (workflow.tiers; web/lib/estimate_tiers.js)."""
    return f"runs with at least {offloaded / GiB:.1f} GiB offloaded" if status == "runs with offload" else status


TIER_SEP = " · "  # between tiers, in the CLI's line as between the node's tier chips


def tier_line(tiers: list, key: str = "label") -> str:
    """"8 GB: runs with at least 5.2 GiB offloaded · 12 GB: fits · ...": each tier's size and its label (key: vram_label for
    the outcome on VRAM alone)."""
    return TIER_SEP.join(f"{t['gb']} GB: {t[key]}" for t in tiers)


def exit_code(est: dict) -> int:
    """`gpu-garden estimate`: 1 when ComfyUI could not run it on the budget or the estimate is incomplete, else 0."""
    return 1 if (est.get("outcome") or {}).get("status", est["verdict"]) in ("does not fit", "incomplete") else 0


# -- knobs ----------------------------------------------------------------------------------------

def knobs(est: dict) -> list[dict]:
    from .formula import estimate
    ctx = est["_ctx"]
    base = est["peak"]
    comps, pol = ctx["components"], ctx["policy"]
    w, h, f, b, cfg = ctx["width"], ctx["height"], ctx["frames"], ctx["batch"], ctx["cfg"]
    sp = spec.family(est["family"])
    budget = est.get("budget")
    out = []

    def add(kid, label, after, note="", own=None, ram=None):
        """after: the peak with the knob, or the re-estimate (again), whose phases give the knob's own saving: the most
        one phase that runs drops by (own: that phase and drop, given where the knob's figure is not a re-estimate), and
        whose host_ram is the knob's RAM need (ram: that need, given where the knob's figure is not a re-estimate;
        neither: the run's, finish judges it)."""
        if isinstance(after, dict):
            now = run_phases(after)
            own = max(((p, run[p] - now[p]) for p in run if p in now), key=lambda x: x[1], default=None)
            after, ram = after["peak"], after["host_ram"]
        if after < base:
            out.append({"id": kid, "label": label, "saving": int(base - after), "peak_after": int(after), "note": note})
            if ram:
                out[-1]["host_ram"] = {x: ram.get(x) for x in KNOB_RAM}
            if own and own[1] > 0:
                out[-1]["phase_saving"] = {"phase": own[0], "bytes": int(own[1])}

    def again(comps_=comps, w_=w, h_=h, f_=f, b_=b, cfg_=cfg, **pol_):
        p = dict(pol, **pol_, _no_knobs=True, budget=budget)
        p.pop("weights_dtype", None)  # the components already carry it
        return estimate([{k: v for k, v in c.items() if k != "resident"} | {"role": c["role"]} for c in comps_],
                        w_, h_, f_, b_, cfg=cfg_, policy=p)

    phases, run = est["phases"], run_phases(est)
    if pol.get("runner") == "diffusers":  # the pipeline's own switches (vae.py: slicing, diffusers' tiling)
        if est.get("vae") and b > 1:  # no saving (so no knob) when slicing is on already
            add("vae_slicing", "pipe.enable_vae_slicing(): decode one image at a time", again(vae_slicing=True))
        if est.get("vae") and not est["vae"]["tiled"]:
            add("tiled_vae", "pipe.enable_vae_tiling()", again(vae_decode="tiled"))
        if pol.get("offload") in (None, "none"):  # None is the model swap already: no saving, no knob
            add("model_offload", "pipe.enable_model_cpu_offload(): one model on the GPU at a time", again(offload="model"))
        if pol.get("offload") != "sequential" and pol.get("block_swap") is None:
            add("sequential_offload", "pipe.enable_sequential_cpu_offload(): weights stream from RAM a layer at a time "
                "(much slower)", again(offload="sequential"))
    elif est.get("vae") and not est["vae"]["tiled"] and "vae_decode_tiled" in phases \
            and phases["vae_decode"] > phases["vae_decode_tiled"]:  # no tiled row: the ShapeVAE (hunyuan3d.decode_phase)
        add("tiled_vae", "VAE Decode (Tiled) instead of VAE Decode",
            max([v for k, v in run.items() if k != "vae_decode"] + [phases["vae_decode_tiled"]]),
            own=("vae_decode", run["vae_decode"] - phases["vae_decode_tiled"]))
    dm = [c for c in comps if c["role"] == "diffusion_model"]
    dts = [dt for dt, _ in dm[0]["table"].values()] if dm else []
    if dm and not any(dt.startswith("F8") or dt not in W.ST_BYTES for dt in dts):
        add("fp8_weights", "fp8 (e4m3fn) diffusion model weights (weight_dtype fp8_e4m3fn or an fp8 file)",
            again(_requant(comps, "F8_E4M3")))
    if dm and not any(dt in ("Q4_K", "Q4_0", "Q3_K", "Q2_K") for dt in dts):
        # a GGUF file of a wider type (Q8_0, Q6_K, Q5_K) is offered the narrower one too (flux1-dev-Q8_0.gguf on 8 GB:
        # the Q4_K file), as a float file is
        add("gguf_q8_0", "GGUF Q8_0 diffusion model (ComfyUI-GGUF)", again(_requant(comps, "Q8_0", wider=True)))
        add("gguf_q4_k", "GGUF Q4_K diffusion model (ComfyUI-GGUF; some quality loss)",
            again(_requant(comps, "Q4_K", wider=True)))
    if "text_encode" in phases and phases["text_encode"] >= base:
        add("te_cpu", "run the text encoders on the CPU (CLIP loader device: cpu)", again(text_encoders="cpu"))
        if any(c["role"] == "text_encoder" and c["bytes"] > 2 * GiB for c in comps):
            big = max((c for c in comps if c["role"] == "text_encoder"), key=lambda c: c["bytes"])
            name = TE_FP8_FILE.get(big.get("kind"))
            add("te_fp8", f"fp8 text encoder ({name + '.safetensors' if name else 'an fp8 file of ' + str(big.get('kind') or 'it')})",
                again(_requant(comps, "F8_E4M3", role="text_encoder", over=2 * GiB)))
    if pol.get("models") == "resident" or pol.get("text_encoders") == "resident":
        add("unload_te", "unload the text encoders after encoding (GPU Garden Unload Text Encoders)",
            again(models="swap", text_encoders="unload"))
    if cfg and sp["cfg"] and "sample" in phases:
        cu = est.get("cond_uncond")  # cfg_batch: ComfyUI's own choice on this budget, batched (else cfg is off here)
        add("cfg_sequential", "cond and uncond one at a time (" + (
            "ComfyUI batches them on this budget: it runs them one at a time by itself only when 1.5 x its "
            "memory_required is over the free memory" if cu else "forced batched here; ComfyUI runs them one at a "
            "time by itself when 1.5 x its memory_required is over the free memory" if pol.get("cond_uncond")
            else "ComfyUI does this by itself when 1.5 x its memory_required is over the free memory") + ")",
            again(cfg_=False))
    if b > 1:
        add("batch_1", f"batch 1 instead of {b}", again(b_=1))
    if sp["t"] and f > 1:
        nf = max(1, ((f - 1) // 2) // sp["t"] * sp["t"] + 1)
        add("fewer_frames", f"{nf} frames instead of {f}", again(f_=nf))
    nw, nh = max(64, int(w * 0.75) // 64 * 64), max(64, int(h * 0.75) // 64 * 64)
    if (nw, nh) != (w, h):
        add("lower_resolution", f"{nw}x{nh} instead of {w}x{h} (then upscale)", again(w_=nw, h_=nh))
    pk = est["peak_phase"]
    if pk in ("sample", "text_encode") and est["breakdown"][pk]["weights"] > 0 and pol.get("runner") != "diffusers":
        bd = est["breakdown"][pk]
        rest = [v for k, v in run.items() if k != pk]
        after = max(rest + [partial_floor(bd)])
        what = "diffusion model" if pk == "sample" else "text encoders"
        off = bd["weights"] - kept_weights(bd)  # stays in RAM beside the models kept for reload
        add("partial_offload", f"partial offload of the {what} (ComfyUI does it when weights do not fit; --lowvram forces it; slower)",
            after, note=f"needs about {fmt_bytes(off)} of free host RAM", own=(pk, run[pk] - partial_floor(bd)),
            ram=host_ram(est, budget, spilled=off))
    for k in out:  # the knob's own saving may be more: the peak stops at another phase the knob does not touch
        moved = [p for p in run if p != est["peak_phase"] and run[p] == k["peak_after"]]
        if moved:
            k["peak_moves_to"] = moved[0]
    return sorted(out, key=lambda k: -k["saving"])


# a knob's host RAM in the estimate's JSON (knobs[].host_ram): host_ram's figures with the knob, judged by ram_short
KNOB_RAM = ("needed", "kept_for_reload", "offloaded", "hard_need", "available", "verdict")

# the fp8 file ComfyUI's repackaged models offer for a text encoder kind (Comfy-Org / comfyanonymous repos)
TE_FP8_FILE = {"t5-xxl": "t5xxl_fp8_e4m3fn", "umt5-xxl": "umt5_xxl_fp8_e4m3fn_scaled"}


def _requant(comps, dtype, role="diffusion_model", over=0, wider=False):
    """The components with `role`'s large float tensors stored as dtype; wider: its GGUF tensors of a wider type too."""
    out = []
    for c in comps:
        c = dict(c)
        if c["role"] == role and c["bytes"] > over:
            c.pop("resident", None)
            table = c["table"]
            if wider:  # a quantized tensor taking more bytes than dtype would: read as float, so requant stores it as dtype
                table = {k: ("F16" if not W.is_float(dt) and len(sh) >= 2 and W.tensor_bytes(dtype, sh) < W.tensor_bytes(dt, sh)
                             else dt, sh) for k, (dt, sh) in table.items()}
            c["table"] = W.requant(table, dtype, 1 if role == "text_encoder" else 4096)
            c["bytes"] = sum(W.tensor_bytes(d, s) for d, s in c["table"].values())
        out.append(c)
    return out
