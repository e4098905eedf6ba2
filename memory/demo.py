"""`gpu-garden demo`: what the nodes would show, on embedded data and this machine's live memory:
the budget (live), an estimate for a FLUX.1-dev workflow (bundled layouts) and a triaged sample ComfyUI log."""
import json

from .estimate import formula as estimate
from .budget import probe
from .triage import engine as triage

SECTIONS = (("budget", probe), ("estimate", estimate), ("triage", triage))


def run_cli(args) -> int:
    if args.json:
        print(json.dumps({name: mod.demo_section(as_json=True) for name, mod in SECTIONS}, indent=2, default=str))
        return 0
    for name, mod in SECTIONS:
        print(f"== {name} ==")
        print(mod.demo_section())
        print()
    return 0
