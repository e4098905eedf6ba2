"""Whole-workflow estimate: read a ComfyUI workflow (UI or API format), find the model files its loader nodes name under
the models folder, take the sizes set in the graph (latent nodes, sampler CFG, tiled decode; a widget fed by a link read
from its source when that is a constant, links.py), and estimate every phase as ComfyUI would run it. On request the result
is written back into the workflow's metadata (extra.gpu_garden.memory), with the verdict per common card tier, so a shared
workflow carries its requirement (workflow_cli.py). No ComfyUI import: the widget orders (model_files.py) are ComfyUI
0.8.0's nodes' (and ComfyUI-GGUF's)."""
import os
from pathlib import Path

from . import (control_feeds, dual_cfg, families, formula, group_nodes, hunyuan3d, i2v_nodes, image_size, latent_custom,
               latent_scale, latent_shape, latent_upscale, links, pipelines, pixel_upscale, reach, ref_branches,
               ref_latents, sampler_cfg, sampler_nodes, side_models, spec)
from .workflow_file import MAX_WORKFLOW_BYTES, load  # noqa: F401 (workflow.load, the readers' entry)
from .latent_nodes import LATENT_NODES, size_widgets, widget_names
from .model_files import (CHECKED, FOLDER_ROLES, GGUF_PATCHER, LOADER_ROLES, LOADERS, NOT_COUNTED, NOT_FOLLOWED_NAMES,
                          Unusable, find_file, has_model_folders, not_followed)
from ..errors import UserError

# UI widget index of cfg (after seed's control widget), of the samplers and guiders with a cfg widget (sampler_nodes.py)
SAMPLERS = {t: s.cfg_widget for t, s in sampler_nodes.SAMPLERS.items() if s.cfg_widget is not None} | sampler_nodes.GUIDERS
CPU_TE = "text encoders on the CPU (loader device: cpu)"
WEIGHT_DTYPE = {"fp8_e4m3fn": "fp8", "fp8_e4m3fn_fast": "fp8", "fp8_e5m2": "fp8"}


def nodes(wf: dict, notes: list | None = None, whole: dict | None = None, read_image=None,
          read_upscale=None, keyed: dict | None = None) -> list[tuple[str, dict]]:
    """[(class name, {widget name: value})] for a UI-format (nodes with widgets_values) or API-format workflow;
    subgraph definitions included. A widget the estimate reads that is linked takes its source's value when the
    source is a constant (links.py); else the saved value stays (UI format; none in API format) and `notes` gets a
    line naming the widget and its source. whole: the prompt an API-format subset's links are followed in. read_image:
    a loaded image's size reader (links.view); `notes` gets a line per image it read or could not. read_upscale: an
    upscale model's scale reader (links.view), so the image ImageUpscaleWithModel makes has a size. keyed: gets
    {(graph id, node id) (UI) or id (API, a string): (class name, widgets)} of the nodes read (control_feeds.py)."""
    out = []
    if isinstance(wf.get("nodes"), list):
        runs, left = reach.ui(wf), []  # None: no output node, read whole but for the nodes feeding nothing (F5)
        top = {n.get("id") for n in wf["nodes"] if isinstance(n, dict) and links.is_key(n.get("id"))}
        idle = reach.feeding_nothing(wf) if runs is None else set()
        if runs is not None or idle:  # a legacy group-node instance not reached: its inner nodes never run
            left = [n for n in wf["nodes"] if isinstance(n, dict) and links.is_key(n.get("id")) and _group(n)
                    and n.get("mode") not in (2, 4) and ((None, n["id"]) in idle if runs is None else (None, n["id"]) not in runs)]
            gone = {id(x) for x in left}
            wf = dict(wf, nodes=[n for n in wf["nodes"] if id(n) not in gone])
        wf, grouped = group_nodes.expand(wf)  # legacy group nodes: their inner nodes, from extra.groupNodes
        if notes is not None:
            notes += grouped
        v = links.view(wf, read_image, read_upscale)
        for gid, group in v.lists.items():
            for n in group:
                if n.get("mode") in (2, 4):  # muted / bypassed
                    continue
                k = (gid, n["id"]) if links.is_key(n.get("id")) else None  # a node with no usable id: reached by nothing
                if (gid is not None or k is None or n["id"] in top) and (k in idle if runs is None else k not in runs):
                    left.append(n)  # not reached from an output node (a group's inner node: its instance was)
                    continue
                t = n.get("type") if isinstance(n.get("type"), str) else ""
                w = _ui_widgets(t, n.get("widgets_values"))
                _follow(v, (gid, n), t, w, _read_names(t), notes, saved=True)
                image_size.attach(v, (gid, n), t, w)
                latent_scale.attach(v, (gid, n), t, w)
                latent_custom.attach(v, (gid, n), t, w)
                ref_latents.attach(v, (gid, n), t, w)
                out.append((t, w))
                if keyed is not None and k is not None:
                    keyed[k] = (t, w)
        if notes is not None:
            notes += _not_reached(left)
            notes += v.images_read.values()
        return out
    v = links.view(whole if isinstance(whole, dict) else wf, read_image, read_upscale)
    runs, left = None if isinstance(whole, dict) else reach.api(wf), []  # None: no output node (or a chosen subset): whole
    for k, node in wf.items():
        if isinstance(node, dict) and "class_type" in node:
            if runs is not None and str(k) not in runs:
                left.append({"type": node["class_type"], "id": k})
                continue
            t, inputs = node["class_type"], node.get("inputs")
            t = t if isinstance(t, str) else ""
            w = {k2: x for k2, x in inputs.items() if not isinstance(x, list)} if isinstance(inputs, dict) else {}
            _follow(v, (str(k), node), t, w, _read_names(t), notes, saved=False)
            image_size.attach(v, (str(k), node), t, w)
            latent_scale.attach(v, (str(k), node), t, w)
            latent_custom.attach(v, (str(k), node), t, w)
            ref_latents.attach(v, (str(k), node), t, w)
            out.append((t, w))
            if keyed is not None:
                keyed[str(k)] = (t, w)
    if not out and not left:
        raise UserError("not a ComfyUI workflow: no nodes (UI format) and no class_type entries (API format)")
    if notes is not None:
        notes += _not_reached(left)
        notes += v.images_read.values()
    return out


