"""What a run ran on: ComfyUI, frontend, torch, CUDA/ROCm, driver, Python, OS, this pack and every other
custom node pack. Everything is read from files and already-imported modules; nothing runs git or a
subprocess (this is called from a ComfyUI process). A pack's version: [project] version in its
pyproject.toml, else its git commit (.git/HEAD, the ref file or packed-refs), else "unknown"."""
import os
import platform
import re
import sys

_VERSION_RE = re.compile(r'^\s*version\s*=\s*["\']([^"\']{1,64})["\']', re.M)
_SECTION_RE = re.compile(r"^\s*\[([^\]]+)\]\s*$", re.M)
_COMFY_VERSION_RE = re.compile(r'__version__\s*=\s*["\']([^"\']+)["\']')
MAX_READ = 256 * 1024
MAX_PACKS = 300


def _read(path: str, limit: int = MAX_READ) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return None


def pyproject_version(text: str) -> str | None:
    """[project] version from pyproject.toml text (a regex over the [project] table: no toml dependency)."""
    if not text:
        return None
    heads = list(_SECTION_RE.finditer(text))
    for i, h in enumerate(heads):
        if h.group(1).strip() == "project":
            end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
            m = _VERSION_RE.search(text, h.end(), end)
            return m.group(1) if m else None
    return None


def git_commit(folder: str) -> str | None:
    """The checked-out commit, read from .git (a folder, or a file pointing at one), short form."""
    git = os.path.join(folder, ".git")
    if os.path.isfile(git):
        txt = _read(git, 4096) or ""
        m = re.match(r"gitdir:\s*(.+)", txt.strip())
        if not m:
            return None
        git = m.group(1).strip()
        if not os.path.isabs(git):
            git = os.path.normpath(os.path.join(folder, git))
    head = (_read(os.path.join(git, "HEAD"), 4096) or "").strip()
    if re.fullmatch(r"[0-9a-f]{40,64}", head):
        return head[:12]
    m = re.match(r"ref:\s*(\S+)", head)
    if not m:
        return None
    ref = m.group(1)
    sha = (_read(os.path.join(git, *ref.split("/")), 4096) or "").strip()
    if re.fullmatch(r"[0-9a-f]{40,64}", sha):
        return sha[:12]
    common = (_read(os.path.join(git, "commondir"), 4096) or "").strip()
    for base in ([git] + ([os.path.normpath(os.path.join(git, common))] if common else [])):
        sha = (_read(os.path.join(base, *ref.split("/")), 4096) or "").strip()
        if re.fullmatch(r"[0-9a-f]{40,64}", sha):
            return sha[:12]
        for line in (_read(os.path.join(base, "packed-refs"), 4 * 1024 * 1024) or "").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref and re.fullmatch(r"[0-9a-f]{40,64}", parts[0]):
                return parts[0][:12]
    return None


def pack_version(folder: str) -> str:
    v = pyproject_version(_read(os.path.join(folder, "pyproject.toml")) or "")
    commit = git_commit(folder)
    if v and commit:
        return f"{v} ({commit})"
    return v or (f"git {commit}" if commit else "unknown")


def custom_node_packs(dirs, skip=()) -> dict:
    """folder name -> version for every pack folder in the custom_nodes directories (bounded)."""
    out = {}
    for d in dirs or ():
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            if len(out) >= MAX_PACKS:
                return out
            path = os.path.join(d, name)
            if name.startswith((".", "__")) or name in skip or not os.path.isdir(path) or name.endswith(".disabled"):
                continue
            out[name] = pack_version(path)
    return out


def comfyui_version(comfy_dir: str | None) -> str | None:
    if not comfy_dir:
        return None
    m = _COMFY_VERSION_RE.search(_read(os.path.join(comfy_dir, "comfyui_version.py"), 4096) or "")
    commit = git_commit(comfy_dir)
    if m:
        return f"{m.group(1)} ({commit})" if commit else m.group(1)
    return f"git {commit}" if commit else None


def frontend_version(front_end_root: str | None = None) -> str | None:
    """The pip package's version; with --front-end-root, the version of the wheel that root sits in (its
    .dist-info next to it), else "custom root"."""
    if front_end_root:
        pkg = os.path.dirname(os.path.abspath(front_end_root))
        site = os.path.dirname(pkg)
        try:
            for name in os.listdir(site):
                m = re.fullmatch(r"comfyui_frontend_package-([^-]+)\.dist-info", name)
                if m and os.path.basename(pkg) == "comfyui_frontend_package":
                    return f"{m.group(1)} (--front-end-root)"
        except OSError:
            pass
        return "custom root (--front-end-root)"
    try:
        from importlib.metadata import version
        return version("comfyui-frontend-package")
    except Exception:
        return None


def nvidia_driver() -> str | None:
    m = re.search(r"Kernel Module\s+([\d.]+)", _read("/proc/driver/nvidia/version", 4096) or "")
    if m:
        return m.group(1)
    nv = sys.modules.get("pynvml")
    if nv is not None:
        try:
            v = nv.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        except Exception:
            return None
    return None


def torch_versions() -> dict:
    """torch, CUDA or ROCm (HIP) as torch was built; only if torch is already imported (it is in ComfyUI)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    v = getattr(torch, "version", None)
    out = {"torch": str(getattr(torch, "__version__", None))}
    if getattr(v, "hip", None):
        out["rocm"] = str(v.hip)
    elif getattr(v, "cuda", None):
        out["cuda"] = str(v.cuda)
    if getattr(v, "xpu", None):
        out["xpu"] = str(v.xpu)
    return out


def collect(comfy_dir=None, custom_node_dirs=(), pack_dir=None, front_end_root=None) -> dict:
    pack_name = os.path.basename(os.path.abspath(pack_dir)) if pack_dir else None
    out = {"comfyui": comfyui_version(comfy_dir), "frontend": frontend_version(front_end_root),
           "gpu_garden": pack_version(pack_dir) if pack_dir else None, **torch_versions(),
           "driver": nvidia_driver(), "python": platform.python_version(),
           "os": f"{platform.system()} {platform.release()} ({platform.machine()})"}
    packs = custom_node_packs(custom_node_dirs, skip={pack_name} if pack_name else ())
    out = {k: v for k, v in out.items() if v}
    out["custom_nodes"] = packs
    return out


ALLOCATOR_ENV = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_XPU_ALLOC_CONF",
                 "PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                 "PYTORCH_MPS_HIGH_WATERMARK_RATIO", "PYTORCH_MPS_LOW_WATERMARK_RATIO")


def allocator(environ=None) -> dict:
    env = os.environ if environ is None else environ
    out = {k: env[k] for k in ALLOCATOR_ENV if env.get(k)}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            out["backend"] = torch.cuda.get_allocator_backend()
    except Exception:
        pass
    return out
