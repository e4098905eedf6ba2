"""What Dynamic VRAM streams, phase by phase (aud67a F3). With comfy-aimdo, ComfyUI's CoreModelPatcher is
ModelPatcherDynamic (main.py: comfy.model_patcher.CoreModelPatcher = ModelPatcherDynamic once comfy_aimdo.control
init_device succeeds), and CLIP.__init__ builds the text encoders' patcher from CoreModelPatcher unless the encoder
disables it (comfy/sd.py CLIP.__init__: `ModelPatcher if te_disable_dynamic else CoreModelPatcher`, Comfy-Org/ComfyUI
033046cc): the text encoders stream as the diffusion model does, so a text encode over the budget streams too rather
than loading partially. Each streaming phase is sized on its own: its weights less the room its activations, margin and
the fixed costs leave. The sampler's figure is per step (its time cost); the text encoders' runs once per prompt."""
from ..units import MiB, fmt_bytes

STREAMING = ("sample", "text_encode")  # the phases whose model ComfyUI loads through CoreModelPatcher (verdict.PARTIAL)
ROOM_FLOOR = 256 * MiB  # less room than this for the streamed layers: does not fit even streaming
WHAT = {"text_encode": "of the text encoders' weights in text encode (once per prompt)"}


def room(est: dict, k: str, budget) -> int:
    """The budget less phase k's fixed costs, activations and margin: what its weights may hold on the GPU."""
    b = est["breakdown"][k]
    return int(budget - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"])


def by_phase(est: dict, budget) -> tuple[dict, list]:
    """({phase: bytes streamed}, [phases whose activations alone leave under ROOM_FLOOR]). The sampler's bytes always
    (0 when it fits: the figure per step); another phase only when its run figure is over the budget."""
    tr = est.get("tiled_retry") or {}
    out, short = {}, []
    for k in STREAMING:
        if k not in est["breakdown"]:
            continue
        total = tr[k]["tiled"] if k in tr else est["phases"].get(k, 0)
        if k != "sample" and total <= budget:
            continue
        r = room(est, k, budget)
        out[k] = max(0, int(est["breakdown"][k]["weights"] - max(0, r)))
        if r <= ROOM_FLOOR:
            short.append(k)
    return out, short


def others_words(by: dict) -> str:
    """'; text encode streams 4.43 GiB of the text encoders' weights ...' for the phases other than sampling."""
    return "".join(f"; streaming {fmt_bytes(n)} {WHAT[k]}" for k, n in by.items() if k != "sample" and n)


def reason(d: dict) -> str:
    """The outcome's reason for a run that fits with streaming (verdict._vram_outcome)."""
    s = d.get("streamed_per_step") or 0
    head = (f"{fmt_bytes(s)} of weights stream in from RAM each step, about {d['added_seconds_per_step']} s slower per "
            "step" if s else "sampling streams nothing")
    return head + others_words(d.get("streamed_by_phase") or {})
