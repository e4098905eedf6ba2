"""Legacy group nodes (the frontend's "Convert to Group Node", before subgraphs): a UI workflow holds an instance of type
"workflow>NAME" ("workflow/NAME" in older files) and its inner nodes in extra.groupNodes[NAME].nodes, each with the
widgets_values saved when the group was made. Frontend 1.35.9 still loads and runs them (ExecutableGroupNodeDTO), so a
graph built with one names its loaders and latent only there (rev62 F6).

The instance's own widgets are the inner nodes' widgets in inner-node order (groupNode's processWidgetInputs, one per
widget input, a seed's control_after_generate beside it): where the instance holds exactly as many values as the inner
nodes saved, they are split in that order and read as the inner nodes' (the values the group node shows, which its
user edits); otherwise (an input converted or fed by a primitive inside) the definition's saved values are read and
the answer says so. Links inside a group are not followed: its inner nodes are read for their widgets alone."""

PREFIXES = ("workflow>", "workflow/")


def expand(wf: dict) -> tuple[dict, list]:
    """(wf with each legacy group-node instance replaced by its inner nodes, [notes]); wf itself when it has none."""
    defs = (wf.get("extra") or {}).get("groupNodes") if isinstance(wf.get("extra"), dict) else None
    if not isinstance(defs, dict) or not defs:
        return wf, []
    out, notes, next_id = [], [], _max_id(wf) + 1
    for n in wf["nodes"]:
        t = n.get("type") if isinstance(n, dict) else None
        name = next((t[len(p):] for p in PREFIXES if isinstance(t, str) and t.startswith(p)), None)
        inner = (defs.get(name) or {}).get("nodes") if name is not None and isinstance(defs.get(name), dict) else None
        if not isinstance(inner, list):
            out.append(n)
            continue
        inner = [m for m in inner if isinstance(m, dict)]
        saved = [m.get("widgets_values") if isinstance(m.get("widgets_values"), list) else [] for m in inner]
        mine = n.get("widgets_values")
        split = isinstance(mine, list) and len(mine) == sum(map(len, saved))
        at = 0
        for m, values in zip(inner, saved):
            own = mine[at:at + len(values)] if split else values
            at += len(values)
            # a definition's outputs carry no links of the graph's: left out, so reach.feeding_nothing does not drop the node
            inner_node = {k: v for k, v in m.items() if k != "outputs"}
            out.append(dict(inner_node, id=next_id, mode=n.get("mode", 0) if m.get("mode") in (None, 0) else m["mode"],
                            widgets_values=list(own)))
            next_id += 1
        notes.append(f"group node {t}: its {len(inner)} inner nodes read "
                     + ("with the values the group node holds" if split else
                        "with the values saved in its definition (the group node's own values did not map one to one)")
                     + "; links inside it are not followed")
    return (dict(wf, nodes=out), notes) if notes else (wf, [])


def _max_id(wf) -> int:
    ids = [n.get("id") for n in wf.get("nodes") or [] if isinstance(n, dict)]
    return max((i for i in ids if isinstance(i, int) and not isinstance(i, bool)), default=0)