def _group(n) -> bool:
    return isinstance(n.get("type"), str) and n["type"].startswith(group_nodes.PREFIXES)


def _not_reached(left) -> list:
    """One line naming the nodes left out that the estimate would read (a loader, a latent node, a sampler)."""
    read = [f"{n.get('type')} (node {n.get('id')})" for n in left if isinstance(n.get("type"), str)
            and (_read_names(n["type"]) or n["type"] in side_models.SIDE or "Loader" in n["type"] or _group(n))]
    return [f"not read: {', '.join(read)}: not reached from an output node (ComfyUI runs only the output nodes and "
            "what they need, execution.py)"] if read else []


def _read_names(t) -> tuple:
    """The widgets of node type t the estimate reads (read() below)."""
    if t in LOADERS or t in CHECKED:
        return tuple(n for n, _ in LOADERS.get(t) or CHECKED[t])
    if t in LATENT_NODES:
        return tuple(widget_names(t))
    return ("cfg",) if t in SAMPLERS else VAE_TILED if t == "VAEDecodeTiled" else \
        hunyuan3d.WIDGETS.get(t) or dual_cfg.WIDGETS.get(t) or NOT_FOLLOWED_NAMES.get(t, ())


def _follow(v, h, t, w, names, notes, saved):
    """w's linked widgets among names: the source's value, or the saved one (none in API format) and a note."""
    got, differ = links.linked(v, h, names), []
    for name, (val, why) in got.items():
        if why is None:
            if val is not links.SAVED:
                if saved and name in w and w[name] != val:
                    differ.append(f"{name} {val!r} (saved {w[name]!r})")
                w[name] = val
            continue
        if notes is not None:
            keep = (f"its saved value {w[name]!r} is used" if saved and name in w else "not set")
            notes.append(f"{t}.{name} is linked from {why}, which the estimate does not follow: {keep}")
    if differ and notes is not None:
        notes.append(f"{t}: read through its links: " + ", ".join(differ))


VAE_TILED = ("tile_size", "overlap", "temporal_size", "temporal_overlap")


def _ui_widgets(t, values):
    if isinstance(values, dict):  # some nodes save a dict of widget values (a copy: links may set some)
        return dict(values)
    values = values if isinstance(values, list) else []  # a hand-edited or foreign export: no widgets
    if t in SAMPLERS:
        return {"cfg": values[SAMPLERS[t]]} if len(values) > SAMPLERS[t] else {}
    return {n: v for n, v in zip(_read_names(t), values) if n}


def models_folder(path):
    """(folder, note): --models-dir as given, or its models/ child when it names the ComfyUI folder itself."""
    d = Path(path)
    if d.is_file():
        raise UserError(f"--models-dir {path}: a file, not a folder (give your ComfyUI/models folder; model files go "
                        f"without --workflow: gpu-garden estimate FILE...)")
    if not d.is_dir():
        raise UserError(f"--models-dir {path}: no such folder (give your ComfyUI/models folder)")
    if not has_model_folders(d) and has_model_folders(d / "models"):
        return d / "models", f"--models-dir {path} is the ComfyUI folder: its models/ folder is read"
    return d, None


def files_by_role(wf: dict, whole: dict | None = None) -> dict:
    """{role: [file names]} the workflow's (or a queued prompt's) loader widgets name, per estimate role: which files
    each model's CPU copy comes from, for host RAM's file-backed test (host_ram.mapped_file). {} for no loaders."""
    out = {}
    for t, w in nodes(wf, whole=whole):
        for name, folders in LOADERS.get(t, ()):
            if folders and isinstance(w.get(name), str):
                for role in LOADER_ROLES.get((t, name)) or FOLDER_ROLES[folders[0]]:
                    out.setdefault(role, []).append(w[name])
    return out


