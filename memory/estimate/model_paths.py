"""The CLI's model search paths as ComfyUI builds them (aud67a F5): every --models-dir in the order given (a ComfyUI
folder: its models/ child, workflow.models_folder), then the folders an extra_model_paths.yaml beside them adds.

ComfyUI 0.8.0 reads extra_model_paths.yaml from its own folder (main.py) with utils/extra_config.py
load_extra_path_config: per top-level entry, base_path (~ and $VARS expanded; relative: to the yaml's folder), is_default
(the entry's paths go first, folder_paths.add_model_folder_path), then one key per models folder whose value holds one
path a line (relative: to base_path, else to the yaml's folder). Folder names pass through folder_paths.map_legacy
(folder_paths.py:97-100: unet -> diffusion_models, clip -> text_encoders), as the node route's folder_paths lookups do."""
import os
from pathlib import Path

from ..errors import UserError

YAML = "extra_model_paths.yaml"
LEGACY = {"unet": "diffusion_models", "clip": "text_encoders"}  # folder_paths.map_legacy (0.8.0 folder_paths.py:97)


def canonical(folder: str) -> str:
    return LEGACY.get(folder, folder)


def read_yaml(path: Path) -> dict:
    """{canonical folder: ([default paths], [other paths])} from one extra_model_paths.yaml, as load_extra_path_config."""
    try:
        import yaml
    except ImportError:
        raise UserError(f"{path}: reading it needs PyYAML (pip install pyyaml), as ComfyUI does") from None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{path}: not read ({str(exc).splitlines()[0][:200]})") from None
    out, here = {}, path.resolve().parent
    for conf in config.values() if isinstance(config, dict) else ():
        if not isinstance(conf, dict):
            continue
        conf = dict(conf)
        base = conf.pop("base_path", None)
        if base is not None:
            base = os.path.expandvars(os.path.expanduser(str(base)))
            base = base if os.path.isabs(base) else os.path.abspath(os.path.join(here, base))
        default = bool(conf.pop("is_default", False))
        for folder, value in conf.items():
            for line in str(value).split("\n") if value is not None else ():
                if not line:
                    continue
                full = os.path.join(base, line) if base else line if os.path.isabs(line) else os.path.join(here, line)
                out.setdefault(canonical(str(folder)), ([], []))[0 if default else 1].append(Path(os.path.normpath(full)))
    return out


def resolver(dirs, models_folder, find_file, unusable_exc):
    """(resolve(folders, name) -> path or None, where: the folders it looks in, for the error, notes) over the given
    --models-dir folders and the extra_model_paths.yaml in each (or in the ComfyUI folder above a models folder)."""
    roots, notes, extra = [], [], {}
    for d in dirs:
        root, note = models_folder(d)
        roots.append(root)
        notes += [note] if note else []
        for y in dict.fromkeys((Path(d) / YAML, root.parent / YAML)):
            if y.is_file():
                got = read_yaml(y)
                notes.append(f"{y} read: " + ", ".join(f"{f}/ in {len(a) + len(b)} more folder(s)" for f, (a, b) in got.items()))
                for f, (first, rest) in got.items():
                    e = extra.setdefault(f, [])
                    e[:0], e[len(e):] = first, rest

    def resolve(folders, name):
        bases = [r for r in roots] + [p for f in dict.fromkeys(canonical(f) for f in folders) for p in extra.get(f, ())]
        first = None
        for b in bases:
            try:
                p = find_file(b, folders, name) if b in roots else find_file(b.parent, [b.name], name)
            except unusable_exc as exc:
                first = first or exc
                continue
            if p:
                return p
        if first:
            raise first
        return None

    where = ", ".join(str(r) for r in roots) + (" and the folders of " + YAML if extra else "")
    return resolve, where, notes
