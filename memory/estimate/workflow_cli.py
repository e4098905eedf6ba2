"""`gpu-garden estimate --workflow WF.json --models-dir DIR [--write OUT]`: the command line's side of the workflow
estimate (workflow.py reads and estimates; this prints the report, the per-tier line and writes the requirement)."""
import json
import sys
from pathlib import Path

from . import formula, input_image, model_paths
from .model_files import Unusable, find_file
from .workflow import estimate_workflow, host_ram_assumed, load, models_folder, tiers
from .workflow_write import API_WRITE, _Incomplete, check_write_target, write
from ..errors import UserError
from ..units import GiB, fmt_bytes


def images(args):
    """The reader of a LoadImage node's image size: in --input-dir, else in the input folder beside the models folder
    (ComfyUI/input next to ComfyUI/models); None when there is neither (the image's size is then not known, said)."""
    given = getattr(args, "input_dir", None)
    if given and not Path(given).is_dir():
        raise UserError(f"--input-dir {given}: no such folder (give your ComfyUI/input folder)")
    d = Path(given) if given else input_image.beside_models(models_folder(args.models_dir[0])[0])
    if d is None:
        return None
    out = d.parent / "output"
    return input_image.folder_reader(d, out if out.is_dir() else None)


def run_cli(args) -> int:
    from . import report, verdict
    if not getattr(args, "models_dir", None):
        report._usage_error(args, "--models-dir is required with --workflow (your ComfyUI/models folder)")
    wf = load(args.workflow)
    target = check_write_target(args.write) if getattr(args, "write", None) else None
    if target is not None and not isinstance(wf.get("nodes"), list):
        raise UserError(API_WRITE)  # before anything is estimated
    pol = report.policy_from_args(args)
    budget, label = report._budget(args)
    pol["budget"] = budget
    ram = getattr(args, "ram", None)
    pol["host_ram"] = int(ram * GiB) if ram else verdict.host_available_ram()
    pol["host_ram_source"] = ("--ram" if ram else None if not pol["host_ram"] else "this machine's available RAM"
                              + (" when written" if getattr(args, "write", None) else ""))  # the workflow keeps it
    resolve, where, notes = model_paths.resolver(args.models_dir, models_folder, find_file, Unusable)
    resolve.where, resolve.notes = where, notes  # said where nothing was found; the notes head the assumptions
    est = estimate_workflow(wf, models_folder(args.models_dir[0])[0], args.width, args.height,
                            args.frames, args.batch, pol, resolve=resolve,
                            cfg=report.cfg_from_args(args), read_image=images(args))
    formula.judge(est, budget)
    refused = written = None
    if target is not None:
        try:
            written = write(wf, est, target)
        except _Incomplete as exc:
            refused = exc  # the report still prints: it says what is missing
    if args.json:
        out = formula.public(est)
        out["budget_source"] = label
        out["tiers"], out["host_ram_assumed"] = tiers(est), host_ram_assumed(est)
        if written:
            out["written"] = str(written)
        print(json.dumps(out, indent=2, default=str))
    else:
        print(report.format_text(est, label))
        if est["outcome"]["status"] == "incomplete":
            print("per card tier: not judged (the estimate is incomplete)")
        else:
            ts, ram = tiers(est), host_ram_assumed(est)
            print("per card tier: " + verdict.tier_line(ts)
                  + (f" (host RAM {fmt_bytes(ram['available'])}, {ram['source']})" if ram["available"] else ""))
            short = [dict(t, vram_label=f"{t['vram_label']} (needs {fmt_bytes(t['ram_hard_need'])} of RAM)")
                     for t in ts if t["vram_outcome"] != t["outcome"]]
            if short:
                print("  with enough host RAM: " + verdict.tier_line(short, "vram_label"))
        if written:  # its own line: inside the verdict's budget label it read as the budget's source (ux56)
            print(f"written to {written} (extra.gpu_garden.memory)")
    if refused:
        print(f"gpu-garden estimate: {refused}", file=sys.stderr)
    return verdict.exit_code(est)