def files_feeding(prompt: dict, node_id, inputs=("model", "clip", "vae")) -> dict:
    """files_by_role of the loaders upstream of node `node_id`'s `inputs` in a queued (API-format) prompt: the links are
    walked back from those inputs through every input of the nodes reached (a LoRA, a model merge, a sampling patch),
    each node once (linear time, cycles end). A loader on another branch feeds another run's models: not counted.
    {} when the node or its links are not in the prompt (the policy decides then)."""
    me = prompt.get(str(node_id)) if isinstance(prompt, dict) and node_id is not None else None
    own = me.get("inputs") if isinstance(me, dict) else None
    if not isinstance(own, dict):
        return {}
    seen, todo = set(), [str(v[0]) for k, v in own.items() if k in inputs and links.is_api_link(v)]
    while todo:
        i = todo.pop()
        if i in seen or not isinstance(prompt.get(i), dict):
            continue
        seen.add(i)
        up = prompt[i].get("inputs")
        todo += [str(v[0]) for v in up.values() if links.is_api_link(v)] if isinstance(up, dict) else []
    fed = {i: prompt[i] for i in seen if isinstance(prompt[i].get("class_type"), str) and prompt[i]["class_type"] in LOADERS}
    return files_by_role(fed, whole=prompt) if fed else {}


