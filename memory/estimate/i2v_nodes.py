"""The image-to-video nodes that VAE-encode their start image before sampling (fix68d, issue 15 item 2), as ComfyUI
0.8.0 runs them: each resizes the image to its width x height (comfy.utils.common_upscale) and calls vae.encode, which
loads the VAE (comfy/sd.py:869-870 load_models_gpu) before the sampler loads the diffusion model. The encode is a
phase of its own (phase_peaks' vae_encode) at the size the node encodes, and the VAE is among what is loaded when
sampling starts (te_loaded.at_sample).

{node: (its image input, what it encodes)}: "length" pads the image to all `length` frames and encodes them (Wan's
WanImageToVideo, nodes_wan.py:43-47; WanFirstLastFrameToVideo :214-227); "image" encodes the start image's own frames
(start_image[:length]: Wan22ImageToVideoLatent nodes_wan.py:1278-1279, HunyuanImageToVideo nodes_hunyuan.py:332-333,
Kandinsky5ImageToVideo nodes_kandinsky5.py:40-41; LTXVImgToVideo the image, nodes_lt.py:65-67), a still image's one
frame (a video fed there is counted as one frame); "cosmos" pads it to a latent frame's 8 more
(vae_encode_with_padding, nodes_cosmos.py:32-39: min(length, ((n - 1) // 8 + 2) * 8 - 7) frames, 9 for one image).
A node whose image input is not linked encodes nothing, but those of ALWAYS: they encode their `length` frames
whatever is linked (WanFirstLastFrameToVideo nodes_wan.py:216-227, and WanFunInpaintToVideo through it :279-281;
WanVaceToVideo twice, inactive and reactive, :340-341: one at a time, the peak one's). Also read (fix68k, rev68d item 6):
HunyuanVideo15ImageToVideo (nodes_hunyuan.py:108-110), WanCameraImageToVideo (nodes_wan.py:426-427), WanFunControlToVideo
(:96-97) and Wan22FunControlToVideo (:154-155) their start image's frames, WanHuMoImageToVideo its ref_image[:1]
(:1072-1073). Not read: LTXVImgToVideoInplace (the latent's size), WanAnimateToVideo; a control video's own encode."""
NODES = {"WanImageToVideo": ("start_image", "length"), "WanFirstLastFrameToVideo": ("start_image", "length"),
         "Wan22ImageToVideoLatent": ("start_image", "image"), "HunyuanImageToVideo": ("start_image", "image"),
         "Kandinsky5ImageToVideo": ("start_image", "image"), "LTXVImgToVideo": ("image", "image"),
         "CosmosImageToVideoLatent": ("start_image", "cosmos"), "CosmosPredict2ImageToVideoLatent": ("start_image", "cosmos"),
         "HunyuanVideo15ImageToVideo": ("start_image", "image"), "WanCameraImageToVideo": ("start_image", "image"),
         "WanFunControlToVideo": ("start_image", "image"), "Wan22FunControlToVideo": ("start_image", "image"),
         "WanHuMoImageToVideo": ("ref_image", "image"), "WanFunInpaintToVideo": ("start_image", "length"),
         "WanVaceToVideo": ("control_video", "length")}
ALWAYS = ("WanFirstLastFrameToVideo", "WanFunInpaintToVideo", "WanVaceToVideo")  # encode with nothing linked

# what each rule does to the start image, as the estimate's assumption line says it (formula.py)
RULE_TEXT = {"length": "pads it to all {length} frames", "image": "encodes the start image's own frames",
             "cosmos": "pads it to a latent frame's 8 more"}


class Encoded(tuple):
    """(width, height, frames) of the encode, with the node that makes it (.node: its class name) and its NODES rule."""
    node = rule = None

    def says(self) -> str:
        """'<node> <what it does>' for the assumption line; '' where the node is not known."""
        return f"{self.node} {RULE_TEXT[self.rule].format(length=self[2])}" if self.node else ""


def frames(rule: str, length: int, image_frames: int = 1) -> int:
    """Pixel frames the node encodes (NODES' rule) for `length` and a start image of `image_frames` frames."""
    n = max(1, min(image_frames, length))
    return length if rule == "length" else n if rule == "image" else min(length, ((n - 1) // 8 + 2) * 8 - 7)


def largest(wf: dict, keyed: dict) -> tuple | None:
    """(width, height, frames) of the largest start-image encode among the nodes read (keyed, as workflow.nodes gives
    it: {key: (class name, widgets)}) whose image input is linked; None where none encodes."""
    out, index = [], None
    for key, (t, w) in keyed.items():
        if t not in NODES:
            continue
        if index is None:  # one id -> node index per graph, built once (a scan per node was quadratic: rev68d F3)
            index = _index(wf)
        if t not in ALWAYS and not _linked(wf, key, NODES[t][0], index):
            continue
        try:
            width, height = int(w.get("width")), int(w.get("height"))
            length = int(w.get("length", 1) or 1)
        except (TypeError, ValueError):
            continue
        e = Encoded((width, height, frames(NODES[t][1], length)))
        e.node, e.rule = t, NODES[t][1]
        out.append(e)
    return max(out, key=lambda s: s[0] * s[1] * s[2]) if out else None


def _index(wf) -> dict:
    """{(graph id, node id): node} of a UI workflow (the top level is graph None, as links.view keys it); {} for API."""
    if not isinstance(wf, dict) or not isinstance(wf.get("nodes"), list):
        return {}
    graphs = [(None, wf)] + [(g.get("id"), g) for g in ((wf.get("definitions") or {}).get("subgraphs") or [])
                             if isinstance(g, dict)]
    index = {}
    for gid, g in graphs:
        for n in g.get("nodes") or ():
            if isinstance(n, dict):
                index.setdefault((gid, _hashable(n.get("id"))), n)
    return index


def _hashable(v):
    return v if isinstance(v, (str, int, float, type(None))) else repr(v)


def _linked(wf, key, name, index: dict | None = None) -> bool:
    """Whether node `key`'s input `name` is linked (API: a [node, slot] list; UI: its inputs entry has a link)."""
    if not isinstance(wf.get("nodes"), list):
        node = wf.get(key) if isinstance(wf, dict) else None
        return isinstance(node, dict) and isinstance((node.get("inputs") or {}).get(name), list)
    gid, nid = key if isinstance(key, tuple) else (None, key)
    n = (_index(wf) if index is None else index).get((gid, _hashable(nid)))
    return isinstance(n, dict) and any(isinstance(i, dict) and i.get("name") == name and i.get("link") is not None
                                       for i in n.get("inputs") or ())
