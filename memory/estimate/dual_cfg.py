"""DualCFGGuider (ComfyUI 0.8.0 comfy_extras/nodes_custom_sampler.py:825-877, fix68d, issue 15 item 5): three
conditionings per step, not CFG's two. Guider_DualCFG.predict_noise runs calc_cond_batch on [negative, middle,
positive] (:841, :851), which batches the conds that concatenate as it batches cond and uncond (comfy/samplers.py:
263-274: all of them while memory_required(their batch) x 1.5 is under the free memory, else len // 2, ... ; of three
that is all three or one, and the two left after one may batch). "nested" runs all three always (:840-843); "regular"
drops the negative where cfg_cond2_negative is 1 and the middle too where cfg_conds is 1 as well (:845-849).
policy conds: the conditionings batched per model call where CFG is on (formula: the sampler's batch in the model,
ComfyUI's memory_required, cfg_batch's choice); 2 (cond and uncond) unless a DualCFGGuider samples with three."""
import math

WIDGETS = {"DualCFGGuider": ("cfg_conds", "cfg_cond2_negative", "style")}  # its widgets in UI order (:865-867)
CONDS = 2  # CFG's cond and uncond


def conds(w: dict) -> int:
    """The conditionings a DualCFGGuider with widgets w runs per step (3, 2 or 1); unread values as the node's
    defaults (8.0, 8.0, regular: :865-867)."""
    c1, c2 = (_num(w.get(k), 8.0) for k in WIDGETS["DualCFGGuider"][:2])
    if w.get("style") == "nested":
        return 3
    return 3 - math.isclose(c2, 1.0) - (math.isclose(c2, 1.0) and math.isclose(c1, 1.0))


def cfg(w: dict) -> float:
    """A cfg standing for the guider's run as a sampler's cfg is read (> 1: more than one conditioning, CFG on;
    1.0: one, sampler_cfg.single)."""
    return 1.0 if conds(w) == 1 else max(2.0, *(_num(w.get(k), 8.0) for k in WIDGETS["DualCFGGuider"][:2]))


def of(est: dict) -> int:
    """The conditionings batched per model call in est (1 with CFG off or one at a time)."""
    return int((est.get("policy") or {}).get("conds") or CONDS) if est.get("cfg") else 1


def _num(v, default):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default