def read(wf: dict, models_dir, resolve=None, read_image=None) -> dict:
    """{files: [(path, loader, widget)], missing: [(name, loader, widget, folders)] of the counted loaders (LOADERS),
    missing_checked: the same for the loaders never counted (CHECKED: a LoRA), checked: [found LoRA paths],
    size: (w, h, frames, batch), cfg, tiled, weights_dtype, notes}.
    resolve(folders, name) -> path or None replaces the models_dir lookup (inside ComfyUI: folder_paths)."""
    files, missing, missing_checked, checked, cfgs, notes = [], [], [], [], [], []
    tiled, wdt, other, side = None, None, [], []
    graph = {"sizes": [], "resizes": [], "scales": [], "from_input": [], "families": {}, "notes": [], "images": [], **{n: [] for n in pixel_upscale.NODES}}
    upscale_models, keyed = {}, {}  # {path: read_file()}: each upscale model read once (its scale, its phase)
    scale = pixel_upscale.scale_reader(models_dir, resolve, find_file, Unusable, upscale_models)
    for t, w in nodes(wf, graph["notes"], read_image=read_image, read_upscale=scale, keyed=keyed):
        latent_shape.gather(w, graph, t)  # the uncertain nodes (latent_custom) and the sizes latent_shape made
        graph["refs"] = graph.get("refs", []) + w.get(ref_latents.KEY, [])  # an edit model's reference images
        if t in LOADERS or t in CHECKED:
            for name, folders in LOADERS.get(t) or CHECKED[t]:
                if not folders or not isinstance(w.get(name), str):
                    continue
                why = None
                try:
                    p = resolve(folders, w[name]) if resolve else find_file(models_dir, folders, w[name]) if models_dir else None
                except Unusable as exc:  # a broken link, not readable: that file is reported, the others still estimated
                    p, why = None, str(exc)
                if not p:
                    (missing if t in LOADERS else missing_checked).append((w[name], t, name, folders, why))
                else:
                    (files if t in LOADERS else checked).append((str(p), t, name))
            if t == "UNETLoader" and isinstance(w.get("weight_dtype"), str) and w["weight_dtype"] in WEIGHT_DTYPE:
                wdt = WEIGHT_DTYPE[w["weight_dtype"]]
            if t.startswith(("CLIPLoader", "DualCLIPLoader")) and w.get("device") == "cpu":
                notes.append(CPU_TE)
        elif t == "LTXVEmptyLatentAudio":
            _ltx2_audio(w, graph)
        elif t == "LTXVLatentUpsampler":  # LTX-2's two stages: the second samples the upsampled latent (latent_upscale.py)
            graph["upscale"] = True
        elif t in LATENT_NODES:
            _latent_node(t, w, graph)
        elif t in SAMPLERS and isinstance(w.get("cfg"), (int, float)):
            cfgs.append(float(w["cfg"]))
        elif t in sampler_nodes.FIXED_CFG:
            cfgs.append(sampler_nodes.FIXED_CFG[t])
        elif t in dual_cfg.WIDGETS:  # three conditionings per step (dual_cfg.py)
            cfgs.append(dual_cfg.cfg(w))
            graph["conds"] = max(graph.get("conds") or dual_cfg.CONDS, dual_cfg.conds(w))
        elif t == "VAEDecodeTiled":
            try:
                tiled = {"tile": int(w.get("tile_size") or spec.TILE_NODE["tile"]),
                         "frames": int(w.get("temporal_size") or spec.TILE_NODE["frames"])}
            except (TypeError, ValueError, OverflowError):
                tiled = {"tile": spec.TILE_NODE["tile"], "frames": spec.TILE_NODE["frames"]}  # not a number: the defaults
        elif t in pixel_upscale.NODES:  # the pixel upscale step (pixel_upscale.py): its own phase where its file is found
            graph[t].append(w)
        elif t in hunyuan3d.GRAPH_NODES:  # the multi-view context tokens; the decode's non-default values named
            notes += hunyuan3d.node_note(t, w, graph)
        elif t in side_models.SIDE:  # a model loaded beside these: sized where its file is found, else named
            side.append((t, w))
        elif "Loader" in t:  # a loader whose model the estimate does not size (model_files.NOT_FOLLOWED): named
            other.append((t, w))
    files, unsized = hunyuan3d.image_only(files)  # ImageOnlyCheckpointLoader: a Hunyuan3D file counted, SVD's named
    other += unsized
    side, left, gone = side_models.find(side, models_dir, resolve)
    missing += gone  # a ControlNet named and not found: ComfyUI refuses the prompt, the estimate is incomplete
    ups, up_left, up_gone, up_notes = pixel_upscale.find(graph[pixel_upscale.NODES[0]], bool(graph[pixel_upscale.NODES[1]]),
                                                         models_dir, resolve, find_file, Unusable, upscale_models)
    missing += up_gone  # an upscale model named and not found: ComfyUI refuses the prompt, as for a ControlNet
    other, files = other + left + up_left, files + side_models.components(side)  # a CLIP vision file: an encoder component
    sizes = graph["sizes"]
    size = max(sizes, key=lambda s: s[0] * s[1] * s[2] * s[3]) if sizes else None
    for wv, hv, t in graph["resizes"]:  # a resize keeps the length and batch of the latent it takes
        sizes.append((wv, hv) + (size[2:] if size else (1, 1)))
        notes.append(f"{t} resizes the latent to {wv}x{hv}" + ("; its length and batch are the graph's other latent's" if size else ""))
    for wv, hv, lb, t in latent_scale.sized(graph):  # its own input's length and batch (rev66d R1b)
        sizes.append((wv, hv) + lb)
        notes.append(f"{t} resizes the latent to {wv}x{hv}, batch {lb[1]}")
    latent_shape.sizes(graph, sizes, notes)  # core nodes that change a latent's shape (fix68c)
    size = max(sizes, key=lambda s: s[0] * s[1] * s[2] * s[3]) if sizes else None
    if len(sizes) > 1:
        notes.append(f"{len(sizes)} latent sizes in the graph; the largest is estimated")
    notes += graph["notes"] + not_followed(other) + up_notes
    if "audio_frames" in graph:  # LTXVEmptyLatentAudio (_ltx2_audio)
        af, fps = graph["audio_frames"], graph.get("audio_fps") or spec.family("ltx-2")["audio"]["fps"]
        notes.append(f"LTXVEmptyLatentAudio: LTX-2's audio latent, counted beside the video at {fps} frames a second")
        if af and size and af != size[2]:
            notes.append(f"LTXVEmptyLatentAudio's frames_number {af} is not the video's length {size[2]}: the audio "
                         "latent is counted for the video's frames")
    for found, _ in dict.fromkeys(NOT_COUNTED[t] for _, t, _ in checked):  # one note per kind (a LoRA, an upscaler)
        notes.append(f"{found}: " + ", ".join(os.path.basename(p) for p, t, _ in checked if NOT_COUNTED[t][0] == found))
    staged = [m for m in missing_checked if graph.get("upscale") and m[1] == "LatentUpscaleModelLoader"]  # _upscaler says
    missing_checked = [m for m in missing_checked if m not in staged]
    for _, why in dict.fromkeys(NOT_COUNTED[m[1]] for m in missing_checked):  # never counted: the estimate stays whole
        notes.append(f"not found, and not counted if found ({why}): " + ", ".join(
            f"{m[0]} ({m[1]}; {m[4] or 'looked in ' + _looked(m[3])})" for m in missing_checked if NOT_COUNTED[m[1]][1] == why))
    return {"files": files, "missing": missing, "missing_checked": missing_checked, "checked": checked, "size": size, "cfg": (max(cfgs) > 1.0) if cfgs else None,
            "tiled": tiled, "weights_dtype": wdt, "notes": notes, "cpu_te": CPU_TE in notes,
            "from_input": graph["from_input"], "unknown": list(dict.fromkeys(graph.get("unknown", []))), "latent_families": graph["families"], "audio_fps": graph.get("audio_fps"), "conds": graph.get("conds"), "i2v_encode": i2v_nodes.largest(wf, keyed),
            "input_image": image_size.largest(graph["images"]), "not_followed": sorted({t for t, _ in other}), "side": side,
            "pixel_upscale": (ups, graph[pixel_upscale.NODES[1]]) if ups else None,
            "latent_upscale": _upscaler(checked, staged) if graph.get("upscale") else None,
            "text_tokens": graph.get("text_tokens"), "control_samplers": control_feeds.owner_sets(wf, keyed),
            "sampler_cfgs": sampler_cfg.of_samplers(wf, keyed),
            "control_sizes": control_feeds.latents(wf, read_image, scale), "vae_options": graph.get("vae_options"),
            "ref_images": ref_branches.of_calls(wf, keyed, graph.get("refs", []))}


def _upscaler(checked, missing=()):
    """The LTX-2 latent upscaler LatentUpscaleModelLoader names (latent_upscale.from_file: its header's values and config);
    {"values": None} (the bundled layout stands in) when its file is not found or not one."""
    for p, t, _ in checked:
        if t == "LatentUpscaleModelLoader":
            up = latent_upscale.from_file(p)
            if up:
                return up
    if missing:  # named but not here: the bundled x2 stands in, and the line says which file was not found (rev62 F9)
        name, loader, _, folders, why = missing[0]
        return latent_upscale.bundled(f"{name} not found ({loader}; {why or 'looked in ' + _looked(folders)})")
    return {"values": None}


