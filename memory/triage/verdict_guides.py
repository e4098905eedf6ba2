"""The guides the calculator's verdicts lead to (should_fit.py; aud68c #5).

With should_fit's verdict the version-regression guide leads. Why: the verdict says the model fits the card with clear room (`gpu-garden kv`), so the likeliest fix is the previous
version of the runtime; the guide the cause picked (the driver-refusal checklist, the general checklist) stays, after it,
as a linked guide. Without the verdict nothing changes.

With over_card's (the weights alone outgrow the card, vLLM), the weights guide says so in its title and mechanism:
its usual reading (no memory left for the KV cache after the weights) is a load that finished."""
from ..units import fmt_bytes
LEAD = "version-regression"


def apply(guide, params, guides_mod):
    """The guide to show: version-regression first where the cause's guide links it under should_fit, else `guide`."""
    if not guide or not params.get("should_fit") or guide["id"] == LEAD or not any(
            f["id"] == LEAD for f in guide.get("faqs", [])):
        return guide
    out = guides_mod.render(guides_mod.load_all()[LEAD], params)
    out["faqs"] = [{"id": guide["id"], "title": guide["title"], "markdown": guide["markdown"]}] + [
        f for f in guide["faqs"] if f["id"] != LEAD]
    for key in ("causes", "runtimes", "platforms", "actions", "cost"):
        if key in guide:
            out[key] = guide[key]
    return out


def params(inc) -> dict:
    """The vLLM weights guide's title and mechanism where over_card's verdict holds (kept on the event by the rule row)."""
    v = inc.primary.get("_over_card")
    if not v:
        return {}
    return {"weights_over_card": True, "weights_title": "The weights alone do not fit on the card (vLLM)",
            "oc_model": v["model"], "oc_weights": fmt_bytes(v["weights"]), "oc_card": fmt_bytes(v["card"]),
            "oc_precision": v["precision"]}
