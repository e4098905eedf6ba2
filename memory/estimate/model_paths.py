"""The CLI's model search paths as ComfyUI builds them (aud67a F5): every --models-dir in the order given (a ComfyUI
folder: its models/ child, workflow.models_folder), then the folders an extra_model_paths.yaml beside them adds.

ComfyUI 0.8.0 reads extra_model_paths.yaml from its own folder (main.py) with utils/extra_config.py
load_extra_path_config: per top-level entry, base_path (~ and $VARS expanded; relative: to the yaml's folder), is_default
(each of the entry's paths put first, folder_paths.add_model_folder_path: before ComfyUI's models/ too), then one key per models folder whose value holds one
path a line (relative: to base_path, else to the yaml's folder). Folder names pass through folder_paths.map_legacy
(folder_paths.py:97-100: unet -> diffusion_models, clip -> text_encoders), as the node route's folder_paths lookups do."""
import os
from pathlib import Path

from ..errors import UserError

YAML = "extra_model_paths.yaml"
# the optional extra of pyproject.toml ([project.optional-dependencies] yaml), as pip installs it
PIP_YAML = "pip install pyyaml (or, in the pack's folder, pip install '.[yaml]')"
LEGACY = {"unet": "diffusion_models", "clip": "text_encoders"}  # folder_paths.map_legacy (0.8.0 folder_paths.py:97)


def canonical(folder: str) -> str:
    return LEGACY.get(folder, folder)


def read_yaml(path: Path) -> list:
    """[(canonical folder, path, is_default)] of one extra_model_paths.yaml in its order, as load_extra_path_config
    reads it: the yaml's folder is os.path.abspath's, a symlinked yaml's links not followed (utils/extra_config.py:9,
    main.py:77: rev67h F8); a value that is not a string (a list, a number) is refused, as ComfyUI fails at start-up
    there (extra_config.py:24 .split: F11)."""
    try:
        import yaml
    except ImportError:
        raise UserError(f"{path}: reading it needs PyYAML, as ComfyUI does: {PIP_YAML}") from None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(f"{path}: not read ({str(exc).splitlines()[0][:200]})") from None
    out, here = [], os.path.dirname(os.path.abspath(path))
    for name, conf in config.items() if isinstance(config, dict) else ():
        if not isinstance(conf, dict):
            continue
        conf = dict(conf)
        base = conf.pop("base_path", None)
        if base is not None:
            base = os.path.expandvars(os.path.expanduser(_text(path, name, "base_path", base)))
            base = base if os.path.isabs(base) else os.path.abspath(os.path.join(here, base))
        default = bool(conf.pop("is_default", False))
        for folder, value in conf.items():
            for line in _text(path, name, folder, value).split("\n"):
                if not line:
                    continue
                full = os.path.join(base, line) if base else line if os.path.isabs(line) else os.path.join(here, line)
                out.append((canonical(str(folder)), Path(os.path.normpath(full)), default))
    return out


def _text(path, entry, key, value) -> str:
    if not isinstance(value, str):
        raise UserError(f"{path}: {entry}.{key} is {type(value).__name__} {value!r}, not a string (one folder a line): "
                        "ComfyUI fails at start-up on it")
    return value


def _add(paths: list, p, default: bool):
    """folder_paths.add_model_folder_path (folder_paths.py:281-295): a default path inserted first (several: the last
    first), another appended; one already there moved first when default, else left."""
    if p in paths:
        if default and paths[0] != p:
            paths.remove(p)
            paths.insert(0, p)
    elif default:
        paths.insert(0, p)
    else:
        paths.append(p)


def resolver(dirs, models_folder, find_file, unusable_exc):
    """(resolve(folders, name) -> path or None, where: the folders it looks in, for the error, notes) over the given
    --models-dir folders and the extra_model_paths.yaml in each (or in the ComfyUI folder above a models folder), each
    yaml read once (rev67h F10). Per models folder the search order is ComfyUI's: the yamls' is_default paths (each
    put first), the --models-dir folders (ComfyUI's models/), the other paths. resolve.folders: every folder searched."""
    roots, notes, extra, seen = [], [], {}, set()
    for d in dirs:
        root, note = models_folder(d)
        roots.append(root)
        notes += [note] if note else []
        for y in dict.fromkeys((Path(d) / YAML, root.parent / YAML)):
            if y.is_file() and os.path.abspath(y) not in seen:
                seen.add(os.path.abspath(y))
                got = read_yaml(y)
                count = {}
                for f, p, default in got:
                    count[f] = count.get(f, 0) + 1
                    _add(extra.setdefault(f, [ROOTS]), p, default)
                notes.append(f"{y} read: " + ", ".join(f"{f}/ in {n} more folder(s)" for f, n in count.items()))

    def resolve(folders, name):
        order = [[p for f in dict.fromkeys(canonical(f) for f in folders) for p in _split(extra.get(f), k)]
                 for k in (0, 1)]
        first = None
        for b in order[0] + roots + order[1]:
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
    resolve.folders = [str(r) for r in roots] + list(dict.fromkeys(
        str(p) for ps in extra.values() for p in ps if p is not ROOTS))
    return resolve, where, notes


ROOTS = object()  # where the --models-dir folders stand in a models folder's search list (ComfyUI's models/<folder>)


def _split(paths, k):
    """The paths before (k 0) or after (k 1) ROOTS in a folder's list."""
    if not paths:
        return []
    i = paths.index(ROOTS)
    return paths[:i] if k == 0 else paths[i + 1:]