def _two_stage(info, comps, w, h, pol, used):
    """LTX-2 with an LTXVLatentUpsampler: the size estimated so far (w x h, from `used`: the graph's latent node, the
    node's size, ...) is stage 1's; stage 2 samples and the VAE decodes the upsampled latent, twice its latent width and
    height: (w2, h2), the pixel size of that latent. Else (w, h)."""
    if not info.get("latent_upscale"):
        return w, h
    return latent_upscale.two_stage(info["latent_upscale"], comps, w, h, pol, info["notes"], "LTXVLatentUpsampler",
                                    "the graph's latent" if info["size"] and used == "the graph's latent node" else used.split(";")[0])


def _ltx2_audio(w, graph):
    """LTX-2's audio latent (nodes_lt_audio.py:97-170): [B, 8, ceil(frames_number / frame_rate x 25), 16] (l.146-158,
    audio_vae.py:235-236, 268-271). The estimate counts it beside the video latent for the video's frames
    (phases._with_audio) at this node's frame_rate (1 to 1000, l.110-118; its default 25 is the estimate's); a
    frames_number other than the video's length is named, not followed (the --frames knobs move both)."""
    fps, n = w.get("frame_rate"), w.get("frames_number")
    if isinstance(fps, int) and not isinstance(fps, bool) and 1 <= fps <= 1000:
        graph["audio_fps"] = fps
    graph["audio_frames"] = n if isinstance(n, int) and not isinstance(n, bool) else None


def components(files) -> list[dict]:
    """The estimate's components of read()'s files [(path, loader, widget)]: each path split once, keeping the roles its
    loaders take (LOADER_ROLES; every role where one of them takes the whole file)."""
    roles, gguf = {}, {p: GGUF_PATCHER[t] for p, t, _ in files if t in GGUF_PATCHER}  # dynamic_stream.gguf_phases
    for p, t, name in files:
        r = LOADER_ROLES.get((t, name))
        roles[p] = None if p in roles and roles[p] is None or r is None else roles.get(p, ()) + r
    return [dict(c, gguf_patcher=gguf[p]) if p in gguf else c
            for p, keep in roles.items() for c in formula.from_files([p]) if keep is None or c["role"] in keep]


def _latent_node(t, w, graph):
    """One latent node's widgets (latent_nodes.LATENT_NODES) into graph: its size, or what its size comes from."""
    row = LATENT_NODES[t]
    if row.family:
        graph["families"][t] = row.family
    if row.kind == "scale":  # LatentUpscaleBy: sized in read() once the graph's latent sizes are known (latent_scale.sized)
        graph["scales"].append((t, latent_scale.scale_by(w), w.get(latent_scale.KEY)))
        return
    if row.kind == "other":
        graph["notes"].append(f"{t} makes {row.takes}: not estimated (the estimate sizes the image or video latent)")
        return
    got = {}
    for name, role in size_widgets(t).items():
        try:
            got[role] = int(w.get(name) or 0)
        except (TypeError, ValueError, OverflowError):
            got[role] = 0
    if row.height:  # a 1-D latent (EmptyLatentHunyuan3Dv2): tokens as the width, a height of 1
        got["height"] = row.height
    if row.kind == "input" or (row.kind == "resize" and not (got["width"] > 0 and got["height"] > 0)):
        graph["from_input"].append((t, row.takes or "its input latent's aspect (width or height 0)"))
        graph["images"] += [(t, w[image_size.KEY])] if image_size.KEY in w else []  # VAEEncode's image, where set
    elif got["width"] > 0 and got["height"] > 0:
        if row.kind == "resize":
            graph["resizes"].append((got["width"], got["height"], t))
        else:
            graph["sizes"].append((got["width"], got["height"], got.get("length") or 1, got.get("batch") or 1))
    if row.takes == "layers":  # EmptyQwenImageLayeredLatentImage: [B, 16, layers + 1, H/8, W/8]
        layers = w.get("layers")
        if isinstance(layers, bool) or not isinstance(layers, int):  # a JSON true is no layer count
            layers = dict(row.widgets)["layers"]
        if not 0 <= layers <= LAYERS_MAX:
            graph["notes"].append(f"{t}: its layers widget is outside ComfyUI's range 0 to {LAYERS_MAX}, which refuses "
                                  "the prompt; the estimate counts one image")
        else:
            graph["notes"].append(f"{t}: its latent holds layers + 1 = {layers + 1} images in one sequence; the "
                                  "estimate counts one")


# EmptyQwenImageLayeredLatentImage's layers: io.Int.Input("layers", min=0, max=nodes.MAX_RESOLUTION)
# (ComfyUI 0.8.0 comfy_extras/nodes_qwen.py:119; MAX_RESOLUTION=16384, nodes.py:55)
LAYERS_MAX = 16384


def _looked(folders) -> str:
    return ", ".join(f + "/" for f in folders)


NO_SIZE = "the workflow has no latent size (EmptyLatentImage, ...): {}"
NO_SIZE_CLI = "pass --width and --height"


