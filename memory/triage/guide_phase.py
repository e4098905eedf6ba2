"""(tri67) The phase a guide speaks of (front matter `phase: startup` or `phase: serving`: vLLM's guides), and the
runner-up cause's guide in the uncertain side-by-side view (engine._alternatives) kept to the top guide's phase.

Why: guides.select picks a cause's guide by cause, runtime and event kind, not by when the failure happened, so a vLLM
start-up failure (weights, profiling, KV-cache sizing) whose runner-up is activations showed "Out of memory while
serving" beside the start-up guide. The runner-up then takes the first guide for its cause of the top one's phase
(vllm-weights also covers the profiled activation peak); a guide with no phase, or no guide of that phase, is kept.

(fix67f, rev67a F5) Only where the log itself shows the phase (shown()): the top cause is a guess too, and a log with no
sign of when it failed (batch-545's gpt-oss judge replica: one OOM message; its recorded answer, activations, the
runner-up) keeps each cause's own guide."""
from . import guides as G
from .frame_predicates import CAPTURE_FUNCS
from .parse import PROFILE_FUNCS

STARTUP_KINDS = ("vllm.no_kv_blocks", "vllm.startup_free", "vllm.profile_cut")     # vLLM's own start-up messages
LOAD_FUNCS = ("load_model", "load_weights", "process_weights_after_loading", "initialize_kv_cache", "_initialize_kv_caches",
              "initialize_from_config")
# (fix67m, rev67g F5) LLM's offline generation (vllm/entrypoints/llm.py: generate, chat, encode, beam_search run
# _run_engine): requests served, as "Processed prompts" says when its bar is in the log
SERVING_FUNCS = ("_run_engine",)


def phase(guide_id):
    """The guide's `phase`, else None."""
    return (G.load_all().get(guide_id) or {}).get("phase")


def shown(inc, f, ev) -> str | None:
    """The phase the log shows its failure in: "startup" (a vLLM start-up message; a load, profile or capture frame; the
    KV cache's sizing lines, or graph capture, with no request served; the should-fit verdict, which is read at load
    only), "serving" (vLLM's request lines, LLM's generation bar, or its _run_engine frame: checked before the KV lines,
    which an offline run prints at its start-up, before it generates), else None."""
    funcs = {fn for _, fn in inc.frames}
    if ev["kind"] in STARTUP_KINDS or funcs & set(PROFILE_FUNCS + CAPTURE_FUNCS + LOAD_FUNCS):
        return "startup"
    if f["vllm_serving"] or any(fn in SERVING_FUNCS and "vllm/entrypoints/llm.py" in (path or "").replace("\\", "/")
                                for path, fn in inc.frames):
        return "serving"
    if f["vllm_kv_mem"] is not None or f["vllm_kv_tokens"] or f["graph_capture"] or ev.get("_should_fit"):
        return "startup"
    return None


def runner_up(cause, runtime, env, params, kind, form, top_id, seen=None):
    """guides.select's guide for the runner-up cause, or, where the log shows the top guide's phase (`seen`: shown()),
    the first of its cause's guides in that phase."""
    g = G.select(cause, runtime, env, params, kind=kind, form=form)
    want = phase(top_id)
    if not g or not want or want != seen or phase(g["id"]) in (None, want):
        return g
    pool = G.candidates(cause, runtime, env, kind, form) + G.candidates(cause, runtime, env)
    same = next((c for c in pool if c.get("phase") == want), None)
    return G.render(same, params) if same else g
