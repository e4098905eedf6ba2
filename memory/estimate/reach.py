"""Which nodes of a workflow run: ComfyUI 0.8.0 runs only the output nodes and what they reach through their inputs
(execution.py:712-713 adds each output to the ExecutionList; comfy_execution/graph.py:139-165 add_node walks back
through every linked input). A model a loader in a branch no output needs names, or a size such a branch sets, is
never loaded or sampled (rev63 #1, #7).

UI format: what frontend 1.35.9's graphToPrompt puts into the prompt, walked back from the output nodes: a muted node
(mode 2) is left out and ends the walk; a bypassed node (mode 4) is left out and its output resolves to its matching
input (ExecutableNodeDTO.resolveOutput: the input at the output's index when its type matches, else the first input of
the output's type), so the walk goes on through that input alone (a bypassed Apply ControlNet passes its conditioning,
not its ControlNet); a Reroute passes its input; a subgraph instance's outputs lead to the inner nodes linked to the
subgraph's output node, an inner link from the subgraph's input node to its instances' inputs of that name; a legacy
group-node instance (group_nodes.py) is one node here, read whole where it is reached.
The output nodes: an active node of a known output class (OUTPUT_CLASSES), or one saved with an empty outputs list
(the frontend saves a node's outputs, [] for a save node: a custom node's save) whose class is not a known non-output
(NON_OUTPUT); a node saved without an outputs list (a hand-made graph) is no output node by itself, nor is one with
inputs none of which is linked (ComfyUI's validation refuses it). A graph with no output node at all (ComfyUI refuses it: "Prompt has no outputs") is read as before.

API format: the frontend still puts an active node connected to nothing into the prompt, which ComfyUI never runs:
the outputs are the nodes of a known output class and those nothing consumes whose class is not a known non-output (a
custom node's output is kept); the nodes they reach run, the others are left out. A prompt with no output (a hand-made
part of a graph) is read whole.

Linear time: each node is entered once, each bypassed node's slot once; malformed links and cycles end the walk."""
from . import group_nodes
from .links import is_key
from .latent_nodes import LATENT_NODES
from .model_files import CHECKED, LOADERS, NOT_FOLLOWED
from .sampler_nodes import SAMPLERS
from .side_models import SIDE

# output nodes that list outputs (is_output_node=True with outputs): ComfyUI 0.8.0 comfy_api_nodes/nodes_tripo.py:89,
# 175, 274, 384, 441, 477, 510, 571 (model_file, model task_id ...); the save and preview nodes list none
# (SaveImage nodes.py:1600, PreviewAny comfy_extras/nodes_preview_any.py:16, SaveGLB comfy_extras/nodes_hunyuan3d.py:622,
# SaveVideo comfy_extras/nodes_video.py:82, SaveAudio comfy_extras/nodes_audio.py:132), so they are outputs by that rule
OUTPUT_CLASSES = frozenset({"TripoTextToModelNode", "TripoImageToModelNode", "TripoMultiviewToModelNode", "TripoTextureNode",
                            "TripoRefineNode", "TripoRigNode", "TripoRetargetNode", "TripoConversionNode", "SaveImage",
                            "PreviewImage", "PreviewAny", "SaveGLB", "SaveVideo", "SaveWEBM", "SaveAudio",
                            "SaveAnimatedWEBP", "SaveAnimatedPNG", "SaveLatent"})
# classes that are never output nodes (ComfyUI 0.8.0: no OUTPUT_NODE / is_output_node): the loaders the estimate reads,
# the latent nodes, samplers, encode/decode and conditioning nodes; the frontend's virtual nodes
NON_OUTPUT = frozenset(LOADERS) | frozenset(CHECKED) | frozenset(LATENT_NODES) | frozenset(SIDE) | frozenset(NOT_FOLLOWED) | \
    frozenset(SAMPLERS) | {"VAEDecode", "VAEDecodeTiled", "VAEEncode", "VAEEncodeTiled", "CLIPTextEncode",
    "ControlNetApply", "ControlNetApplyAdvanced", "ControlNetApplySD3",
    "LTXVLatentUpsampler", "LatentUpscale", "LatentUpscaleBy", "ImageScale", "ImageScaleBy", "LoadImage", "EmptyImage",
    "CLIPVisionEncode", "StyleModelApply", "ModelSamplingSD3", "ModelSamplingFlux", "ModelSamplingAuraFlow",
    "Reroute", "PrimitiveNode", "Note", "MarkdownNote", *("PrimitiveInt", "PrimitiveFloat", "PrimitiveBoolean",
                                                          "PrimitiveString", "PrimitiveStringMultiline")}


def _non_output(t) -> bool:
    return isinstance(t, str) and (t in NON_OUTPUT or "Loader" in t)


def _list(x) -> list:
    return [i for i in x if isinstance(i, dict)] if isinstance(x, list) else []