def _larger_image(info, size, width, height) -> bool:
    """Whether the image a VAEEncode takes is larger than the still-image latent the graph's latent node sets (rev63 #5:
    an EmptyLatentImage pass at 1024 beside a 2048 image encoded for a second sampler was estimated at 1024): the larger
    is estimated, as between two latent nodes, and a line says so. Typed --width/--height win; a video latent stays."""
    if not info["size"] or not info["input_image"] or (width and height) or size[2] != 1:
        return False
    t, (iw, ih, ib, how) = info["input_image"]
    if how.startswith("a square") or iw * ih * ib <= size[0] * size[1] * size[3]:
        return False  # a square standing in for a known area does not beat a latent node's own size (image_flux2)
    info["notes"].append(f"{t} encodes an image of {iw}x{ih}" + (f" x{ib}" if ib > 1 else "") + ", larger than "
                         f"the latent node's {size[0]}x{size[1]}" + (f" x{size[3]}" if size[3] > 1 else "")
                         + ": the larger is estimated")
    return True


def estimate_workflow(wf: dict, models_dir, width=None, height=None, frames=None, batch=None, policy=None,
                      resolve=None, cfg=None, default_size=None, no_size=NO_SIZE_CLI, read_image=None) -> dict:
    """width..batch: typed, they win over the graph (the CLI's flags). default_size (w, h, frames, batch): used only
    when the graph sets no size, neither a latent node nor an image it encodes (the route's: the Footprint Estimate
    node's own widgets, which the button always sends; rev62 F1: they stood in for an img2img graph's encoded size);
    it wins over the family's native size. no_size: what the error says to do when nothing gives one, in the words of
    where it is raised. read_image(name) -> (w, h, frames, how): reads the size of an image a LoadImage node loads
    (input_image.py), so an encoded image's size is known."""
    note = None
    if models_dir and not resolve:
        models_dir, note = models_folder(models_dir)
    info = read(wf, models_dir, resolve, read_image)
    info["notes"][:0] = [note] if note else getattr(resolve, "notes", [])  # the CLI's folders (model_paths.py)
    if not [f for f in info["files"] if f[1] not in side_models.SIDE]:  # a CLIP vision file alone is no estimate
        miss = "; ".join(f"{m[0]}: {m[4]}" if m[4] else f"{m[0]} (looked in {_looked(m[3])})"
                         for m in info["missing"] + info["missing_checked"]) \
            or "no loader nodes" + (f" it reads ({', '.join(info['not_followed'])}: not sized)" if info["not_followed"] else "")
        where = getattr(resolve, "where", None) or (str(models_dir) if models_dir else "ComfyUI's model folders"
                                                     if resolve else "(no --models-dir)")
        hint = "" if not models_dir or has_model_folders(models_dir) else \
            " (it has none of checkpoints/, diffusion_models/, text_encoders/, vae/: give your ComfyUI/models folder)"
        raise UserError(f"none of the workflow's model files was found under {where}{hint}: {miss}")
    size = info["size"] or (None, None, 1, 1)
    larger = _larger_image(info, size, width, height)
    w, h = width or size[0], height or size[1]
    assumed, used = None, ("--width/--height" if width and height else "the graph's latent node")
    comps = None
    if ((not w or not h) or larger) and info["input_image"]:  # VAEEncode of an image whose size the graph sets (image_size.py)
        t, (iw, ih, ib, how) = info["input_image"]
        used, assumed = f"{how}, {t}", (f"assumed: {how.split(' (')[0]}" if how.startswith("a square") else None)
        w, h = (iw, ih) if larger else (w or iw, h or ih)
        size = (w, h, size[2], size[3] if info["size"] and not larger else ib)
    if (not w or not h) and default_size:
        used, size = "the size given beside the workflow", default_size
        w, h = w or size[0], h or size[1]
    if (not w or not h) and info["from_input"]:  # VAEEncode of a loaded image, ...: the family's native size
        comps = components(info["files"])
        fam = next((c.get("family") for c in comps if c["role"] == "diffusion_model"), None)
        if fam in spec.NATIVE_SIZE:
            native = f"the native size of {spec.family(fam)['name']}"
            used, assumed = f"{native}; --width/--height for another", f"assumed: {native}"
            if w or h:  # one typed flag: say which dimension came from where
                used = f"{'width from --width' if w else 'height from --height'}, " \
                       f"{'height' if w else 'width'} from {native}"
                assumed = f"{'height' if w else 'width'} assumed: {native}"
            w, h = w or spec.NATIVE_SIZE[fam][0], h or spec.NATIVE_SIZE[fam][1]
            size = (w, h, size[2] if info["size"] else spec.NATIVE_SIZE[fam][2], size[3])
    if not w or not h:
        raise UserError(NO_SIZE.format(no_size))
    f = frames if frames is not None else size[2] or 1  # a typed --frames 1 / --batch 1 overrides the graph
    b = batch if batch is not None else size[3] or 1
    pol = dict(policy or {})
    if info["weights_dtype"] and not pol.get("weights_dtype"):
        pol["weights_dtype"] = info["weights_dtype"]
    if info["tiled"]:
        if pol.get("vae_decode", "auto") == "auto":
            pol["vae_decode"] = "tiled"
        pol["tile"] = dict(info["tiled"], **(pol.get("tile") or {}))  # a typed --vae-tile wins over the node's tile_size
    if info["cpu_te"]:
        pol["text_encoders"] = "cpu"
    pol["conds"] = pol.get("conds") or info["conds"]  # a DualCFGGuider's three conditionings (dual_cfg.py)
    pol["i2v_encode"] = pol.get("i2v_encode") or info["i2v_encode"]  # the start image's VAE encode (i2v_nodes.py)
    if info["audio_fps"] and not pol.get("audio_fps"):
        pol["audio_fps"] = info["audio_fps"]
    if info["text_tokens"] and not pol.get("text_tokens"):  # Hunyuan3D's multi-view context (hunyuan3d.node_note)
        pol["text_tokens"] = info["text_tokens"]
    pol["ref_images"] = info["ref_images"] if pol.get("ref_images") is None else pol["ref_images"]  # ref_latents.py
    if info.get("vae_options") and not pol.get("vae_options"):  # VAEDecodeHunyuan3D's num_chunks, octree_resolution
        pol["vae_options"] = info["vae_options"]
    pol["side_models"], side_notes = side_models.read(info["side"], pol)  # a ControlNet, ... in its phase
    pol["control_samplers"] = info["control_samplers"]  # each sampler's ControlNets: one set counted (control_feeds.py)
    sets_note = control_feeds.note(info["control_samplers"], pol["side_models"])
    side_notes += sets_note + control_feeds.patch_note(info["control_samplers"], pol["side_models"])  # est65
    comps, other = pipelines.other_vaes(comps or components(info["files"]))  # a preprocessor's VAE beside the model's
    info["notes"] += other
    stage1 = (w, h)
    w, h = _two_stage(info, comps, w, h, pol, used)
    own_sizes = info["control_sizes"] and not (width or height) and f == 1  # each sampler's own size, the graph's used
    # a typed --batch is every sampler's (as it overrides the graph's latent nodes')
    runs_at = [(s and (*s[:2], b) if batch is not None else s, label) for s, label in info["control_sizes"] or ()]
    if own_sizes:
        pol["control_sizes"] = {"of": (w, h, b), "samplers": [s for s, _ in runs_at],  # cfg 1: one conditioning
                                "single": sampler_cfg.single(info["sampler_cfgs"]) if cfg is None and info["cfg"] else None}
    if info["pixel_upscale"]:  # ImageUpscaleWithModel: a phase of its own on the image it receives (pixel_upscale.py)
        model, img, how, step_notes = pixel_upscale.step(*info["pixel_upscale"], (w, h), f, b,
                                                         typed_size=width is not None or height is not None,
                                                         typed_batch=frames is not None or batch is not None)
        pol["pixel_upscale"] = pixel_upscale.phase_inputs(model, img, how, side_notes)
        pol["pixel_upscale"]["held"] = pixel_upscale.held(info["pixel_upscale"][0])  # host RAM: each loaded file (arch65)
        side_notes += pixel_upscale.held_line(pol["pixel_upscale"]["held"])
        side_notes += step_notes
    families.check_vae_channels(comps)  # as `estimate FILE...`: the node's open-graph route shows it as text
    est = formula.estimate(comps, w, h, f, b,
                           cfg=("on" if info["cfg"] else info["cfg"]) if cfg is None else cfg, policy=pol)  # cfg > 1: CFG on
    if own_sizes:  # each sampler's size and the one whose run the sample phase is (act65); it names each sampler's
        # ControlNets too, so it stands in for the sets' line
        chosen = (est["breakdown"].get("sample") or {}).get("sampler")
        runs = control_feeds.size_note(info["control_samplers"], runs_at, pol["side_models"], (w, h, b), chosen)
        est["assumptions"] = control_feeds.how_line(est, chosen, runs_at)  # the counted run's tokens
        at = side_notes.index(sets_note[0]) if runs and sets_note else len(side_notes)
        side_notes[at:at + bool(runs and sets_note)] = runs
    est["assumptions"] += side_notes + info["notes"] + [f"{m[0]}: {m[4]} ({m[1]}.{m[2]})" if m[4] else
                                           f"not found under the models folder: {m[0]} ({m[1]}.{m[2]})" for m in info["missing"]]
    est["assumptions"] += [f"{t} takes its latent size from {takes}, not a widget: estimated at {w}x{h}"
                           + (f", {f} frames" if f > 1 else "") + f" ({used})" for t, takes in info["from_input"]]
    est["assumptions"] += latent_custom.lines(info["unknown"], w, h, used)
    est["assumptions"] += [f"{t} makes a {spec.family(fam)['name']} latent ({fam}); the diffusion model is "
                           f"{est['family']}: the estimate follows the model file"
                           for t, fam in info["latent_families"].items() if fam != est["family"]]
    counted = {m["owner"] for m in pol["side_models"]}  # a ControlNet, ... counted: listed with the files (rev63 #11)
    est["workflow"] = {"files": list(dict.fromkeys([os.path.basename(p) for p, _, _ in info["files"]] + [
                           os.path.basename(p) for p, t, _ in info["side"] if f"{os.path.basename(p)} ({t})" in counted])),
                       "missing": [m[0] for m in info["missing"]],
                       "missing_where": [{"name": m[0], "loader": f"{m[1]}.{m[2]}", "folders": list(m[3]),
                                          "why": m[4] or "not found"} for m in info["missing"]],
                       "missing_not_counted": [m[0] for m in info["missing_checked"]],
                       "models_dir": str(models_dir) if models_dir else None,  # the first; searched: every one (model_paths)
                       "searched": getattr(resolve, "folders", None) or ([str(models_dir)] if models_dir else []),
                       "size_from_graph": list(info["size"]) if info["size"] else None, "cfg_from_graph": info["cfg"],
                       "tiled_decode": info["tiled"], "latent_families": info["latent_families"],
                       "size_from_input": [t for t, _ in info["from_input"]],
                       "size_assumed": assumed,  # the header's note beside the size
                       "size_uncertain": [{"node": lb, "type": t} for lb, t in info["unknown"]],  # latent_custom.py
                       "size_given_used": used == "the size given beside the workflow",  # default_size: the route's "body"
                       "stage1": list(stage1) if stage1 != (w, h) else None,  # LTX-2's two stages: the size upscaled from
                       "side_models": [{k: m[k] for k in ("owner", "loader", "phase", "weights")} for m in pol["side_models"]]}
    return est


