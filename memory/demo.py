"""`gpu-garden demo`: what the nodes would show, on embedded data and this machine's live memory."""
import importlib
import json


def _section(module: str, func: str, *args):
    try:
        return getattr(importlib.import_module("." + module, __package__), func)(*args)
    except (ImportError, AttributeError) as exc:
        return {"available": False, "reason": f"not available yet ({exc})"}


def run_cli(args) -> int:
    parts = {
        "budget": _section("probe", "demo_section"),
        "estimate": _section("estimate", "demo_section"),
        "triage": _section("triage", "demo_section"),
    }
    if args.json:
        print(json.dumps({k: v if isinstance(v, dict) else {"text": v} for k, v in parts.items()}, indent=2))
        return 0
    for title, part in parts.items():
        print(f"== {title} ==")
        print(part["reason"] if isinstance(part, dict) else part)
        print()
    return 0
