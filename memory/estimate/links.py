"""Widget values set through links: a widget converted to an input (a size fed by a primitive node, a loader's name fed
by the subgraph's input) runs with its source's value, not the value saved in the node's widgets_values, which the
frontend keeps but ComfyUI never sees. workflow.nodes() reads the widgets it uses through these functions.

Followed (each source's widgets in UI order, ComfyUI 0.8.0):
- constants: the frontend's PrimitiveNode (its widgets_values[0]); PrimitiveInt, PrimitiveFloat, PrimitiveBoolean,
  PrimitiveString, PrimitiveStringMultiline (comfy_extras/nodes_primitive.py, widget `value`, itself maybe linked);
- Reroute (the frontend's, UI format only): its one input;
- WanCameraEmbedding (comfy_extras/nodes_camera_trajectory.py:151): its width, height and length widgets, passed out
  as its outputs 1-3 (the Wan fun-camera templates feed WanCameraImageToVideo's size so);
- an image's size as GetImageSize reads it (comfy_extras/nodes_images.py:494, outputs width, height, batch_size) from
  EmptyImage (nodes.py:1884: width, height, batch_size), ImageScaleBy (nodes.py:1826: round(w x scale_by)) and
  ImageScale (nodes.py:1796: a 0 side keeps the aspect, round(), at least 1): LTX-2's templates halve the typed size so;
  ResizeImageMaskNode (comfy_extras/nodes_post_processing.py:366, its resize_type's own widgets after it, then
  scale_method): "scale dimensions" (both sides given: that size; a 0 side keeps the aspect), "scale by multiplier";
  ImageScaleToTotalPixels (l.215) of a known image; FluxKontextImageScale (comfy_extras/nodes_flux.py:125: the
  preferred size nearest the image's aspect); Canny (comfy_extras/nodes_canny.py:8: the edges at its image's size);
  of an image whose size is not known, ImageScaleToTotalPixels and ResizeImageMaskNode's "scale total pixels" give
  its area (AreaOnly; FluxKontextImageScale the largest of its sizes' areas), which a latent encoded from it is estimated at (image_size.py; wf65, the Qwen-Image edit
  templates);
- a subgraph's input (definitions.subgraphs, origin the subgraph's input node): the one instance's input of that name
  when it is linked (followed outside), else its promoted widget (properties.proxyWidgets ["-1", name], whose order is
  widgets_values', frontend 1.35.9; without proxyWidgets, frontend 1.58.1, widgets_values holds one value per instance
  input, in the inputs' order); else the inner node's saved value, which the frontend sets from the promoted widget when it saves
  (SubgraphNode.serialize, frontend 1.35.9) or which a proxied inner widget is itself.
- an image LoadImage / LoadImageOutput loads (nodes.py:1647, 1774), where the estimate was given a reader of its file's
  header (input_image.py: inside ComfyUI its input folder, on the command line --input-dir or the input folder beside
  --models-dir): its width, height and frames, EXIF rotation applied as ComfyUI does.
- an image ImageUpscaleWithModel makes (comfy_extras/nodes_upscale_model.py:86, tiled_scale with upscale_amount =
  the model's scale; comfy/utils.py:1027-1033 makes the output round(side x scale) a side, the batch kept): its input
  image times the scale of the model its UpscaleModelLoader names, where the estimate was given a reader of that file
  (pixel_upscale.scale_reader, built by workflow.read from the models folder); a model not found or not read: Unread,
  and a line names it.
- an image a VAE decode makes (VAEDecode, VAEDecodeTiled: nodes.py:281, 307) of a latent followed back through the
  samplers (KSampler, KSamplerAdvanced, SamplerCustom, SamplerCustomAdvanced: their latent_image; this pack's Footprint
  Estimate node, which passes its latent input through) to a still-image latent
  node's width, height and batch_size (latent_nodes.py, kind "size", no length), or to a VAEEncode of a known image: the
  hires fix's second pass (decode -> upscale model -> scale -> encode -> sampler) is sized so. The widget's size is the
  decoded one, as everywhere in the estimate (a side that is not a multiple of the VAE's factor is not rounded down).
ComfyUI 0.8.0 has no math-expression node: any other source (a custom node, an image whose file is not read, a muted node)
is not read; the saved value stays and an assumption line names the widget and its source."""

