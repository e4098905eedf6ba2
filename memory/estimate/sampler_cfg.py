"""Each sampler's own cfg (rev66d, issue 15): ComfyUI skips the uncond of a sampler whose cfg is 1
(comfy/samplers.py:371 sampling_function: math.isclose(cond_scale, 1.0) -> uncond_ None), per sampler, whatever the
others' cfg. workflow.read's cfg is the largest (CFG on where any sampler's is over 1); where the estimate counts each
sampler's run (phase_peaks: side_models.sampler_sizes, sample_acts.at), a sampler at cfg 1 is counted with one
conditioning in the model, not cond and uncond (a hires fix's second pass at cfg 1)."""
import math

from . import control_feeds, dual_cfg, links, sampler_nodes


def _key(wf, h):
    """The key workflow.nodes gives node handle h (keyed): (graph id, node id) in UI format, the id in API format."""
    return (h[0], h[1].get("id")) if isinstance(wf.get("nodes"), list) else h[0]


def of_samplers(wf: dict, keyed: dict):
    """[cfg or None] one per sampler that runs, in control_feeds.latents() order: its cfg widget (as workflow.nodes
    read it, links followed: keyed {key: (type, widgets)}), a SamplerCustomAdvanced's guider's (CFGGuider's cfg,
    BasicGuider's 1.0: sampler_nodes.GUIDERS, FIXED_CFG); None where not read. None when no known sampler runs."""
    v, (_, starts), out = links.view(wf), control_feeds._starts(wf), []
    for h in starts:
        try:
            t = v.kind(h)
            if sampler_nodes.SAMPLERS[t].cfg_widget is None:  # SamplerCustomAdvanced: its guider's cfg
                h, t, _ = links._source(v, v.link_of(h, "guider"), 0, "a guider")
            w = (keyed.get(_key(wf, h)) or ("", {}))[1]
            c = dual_cfg.cfg(w) if t in dual_cfg.WIDGETS else sampler_nodes.FIXED_CFG.get(t, w.get("cfg"))
        except (links.Unread, TypeError, ValueError, AttributeError, KeyError, IndexError):
            c = None
        out.append(float(c) if isinstance(c, (int, float)) and not isinstance(c, bool) else None)
    return out or None


def single(cfgs) -> list | None:
    """[True where that sampler runs one conditioning (cfg 1: samplers.py:371)] per sampler, or None (none read)."""
    return [c is not None and math.isclose(c, 1.0) for c in cfgs] if cfgs else None