def tiers(est: dict) -> list[dict]:
    """The verdict on each common card tier (spec.CARD_TIERS_GB), as ComfyUI would run on it. outcome judges VRAM and
    the host RAM the estimate was given (host_ram_assumed); vram_outcome judges VRAM alone, as on a host whose RAM holds
    ram_needed (what the run keeps in RAM on that tier; ram_hard_need of it when the model files' pages may be dropped),
    so a shared workflow's requirement can be judged again on another machine."""
    from .verdict import label
    out = []
    for gb in spec.CARD_TIERS_GB:
        budget = spec.card_bytes(gb)
        e = formula.judge(_copy(est), budget)
        v = formula.judge(_copy(est, host_ram=None), budget)  # no RAM figure: never short
        r = e.get("host_ram") or {}
        out.append({"gb": gb, "verdict": e["verdict"], "outcome": e["outcome"]["status"], "offloaded": e["outcome"]["offloaded"], "peak": e["peak"], "peak_phase": e["peak_phase"],
                    "decode": (e.get("vae") or {}).get("how"), "vram_outcome": v["outcome"]["status"],
                    "vram_offloaded": v["outcome"]["offloaded"], "ram_needed": r.get("needed"), "ram_hard_need": r.get("hard_need"),
                    "ram_verdict": r.get("verdict"), "label": label(e["outcome"]["status"], e["outcome"]["offloaded"]),
                    "vram_label": label(v["outcome"]["status"], v["outcome"]["offloaded"])})
    return out