from . import input_image
from .latent_nodes import LATENT_NODES, size_widgets, widget_names
from .sampler_nodes import SAMPLERS

MAX_DEPTH = 32
PRIMITIVES = ("PrimitiveInt", "PrimitiveFloat", "PrimitiveBoolean", "PrimitiveString", "PrimitiveStringMultiline")
WIDGETS = {"EmptyImage": ("width", "height", "batch_size", "color"), "ImageScaleBy": ("upscale_method", "scale_by"),
           "ImageScaleToTotalPixels": ("upscale_method", "megapixels", "resolution_steps"),
           "ResizeImageMaskNode": ("resize_type",),
           "WanCameraEmbedding": ("camera_pose", "width", "height", "length", "speed", "fx", "fy", "cx", "cy"),
           "ImageScale": ("upscale_method", "width", "height", "crop"), "LoadImage": ("image", "upload"),
           "LoadImageOutput": ("image", "refresh"), "UpscaleModelLoader": ("model_name",),
           **{p: ("value",) for p in PRIMITIVES}}
DECODES = {"VAEDecode": "samples", "VAEDecodeTiled": "samples"}  # nodes.py:281, 307: their latent input
SAMPLED = {t: s.latent for t, s in SAMPLERS.items()}  # sampler_nodes.py: their latent input, the same size out
ENCODES = {"VAEEncode": "pixels", "VAEEncodeTiled": "pixels"}  # nodes.py:340, 353: the latent of their image
PASSED = {"GPUGardenFootprintEstimate": "latent"}  # this pack's node (nodes/estimate.py): passes its latent through
RESIZE = {"scale by multiplier": ("multiplier",), "scale dimensions": ("width", "height", "crop"),
          "scale longer dimension": ("longer_size",), "scale shorter dimension": ("shorter_size",),
          "scale width": ("width",), "scale height": ("height",), "scale total pixels": ("megapixels",),
          "match size": ("crop",)}  # ResizeImageMaskNode's resize_type -> its widgets (UI: after resize_type)
# FluxKontextImageScale's PREFERED_KONTEXT_RESOLUTIONS (ComfyUI 0.8.0 comfy_extras/nodes_flux.py:104-122), (w, h)
KONTEXT_SIZES = ((672, 1568), (688, 1504), (720, 1456), (752, 1392), (800, 1328), (832, 1248), (880, 1184), (944, 1104),
                 (1024, 1024), (1104, 944), (1184, 880), (1248, 832), (1328, 800), (1392, 752), (1456, 720), (1504, 688),
                 (1568, 672))
KONTEXT_MAX = max(w * h for w, h in KONTEXT_SIZES)
SAVED = object()  # the link ends at a subgraph input whose value the inner node's saved widget holds


class Unread(Exception):
    """A link the estimate does not follow; its message names the source."""


class AreaOnly(Unread):
    """An image scaled to a number of pixels (ImageScaleToTotalPixels, ResizeImageMaskNode's "scale total pixels") from
    one whose size is not known: its area is known, not its sides."""

    def __init__(self, msg, pixels, batch=None):
        super().__init__(msg)
        self.pixels, self.batch = pixels, batch


def is_key(x) -> bool:
    """An id a dict may hold: a JSON number or string (a hand-edited file may have anything)."""
    return isinstance(x, (int, float, str)) and not isinstance(x, bool)


