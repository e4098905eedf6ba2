"""(tri67) The phase a guide speaks of (front matter `phase: startup` or `phase: serving`: vLLM's guides), and the
runner-up cause's guide in the uncertain side-by-side view (engine._alternatives) kept to the top guide's phase.

Why: guides.select picks a cause's guide by cause, runtime and event kind, not by when the failure happened, so a vLLM
start-up failure (weights, profiling, KV-cache sizing) whose runner-up is activations showed "Out of memory while
serving" beside the start-up guide. The runner-up then takes the first guide for its cause of the top one's phase
(vllm-weights also covers the profiled activation peak); a guide with no phase, or no guide of that phase, is kept."""
from . import guides as G


def phase(guide_id):
    """The guide's `phase`, else None."""
    return (G.load_all().get(guide_id) or {}).get("phase")


def runner_up(cause, runtime, env, params, kind, form, top_id):
    """guides.select's guide for the runner-up cause, or the first of its cause's guides in the top guide's phase."""
    g = G.select(cause, runtime, env, params, kind=kind, form=form)
    want = phase(top_id)
    if not g or not want or phase(g["id"]) in (None, want):
        return g
    pool = G.candidates(cause, runtime, env, kind, form) + G.candidates(cause, runtime, env)
    same = next((c for c in pool if c.get("phase") == want), None)
    return G.render(same, params) if same else g
