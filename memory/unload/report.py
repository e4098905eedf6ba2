"""What unloading text encoders freed, judged from two snapshots taken around it.

A snapshot is plain data (nodes/unload.py takes it from ComfyUI's model management and the torch
allocator; tests write it by hand):

    {"models": [{"key", "name", "device", "bytes", "total_bytes", "is_text_encoder"}],
     "devices": {"cuda:0": {"torch_allocated", "torch_reserved", "free", "total"}},   # null where unknown
     "host_available": int | None}

`bytes` is what ComfyUI counts as loaded on `device` (LoadedModel.model_loaded_memory()). A model
missing from the second snapshot has left ComfyUI's loaded-model list, so it holds nothing there.
Nothing here is assumed: every number in the report is a difference of two measured numbers.
"""
from ..budget.common import model_label
from ..units import fmt_bytes

DEVICE_COUNTERS = ("torch_allocated", "torch_reserved", "free")


def _by_key(snapshot: dict) -> dict:
    return {m["key"]: m for m in snapshot.get("models", ())}


def _diff(a, b):
    return None if a is None or b is None else a - b


def _model_row(key, before, after, targeted):
    src = before or after
    b = int(before["bytes"]) if before else 0
    a = int(after["bytes"]) if after else 0
    row = {"key": key, "name": src["name"], "label": model_label(src), "device": src["device"],
           "bytes_before": b, "bytes_after": a, "freed": b - a, "registered_after": after is not None, "is_text_encoder": bool(src.get("is_text_encoder"))}
    if targeted:
        if b == 0:
            row["status"] = "not_loaded"
        elif a == 0:
            row["status"] = "left_device"
        elif a < b:
            row["status"] = "reduced"
        else:
            row["status"] = "unchanged"
    return row


def build(before: dict, after: dict, targets=(), *, mode: str = "offload", strategy: str = "classic",
          notes=()) -> dict:
    """The report of one unload: per target model, per other model, per device, and a summary line."""
    targets = set(targets)
    b_models, a_models = _by_key(before), _by_key(after)
    keys = list(b_models) + [k for k in a_models if k not in b_models]
    rows = [_model_row(k, b_models.get(k), a_models.get(k), k in targets) for k in keys]
    target_rows = [r for r in rows if r["key"] in targets]
    other_rows = [r for r in rows if r["key"] not in targets]

    device_names = []
    for r in rows:
        if r["device"] not in device_names:
            device_names.append(r["device"])
    for d in list(before.get("devices", {})) + list(after.get("devices", {})):
        if d not in device_names:
            device_names.append(d)

    devices = []
    for d in device_names:
        lb = sum(r["bytes_before"] for r in rows if r["device"] == d)
        la = sum(r["bytes_after"] for r in rows if r["device"] == d)
        row = {"device": d, "loaded_before": lb, "loaded_after": la, "freed": lb - la}
        cb, ca = before.get("devices", {}).get(d, {}), after.get("devices", {}).get(d, {})
        for c in DEVICE_COUNTERS:
            row[c + "_before"], row[c + "_after"] = cb.get(c), ca.get(c)
        row["torch_allocated_freed"] = _diff(row["torch_allocated_before"], row["torch_allocated_after"])
        row["torch_reserved_freed"] = _diff(row["torch_reserved_before"], row["torch_reserved_after"])
        row["free_gained"] = _diff(row["free_after"], row["free_before"])
        devices.append(row)

    others_changed = [r for r in other_rows if r["bytes_after"] != r["bytes_before"]]
    report = {
        "mode": mode,
        "strategy": strategy,
        "targets": target_rows,
        "others": other_rows,
        "devices": devices,
        "freed_bytes": sum(r["freed"] for r in target_rows),
        "left_device": [r["name"] for r in target_rows if r["status"] == "left_device"],
        "reduced": [r["name"] for r in target_rows if r["status"] == "reduced"],
        "others_changed": [r["name"] for r in others_changed],
        "host_available_before": before.get("host_available"),
        "host_available_after": after.get("host_available"),
        "notes": list(notes),
    }
    report["in_host_ram"] = in_host_ram(report)
    report["summary"] = summary(report)
    return report