def _num(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unread(f"{what}, not a number")
    return v


class _UI:
    """The UI format: the top graph and each subgraph definition, their links as [id, src, src_slot, dst, dst_slot,
    type] lists (the top graph) or {id, origin_id, origin_slot, ...} objects (subgraphs, newer frontends)."""

    def __init__(self, wf, read_image=None, read_upscale=None):
        self.read_image, self.read_upscale, self.images_read, self.wf = read_image, read_upscale, {}, wf
        defs = wf.get("definitions") if isinstance(wf.get("definitions"), dict) else {}
        subs = [s for s in (defs.get("subgraphs") or []) if isinstance(s, dict) and isinstance(s.get("nodes"), list)] \
            if isinstance(defs.get("subgraphs"), list) else []
        self.graphs, self.lists, self.instances = {}, {}, {}
        self.subgraphs = {s["id"]: s for s in subs if is_key(s.get("id"))}
        for gid, g in [(None, wf)] + [(s["id"], s) for s in subs if is_key(s.get("id"))]:
            self.lists[gid] = [n for n in g.get("nodes") if isinstance(n, dict)] if isinstance(g.get("nodes"), list) else []
            nodes = {n["id"]: n for n in self.lists[gid] if is_key(n.get("id"))}
            links = {}
            for lk in g.get("links") if isinstance(g.get("links"), list) else []:
                if isinstance(lk, list) and len(lk) >= 5 and is_key(lk[0]):
                    links[lk[0]] = (lk[1], lk[2])
                elif isinstance(lk, dict) and is_key(lk.get("id")):
                    links[lk["id"]] = (lk.get("origin_id"), lk.get("origin_slot"))
            self.graphs[gid] = (nodes, links)
            for n in nodes.values():
                if is_key(n.get("type")) and n["type"] in self.subgraphs:
                    self.instances.setdefault(n["type"], []).append((gid, n))

    @staticmethod
    def label(h):
        return f"{h[1].get('type')} (node {h[1].get('id')})"

    @staticmethod
    def kind(h):
        return h[1].get("type")

    @staticmethod
    def active(h):
        return h[1].get("mode") not in (2, 4)

    @staticmethod
    def link_of(h, name):
        """The link on h's input `name` (a widget input matched by its widget.name), or None."""
        ins = h[1].get("inputs")
        for i in ins if isinstance(ins, list) else []:
            if isinstance(i, dict) and (i["widget"].get("name") if isinstance(i.get("widget"), dict)
                                        else i.get("name")) == name and i.get("link") is not None:
                return h[0], i["link"]
        return None

    @staticmethod
    def first_link(h):
        ins = h[1].get("inputs")
        ok = isinstance(ins, list) and ins and isinstance(ins[0], dict) and ins[0].get("link") is not None
        return (h[0], ins[0]["link"]) if ok else None

    @staticmethod
    def saved(h, name, names):
        vals = h[1].get("widgets_values")
        if isinstance(vals, dict):
            return vals.get(name, SAVED)
        i = names.index(name) if name in names else None
        return vals[i] if isinstance(vals, list) and i is not None and i < len(vals) else SAVED

    def src(self, ref):
        """(node handle, slot), or ("ref", outer link), ("value", v) or SAVED for a subgraph's input."""
        gid, link = ref
        nodes, links = self.graphs.get(gid, ({}, {}))
        if not is_key(link) or link not in links:
            raise Unread(f"link {link}, not in the graph's links")
        origin, slot = links[link]
        sg = self.subgraphs.get(gid)
        io = sg.get("inputNode") if sg is not None and isinstance(sg.get("inputNode"), dict) else {}
        if sg is not None and origin == io.get("id", -10):
            return self._subgraph_input(gid, sg, slot)
        if not is_key(origin) or origin not in nodes:
            raise Unread(f"node {origin}, not in the graph")
        return (gid, nodes[origin]), slot

    def _subgraph_input(self, gid, sg, slot):
        ins = sg.get("inputs") if isinstance(sg.get("inputs"), list) else []
        name = ins[slot].get("name") if isinstance(slot, int) and 0 <= slot < len(ins) and isinstance(ins[slot], dict) else None
        inst = self.instances.get(gid) or []
        if name is None or len(inst) != 1:
            return SAVED  # no instance, or several with their own values: the inner node's saved value
        pgid, node = inst[0]
        for i in node.get("inputs") if isinstance(node.get("inputs"), list) else []:
            if isinstance(i, dict) and i.get("name") == name and i.get("link") is not None:
                return "ref", (pgid, i["link"])
        props = node.get("properties")
        proxy = props.get("proxyWidgets") if isinstance(props, dict) else None
        vals = node.get("widgets_values")
        if isinstance(proxy, list) and isinstance(vals, list):
            for k, p in enumerate(proxy):
                if isinstance(p, list) and len(p) == 2 and str(p[0]) == "-1" and p[1] == name and k < len(vals):
                    return "value", vals[k]
        elif isinstance(vals, list) and isinstance(node.get("inputs"), list) and len(vals) == len(node["inputs"]):
            # frontend 1.58.1 (no proxyWidgets: migrated away on load): one value per instance input, in inputs' order
            # (SubgraphNode.serializeFromStoreState: its promoted widget's value, else undefined, saved as null)
            for k, i in enumerate(node["inputs"]):
                if isinstance(i, dict) and i.get("name") == name and vals[k] is not None:
                    return "value", vals[k]
        return SAVED


class _API:
    """The API format: node id -> {class_type, inputs}, a link [source id, output index]."""

    def __init__(self, prompt, read_image=None, read_upscale=None):
        self.prompt, self.read_image, self.read_upscale, self.images_read = prompt, read_image, read_upscale, {}

    @staticmethod
    def label(h):
        return f"{h[1].get('class_type')} (node {h[0]})"

    @staticmethod
    def kind(h):
        return h[1].get("class_type")

    @staticmethod
    def active(h):
        return True

    @staticmethod
    def link_of(h, name):
        ins = h[1].get("inputs")
        v = ins.get(name) if isinstance(ins, dict) else None
        return v if is_api_link(v) else None

    first_link = None  # no Reroute in a prompt: the frontend drops it

    @staticmethod
    def saved(h, name, names):
        ins = h[1].get("inputs")
        v = ins.get(name, SAVED) if isinstance(ins, dict) else SAVED
        return SAVED if isinstance(v, list) else v

    def src(self, ref):
        node = self.prompt.get(str(ref[0]))
        if not isinstance(node, dict):
            raise Unread(f"node {ref[0]}, not in the prompt")
        return (str(ref[0]), node), ref[1]


def is_api_link(x) -> bool:
    """An API prompt's link: [source node id, output index] (ComfyUI's is_link)."""
    return isinstance(x, list) and len(x) == 2 and isinstance(x[0], (str, int)) and isinstance(x[1], int) \
        and not isinstance(x[1], bool)


def view(wf, read_image=None, read_upscale=None):
    """The graph's view; read_image(name) -> (w, h, frames, how) reads a loaded image's size (input_image.py), or None;
    read_upscale(name) -> scale reads an upscale model's factor (pixel_upscale.scale_reader), or None. Both raise
    input_image.NotRead with the reason."""
    return (_UI if isinstance(wf.get("nodes"), list) else _API)(wf, read_image, read_upscale)


def value(v, ref, depth=0):
    """The value a link carries (a widget input's), or SAVED; raises Unread naming a source not followed."""
    while True:
        depth += 1
        if depth > MAX_DEPTH:
            raise Unread(f"a chain of more than {MAX_DEPTH} links")
        got = v.src(ref)
        if got is SAVED:
            return SAVED
        if got[0] == "ref":
            ref = got[1]
            continue
        if got[0] == "value":
            return got[1]
        h, slot = got
        t = v.kind(h)
        if not v.active(h):
            raise Unread(f"{v.label(h)}, muted or bypassed")
        if t == "Reroute" and v.first_link:
            ref = v.first_link(h)
            if ref is None:
                raise Unread(f"{v.label(h)}, with no input")
            continue
        if t == "PrimitiveNode":  # the frontend's: its value is its first widget
            vals = h[1].get("widgets_values")
            if isinstance(vals, list) and vals:
                return vals[0]
            raise Unread(f"{v.label(h)}, with no value")
        if t in PRIMITIVES:
            return widget(v, h, "value", depth)
        if t == "WanCameraEmbedding" and slot in (1, 2, 3):  # outputs camera_embedding, width, height, length
            return widget(v, h, WIDGETS[t][slot], depth)
        if t == "GetImageSize" and slot in (0, 1, 2):
            got = image(v, v.link_of(h, "image"), depth)[slot]
            if got is None:
                raise Unread(f"{v.label(h)}: the batch of an image whose batch the estimate does not know")
            return got
        raise Unread(f"{v.label(h)}, not a constant")


def widget(v, h, name, depth=0):
    """Source node h's widget `name`: through its link when it has one, else its saved value."""
    ref = v.link_of(h, name)
    got = value(v, ref, depth) if ref is not None else SAVED
    if got is SAVED:
        t = v.kind(h)
        got = v.saved(h, name, WIDGETS.get(t) or (tuple(widget_names(t)) if t in LATENT_NODES else _shape()[3].get(t, ())))
    if got is SAVED:
        raise Unread(f"{v.label(h)}, no {name} value")
    return got


def _source(v, ref, depth, what):
    """(node, its type, depth) of the node that makes link ref's `what` (image, latent), through subgraph inputs and
    Reroutes, each hop one more of MAX_DEPTH; Unread where none does or it is muted or bypassed."""
    while True:
        depth += 1
        if ref is None or depth > MAX_DEPTH:
            raise Unread(f"{what} with no source" if ref is None else f"a chain of more than {MAX_DEPTH} links")
        got = v.src(ref)
        if got is SAVED or got[0] == "value":
            raise Unread(f"the subgraph's {what.split()[-1]} input, not linked")
        if got[0] == "ref":
            ref = got[1]
            continue
        h, _ = got
        t = v.kind(h)
        if not v.active(h):
            raise Unread(f"{v.label(h)}, muted or bypassed")
        if t == "Reroute" and v.first_link:
            ref = v.first_link(h)
            continue
        return h, t, depth


def image(v, ref, depth):
    """(width, height, batch) of the image a link carries."""
    while True:
        h, t, depth = _source(v, ref, depth, "an image")
        if t == "EmptyImage":
            return tuple(int(_num(widget(v, h, n, depth), f"{v.label(h)}.{n}")) for n in ("width", "height", "batch_size"))
        if t == "ImageScaleBy":  # nodes.py:1826-1834
            w, hh, b = image(v, v.link_of(h, "image"), depth)
            s = _num(widget(v, h, "scale_by", depth), f"{v.label(h)}.scale_by")
            return round(w * s), round(hh * s), b
        if t == "ImageScale":  # nodes.py:1810-1823
            tw = int(_num(widget(v, h, "width", depth), f"{v.label(h)}.width"))
            th = int(_num(widget(v, h, "height", depth), f"{v.label(h)}.height"))
            if tw > 0 and th > 0:  # both sides typed: that size whatever the input's (rev63 #4); its batch if known
                try:
                    b = image(v, v.link_of(h, "image"), depth)[2]
                except AreaOnly as exc:
                    b = exc.batch
                except Unread:
                    b = None
                return tw, th, b
            w, hh, b = image(v, v.link_of(h, "image"), depth)
            if tw == 0 and th == 0:
                return w, hh, b
            if tw == 0:
                tw = max(1, round(w * th / hh))
            elif th == 0:
                th = max(1, round(hh * tw / w))
            return tw, th, b
        if t in input_image.LOADERS:
            return _loaded(v, h, depth)
        if t == "Canny":  # the edges at its image's size
            ref = v.link_of(h, "image")
            continue
        if t == "ImageScaleToTotalPixels":
            return _total_pixels(v, h, depth)
        if t == "ResizeImageMaskNode":
            return _resize(v, h, depth)
        if t == "ImageUpscaleWithModel":
            try:
                w, hh, b = image(v, v.link_of(h, "image"), depth)
            except AreaOnly as exc:  # an image known by its area: the upscaled one's is scale^2 times it
                s = _upscale_factor(v, h, depth)
                raise AreaOnly(f"{v.label(h)}: x{s} of {exc}", exc.pixels * s * s, exc.batch) from None
            s = _upscale_factor(v, h, depth)
            return round(w * s), round(hh * s), b
        if t in DECODES:  # v.at_decode (image_size.follows_decode's probe): the nearest decode's size, changed
            hook, v.at_decode = getattr(v, "at_decode", None), None  # the nearest only: a decode inside is not
            got = latent(v, v.link_of(h, DECODES[t]), depth)
            return hook(got) if hook else got
        if t == "FluxKontextImageScale":  # comfy_extras/nodes_flux.py:141-146: the preferred size nearest its aspect
            try:
                w, hh, b = image(v, v.link_of(h, "image"), depth)
            except Unread as exc:
                raise AreaOnly(f"{v.label(h)}: one of FLUX.1 Kontext's preferred sizes, at most {KONTEXT_MAX} pixels, for "
                               f"an image whose size the estimate does not know ({exc})", KONTEXT_MAX) from None
            return min((abs(w / hh - kw / kh), kw, kh) for kw, kh in KONTEXT_SIZES)[1:] + (b,)
        raise Unread(f"{v.label(h)}: an image whose size the estimate does not know")


def latent(v, ref, depth):
    """(width, height, batch) of the image a latent decodes to: followed back through the samplers and latent upscales
    (LatentUpscaleBy, LatentUpscale: latent_scale.resized), the core nodes that keep or change its shape (fix68c:
    latent_custom.SAME_SIZE, latent_shape.through) to a still-image latent node's widgets or to the image a VAEEncode
    encodes."""
    while True:
        h, t, depth = (getattr(v, "latent_source", None) or _source)(v, ref, depth, "a latent")  # latent_shape.attach's
        if t in SAMPLED or t in PASSED:
            ref = v.link_of(h, SAMPLED.get(t) or PASSED[t])  # the Footprint Estimate node unlinked: no source, Unread
        elif t in ENCODES:
            return image(v, v.link_of(h, ENCODES[t]), depth)
        elif t in ("LatentUpscaleBy", "LatentUpscale"):  # fix66h (rev66d R1): the chain followed, not stopped at them
            from . import latent_scale
            return latent_scale.resized(v, h, t, latent(v, v.link_of(h, "samples"), depth), depth)
        elif t in _shape()[0]:  # a core node that changes the shape (fix68c): latent_shape.through
            return _shape()[2](v, h, t, depth)
        elif t in _shape()[1]:  # one that keeps its input's shape (latent_custom.SAME_SIZE)
            ref = v.link_of(h, _shape()[1][t])
        elif t in LATENT_NODES and LATENT_NODES[t].kind == "size" and {"width", "height"} <= set(
                size_widgets(t).values()) and "length" not in size_widgets(t).values():
            got = {role: int(_num(widget(v, h, n, depth), f"{v.label(h)}.{n}")) for n, role in size_widgets(t).items()}
            return got["width"], got["height"], got.get("batch", 1)
        else:
            raise Unread(f"{v.label(h)}: a latent whose size the estimate does not follow")


def _shape():
    """(latent_shape.SHAPE, latent_custom.SAME_SIZE, latent_shape.through, latent_shape.UI_WIDGETS): imported when
    first used (they import this module)."""
    from . import latent_custom, latent_shape
    return latent_shape.SHAPE, latent_custom.SAME_SIZE, latent_shape.through, latent_shape.UI_WIDGETS


def upscale_model_name(v, h, depth=0) -> str:
    """The file name of the model ImageUpscaleWithModel h runs: its UpscaleModelLoader's model_name, through Reroutes
    and subgraph inputs; Unread where another node, or none, gives the model."""
    ref = v.link_of(h, "upscale_model")
    for _ in range(MAX_DEPTH):
        got = v.src(ref) if ref is not None else SAVED
        if got is SAVED or got[0] == "value":
            raise Unread(f"{v.label(h)}: its upscale model, not linked")
        if got[0] == "ref":
            ref = got[1]
            continue
        src = got[0]
        if v.kind(src) == "Reroute" and v.first_link:
            ref = v.first_link(src)
            continue
        if v.kind(src) != "UpscaleModelLoader" or not v.active(src):
            raise Unread(f"{v.label(h)}: an upscale model from {v.label(src)}, which the estimate does not read")
        name = widget(v, src, "model_name", depth)
        break
    else:
        raise Unread(f"a chain of more than {MAX_DEPTH} links")
    if not isinstance(name, str) or not name:
        raise Unread(f"{v.label(src)}, no model named")
    return name


def _upscale_factor(v, h, depth):
    """The scale of the model ImageUpscaleWithModel h runs: its UpscaleModelLoader's file, read by v.read_upscale; the
    name read or not goes to v.images_read (the estimate's notes) where it is not read."""
    name = upscale_model_name(v, h, depth)
    why = "no models folder to read it from" if v.read_upscale is None else None
    if why is None:
        try:
            scale = v.read_upscale(name)
        except input_image.NotRead as exc:
            why = str(exc)
    if why is not None:
        v.images_read[("upscale", name)] = (f"{v.label(h)}: the size of the image it makes is not known: its upscale "
                                           f"model {name} is not read ({why})")
        raise Unread(f"{v.label(h)}: an image upscaled by {name}, whose scale the estimate does not know ({why})")
    return scale


def _loaded(v, h, depth):
    """(width, height, frames) of the file a LoadImage node loads, where a reader was given and can read it
    (input_image.py); the names read go to v.images_read for the estimate's notes."""
    name = widget(v, h, "image", depth)
    if not isinstance(name, str) or not name:
        raise Unread(f"{v.label(h)}, no image named")
    if v.read_image is None:
        raise Unread(f"{v.label(h)}: an image whose size the estimate does not know (no input folder to read it from: "
                     "--input-dir)")
    try:
        w, hh, frames, how = v.read_image(name)
    except input_image.NotRead as exc:
        v.images_read[name] = f"{v.label(h)}: its size not read ({exc})"
        raise Unread(f"{v.label(h)}: an image whose size the estimate does not know ({exc})") from None
    v.images_read[name] = f"{v.label(h)} loads {how}"
    return w, hh, frames


def _total_pixels(v, h, depth):
    """ImageScaleToTotalPixels (nodes_post_processing.py:236-245): scale = sqrt(megapixels x 1024^2 / (w x h)), each side
    round(side x scale / resolution_steps) x resolution_steps (resolution_steps 1 where the node was saved without it)."""
    mp = _num(widget(v, h, "megapixels", depth), f"{v.label(h)}.megapixels")
    try:
        steps = int(_num(widget(v, h, "resolution_steps", depth), f"{v.label(h)}.resolution_steps")) or 1
    except Unread:
        steps = 1
    total = mp * 1024 * 1024
    try:
        w, hh, b = image(v, v.link_of(h, "image"), depth)
    except AreaOnly:
        raise
    except Unread as exc:
        raise AreaOnly(f"{v.label(h)}: {mp} megapixels of an image whose size the estimate does not know ({exc})",
                       total) from None
    s = (total / (w * hh)) ** 0.5
    return round(w * s / steps) * steps, round(hh * s / steps) * steps, b


def _resize(v, h, depth):
    """ResizeImageMaskNode (nodes_post_processing.py:366-445): the widgets of its resize_type, as execute() uses them."""
    kind = widget(v, h, "resize_type", depth)
    names = ("resize_type",) + tuple(f"resize_type.{n}" for n in RESIZE.get(kind, ())) + ("scale_method",)

    def num(n):
        ref = v.link_of(h, f"resize_type.{n}")
        got = value(v, ref, depth) if ref is not None else SAVED
        got = v.saved(h, f"resize_type.{n}", names) if got is SAVED else got
        return _num(got if got is not SAVED else None, f"{v.label(h)}.{n}")

    if kind == "scale dimensions":
        tw, th = int(num("width")), int(num("height"))
        if tw > 0 and th > 0:  # scale_dimensions (l.287-300): that size whatever the input's; its batch
            try:
                b = image(v, v.link_of(h, "input"), depth)[2]
            except Unread:
                b = None
            return tw, th, b
    elif kind == "scale total pixels":  # scale_total_pixels (l.342-353): int(megapixels x 1024^2) pixels
        total = int(num("megapixels") * 1024 * 1024)
        try:
            w, hh, b = image(v, v.link_of(h, "input"), depth)
        except Unread as exc:
            raise AreaOnly(f"{v.label(h)}: {total} pixels of an image whose size the estimate does not know ({exc})",
                           total) from None
        s = (total / (w * hh)) ** 0.5
        return round(w * s), round(hh * s), b
    elif kind == "scale by multiplier":
        w, hh, b = image(v, v.link_of(h, "input"), depth)
        m = num("multiplier")
        return round(w * m), round(hh * m), b
    raise Unread(f"{v.label(h)}: {kind!r} of an image whose size the estimate does not know")


def linked(v, h, names):
    """{widget name: (value, None) or (None, why)} for h's widgets in `names` that are linked; the value SAVED means
    the saved one holds (a subgraph's input)."""
    out = {}
    for name in names:
        try:
            ref = v.link_of(h, name)
            if ref is not None:
                out[name] = (value(v, ref), None)
        except Unread as exc:
            out[name] = (None, str(exc))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError, KeyError, IndexError) as exc:
            out[name] = (None, f"a source not read ({type(exc).__name__})")  # a malformed graph: never a crash
    return out