def api(prompt: dict):
    """The ids (str) of an API prompt's nodes that run; None when no node is an output (read whole)."""
    ids = api_nodes(prompt)
    used = {str(v[0]) for n in ids.values() if isinstance(n.get("inputs"), dict)
            for v in n["inputs"].values() if isinstance(v, list) and len(v) == 2 and is_key(v[0])}
    todo = [k for k, n in ids.items() if isinstance(n.get("class_type"), str) and (
        n["class_type"] in OUTPUT_CLASSES or k not in used and not _non_output(n["class_type"]))]
    return walk_api(ids, todo) if todo else None


def api_nodes(prompt: dict) -> dict:
    """{id (str): node} of an API prompt's nodes."""
    return {str(k): n for k, n in prompt.items() if isinstance(n, dict) and "class_type" in n}


def walk_api(ids: dict, todo: list, follow=None) -> set:
    """The ids (str) reached from the ids in todo through their linked inputs. follow(node) -> the names of the inputs
    to go on through (None: every input); each node once."""
    seen = set()
    while todo:
        k = todo.pop()
        if k in seen or k not in ids:
            continue
        seen.add(k)
        ins = ids[k].get("inputs")
        names = follow(ids[k]) if follow else None
        for name, v in ins.items() if isinstance(ins, dict) else ():
            if (names is None or name in names) and isinstance(v, list) and len(v) == 2 and is_key(v[0]) \
                    and str(v[0]) not in seen:
                todo.append(str(v[0]))
    return seen


class Graphs:
    """A UI workflow's top graph and subgraph definitions: their nodes and links by id, each subgraph's instances."""

    def __init__(self, wf):
        defs = wf.get("definitions") if isinstance(wf.get("definitions"), dict) else {}
        subs = [s for s in _list(defs.get("subgraphs")) if isinstance(s.get("nodes"), list) and is_key(s.get("id"))]
        self.subs = {s["id"]: s for s in subs}
        self.groups = (wf.get("extra") or {}).get("groupNodes") if isinstance(wf.get("extra"), dict) else None
        self.groups = self.groups if isinstance(self.groups, dict) else {}
        self.nodes, self.links, self.instances = {}, {}, {}
        for gid, g in [(None, wf)] + [(s["id"], s) for s in subs]:
            self.nodes[gid] = {n["id"]: n for n in _list(g.get("nodes")) if is_key(n.get("id"))}
            lk = {}
            for x in g.get("links") if isinstance(g.get("links"), list) else ():
                if isinstance(x, list) and len(x) >= 5 and is_key(x[0]):
                    lk[x[0]] = (x[1], x[2], x[3], x[4], x[5] if len(x) > 5 else None)
                elif isinstance(x, dict) and is_key(x.get("id")):
                    lk[x["id"]] = (x.get("origin_id"), x.get("origin_slot"), x.get("target_id"), x.get("target_slot"), x.get("type"))
            self.links[gid] = lk
            for n in self.nodes[gid].values():
                if is_key(n.get("type")) and n["type"] in self.subs:
                    self.instances.setdefault(n["type"], []).append((gid, n))

    def runs(self):
        """The graphs whose nodes may run: the top one, and a subgraph with an active instance in a graph that runs."""
        out, grew = {None}, True
        while grew:
            grew = False
            for sid, inst in self.instances.items():
                if sid not in out and any(g in out and n.get("mode") not in (2, 4) for g, n in inst):
                    out.add(sid)
                    grew = True
        return out

    def is_output(self, n) -> bool:
        t = n.get("type")
        if isinstance(t, str) and t in OUTPUT_CLASSES:
            return True
        if is_key(t) and t in self.subs or _non_output(t):
            return False
        name = next((t[len(p):] for p in group_nodes.PREFIXES if isinstance(t, str) and t.startswith(p)), None)
        inner = self.groups.get(name) if name is not None else None
        if isinstance(inner, dict) and isinstance(inner.get("nodes"), list):  # a legacy group: an output inside it
            return any(self.is_output(m) for m in _list(inner["nodes"]))
        return n.get("outputs") == []  # saved with no outputs (a save node); a node saved without the key says nothing


def ui(wf: dict):
    """{(graph id, node id)} of a UI workflow's nodes that run (graph id None: the top graph, else a subgraph's id);
    None when the graph has no output node (read whole)."""
    g = Graphs(wf)
    runs = g.runs()
    todo = [(gid, n) for gid in runs for n in g.nodes.get(gid, {}).values()
            if n.get("mode") not in (2, 4) and g.is_output(n) and _fed(n)]
    return walk_ui(g, todo) if todo else None