def in_host_ram(report: dict) -> bool:
    """Every encoder that left ComfyUI's list ran on the CPU (--cpu, a CLIP loader's device "cpu"): it is offloaded
    to the CPU, so ComfyUI forgets it and its weights stay in host RAM; nobody gets memory back."""
    where = {r["device"] for r in report["targets"] if r["freed"]}
    return bool(where) and all(d.split(":")[0] == "cpu" for d in where)


def summary(report: dict) -> str:
    targets = report["targets"]
    if not targets:
        return "No text encoder of this CLIP is loaded: nothing to unload."
    if all(r["status"] == "not_loaded" for r in targets):
        return f"{_names(targets)} already off the device: nothing to unload."
    freed = report["freed_bytes"]
    where = sorted({r["device"] for r in targets if r["freed"]})
    left = [_label(r) for r in targets if r["status"] == "left_device"]  # what a user knows it as, not the class
    reduced = [_label(r) for r in targets if r["status"] == "reduced"]
    if in_host_ram(report):  # "Freed" would claim memory nobody gets back (ux20); "Unregistered" was jargon (web50 10)
        what = (f"{', '.join(left)} {'is' if len(left) == 1 else 'are'} no longer in ComfyUI's list of loaded models"
                if left else f"ComfyUI's list of loaded models counts less of {', '.join(reduced)}")
        return (f"{what} ({_size(freed)} on the CPU, mode {report['mode']}); its weights stay in host RAM, so no memory "
                "is freed.")
    text = f"Freed {_size(freed)}" + (f" on {', '.join(where)}" if where else "") + f" (mode {report['mode']})"
    if left:
        text += f": {', '.join(left)} left the device"
    elif reduced:
        text += f": {', '.join(reduced)} partly left the device"
    else:
        text += ": nothing left the device"
    return text + "."


def _size(n) -> str:
    """fmt_bytes, with nothing as 0 MiB rather than "0 B" (web50 item 10): the unit the other figures of a report use."""
    return "0 MiB" if n == 0 else fmt_bytes(n)


_label = model_label  # the model as a user knows it ("text encoder (SD1 CLIP)"); a snapshot without labels: its name


def _names(rows) -> str:
    return ", ".join(dict.fromkeys(_label(r) for r in rows))


def lines(report: dict) -> list[str]:
    """The report as short lines, for the node's face and the log."""
    out = [report["summary"]]
    for d in report["devices"]:
        if d["loaded_before"] == d["loaded_after"] == 0 and d["torch_allocated_before"] is None:
            continue
        out.append(f"{d['device']}: ComfyUI loaded {_size(d['loaded_before'])} → {_size(d['loaded_after'])}")
        if d["torch_allocated_before"] is not None:
            out.append(f"{d['device']}: torch allocated {_size(d['torch_allocated_before'])} → "
                       f"{_size(d['torch_allocated_after'])}, reserved {_size(d['torch_reserved_before'])} → "
                       f"{_size(d['torch_reserved_after'])}")
        if d["free_before"] is not None and d["free_after"] is not None:
            out.append(f"{d['device']}: free {_size(d['free_before'])} → {_size(d['free_after'])}")
    for r in report["targets"]:
        if r["status"] != "not_loaded":
            out.append(f"- {_label(r)} on {r['device']}: {_size(r['bytes_before'])} → {_size(r['bytes_after'])}")
    kept = [r for r in report["others"] if r["bytes_after"] > 0]
    if kept:
        out.append("kept: " + ", ".join(f"{_label(r)} ({_size(r['bytes_after'])} on {r['device']})" for r in kept))
    if report["others_changed"]:  # build()'s one list of the non-targets that changed, by name; shown by label
        label = {r["name"]: _label(r) for r in report["others"]}
        out.append("also changed: " + ", ".join(dict.fromkeys(label.get(n, n) for n in report["others_changed"])))
    out.extend(report["notes"])
    return out


def text(report: dict) -> str:
    return "\n".join(lines(report))