def host_ram_assumed(est: dict) -> dict:
    """The host RAM the tiers' outcome assumed and where the figure came from, and Dynamic VRAM as judged."""
    pol, d = est["policy"], est.get("dynamic_vram") or {}
    ram = pol.get("host_ram")
    src = pol.get("host_ram_source") or ("the estimating machine's available RAM" if ram else "none: RAM not judged")
    return {"available": int(ram) if ram else None, "source": src,
            "dynamic_vram": {"enabled": bool(d.get("enabled")), "source": d.get("source")}}


def _copy(est, **policy):
    c = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v) for k, v in est.items()}
    c["policy"] = dict(est["policy"], _no_knobs=True, **policy)
    c["_ctx"] = dict(est["_ctx"], policy=c["policy"])
    return c


def metadata(est: dict, tiers_of: dict | None = None) -> dict:
    """What goes into extra.gpu_garden.memory; tiers_of: the estimate the card tiers are judged from, where not est
    (a --cpu host's route: a card's, estimate_routes). A card sized on such a host (vram_gb set) is the tiers' one
    too, not the host's fp32 figures' (aud67a F11), also where those fit no card (rev67h F6: est's None); with no card
    asked for (no budget), the CPU run sizes none (None). size_uncertain (latent_custom.py), where there is one: a shared
    workflow carries the caveat its CLI report shows (issue 15 item 5)."""
    card = tiers_of["min_vram_gb"] if tiers_of and est.get("budget") else est["min_vram_gb"]
    return {"peak": est["peak"], "peak_phase": est["peak_phase"], "peak_torch": est["peak_torch"],
            "peak_device": est["peak_device"], "min_vram_gb": card, "family": est["family"],
            "width": est["width"], "height": est["height"], "frames": est["frames"], "batch": est["batch"],
            "phases": est["phases"], "tiers": tiers(tiers_of or est), "files": est["workflow"]["files"],
            "host_ram_assumed": host_ram_assumed(est), "estimated_by": "gpu-garden estimate --workflow",
            **({"verdict_caveat": est["verdict_caveat"]} if est.get("verdict_caveat") else {}),  # an unknown architecture
            **({"size_uncertain": est["workflow"]["size_uncertain"]} if est["workflow"].get("size_uncertain") else {})}