def walk_ui(g, todo: list, follow=None) -> set:
    """{(graph id, node id)} reached from the nodes in todo [(graph id, node)] through their linked inputs, as ComfyUI
    runs them (the module's list: muted ends, bypassed passes, Reroutes, subgraphs). follow(node) -> the names of the
    inputs to go on through (None: every input; a subgraph instance's inner nodes are entered then)."""
    seen, passed = set(), set()

    def arrive(gid, link):
        """The node a link into a node of graph gid comes from, entered (or passed through when bypassed)."""
        stack = [(gid, link)]
        while stack:
            gid, link = stack.pop()
            got = g.links.get(gid, {}).get(link) if is_key(link) else None
            if got is None:
                continue
            origin, slot, _, _, ltype = got
            sg = g.subs.get(gid)
            io = sg.get("inputNode") if sg is not None and isinstance(sg.get("inputNode"), dict) else {}
            if sg is not None and origin == io.get("id", -10):  # the subgraph's input: its instances' input of that name
                ins = _list(sg.get("inputs"))
                name = ins[slot].get("name") if isinstance(slot, int) and 0 <= slot < len(ins) else None
                for pg, inst in g.instances.get(gid, ()):
                    for i in _list(inst.get("inputs")):
                        if name is not None and i.get("name") == name and i.get("link") is not None:
                            stack.append((pg, i["link"]))
                continue
            m = g.nodes.get(gid, {}).get(origin) if is_key(origin) else None
            if m is None or m.get("mode") == 2:
                continue
            if m.get("mode") == 4:  # bypassed: its matching input
                if (gid, origin, slot) in passed:
                    continue
                passed.add((gid, origin, slot))
                i = _bypass_input(g, gid, m, slot, ltype)
                if i is not None:
                    stack.append((gid, i["link"]))
                continue
            todo.append((gid, m))

    while todo:
        gid, n = todo.pop()
        if (gid, n["id"]) in seen:
            continue
        seen.add((gid, n["id"]))
        names = follow(n) if follow else None
        for i in _list(n.get("inputs")):
            if i.get("link") is not None and (names is None or i.get("name") in names):
                arrive(gid, i["link"])
        sg = g.subs.get(n.get("type")) if is_key(n.get("type")) and names is None else None
        if sg is not None:  # an instance: the inner nodes linked to the subgraph's output node
            out_id = sg["outputNode"].get("id", -20) if isinstance(sg.get("outputNode"), dict) else -20
            for lid, (_, _, target, _, _) in g.links.get(sg["id"], {}).items():
                if target == out_id:
                    arrive(sg["id"], lid)
    return seen


def _fed(n) -> bool:
    """An output node with inputs none of which is linked (a starter template's SaveImage) fails ComfyUI's validation
    (execution.py validate_inputs: a required input missing) and runs nothing: no output."""
    ins = _list(n.get("inputs"))
    return not ins or any(i.get("link") is not None for i in ins)


def _bypass_input(g, gid, m, slot, ltype):
    """The input a bypassed node's output `slot` resolves to (frontend 1.35.9 ExecutableNodeDTO #t), or None."""
    ins = _list(m.get("inputs"))
    outs = _list(m.get("outputs"))
    links = g.links.get(gid, {})

    def typ(i):
        return i.get("type") if i.get("type") else (links.get(i.get("link")) or (None,) * 5)[4] if is_key(i.get("link")) else None

    t = (outs[slot].get("type") if isinstance(slot, int) and 0 <= slot < len(outs) else None) or ltype
    if t in (None, "", "*"):
        k = slot if isinstance(slot, int) and 0 <= slot < len(ins) else 0
        pick = ins[k] if ins else None
    elif isinstance(slot, int) and 0 <= slot < len(ins) and typ(ins[slot]) == t:
        pick = ins[slot]
    else:
        pick = next((i for i in ins if typ(i) == t), None)
    return pick if pick is not None and pick.get("link") is not None else None


def feeding_nothing(wf: dict) -> set:
    """{(graph id, node id)} of a UI workflow's nodes whose every output feeds nothing: no link, or only links into
    Reroutes that themselves feed nothing (rev62 F5, the reading of a graph with no output node). A link id the graph's
    links do not hold is taken as feeding something (a hand-made graph), as before."""
    g, out = Graphs(wf), set()
    for gid, nodes in g.nodes.items():
        links, dead = g.links.get(gid, {}), {}

        def is_dead(n, depth=0):
            outs = n.get("outputs")
            if not (isinstance(outs, list) and outs and all(isinstance(o, dict) for o in outs)):
                return False
            k = n["id"]
            if k in dead:
                return dead[k]
            dead[k] = False  # a cycle of Reroutes: taken as feeding something
            for o in outs:
                ls = o.get("links")
                if ls and not isinstance(ls, list):
                    return False
                for lid in ls or ():
                    got = links.get(lid) if is_key(lid) else None
                    m = nodes.get(got[2]) if got is not None and is_key(got[2]) else None
                    if m is None or m.get("type") != "Reroute" or m.get("mode") in (2, 4) or depth > 64 \
                            or not is_dead(m, depth + 1):
                        return False
            dead[k] = True
            return True

        out |= {(gid, k) for k, n in nodes.items() if is_dead(n)}
    return out
