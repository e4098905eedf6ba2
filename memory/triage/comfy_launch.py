"""(fix66c) How this ComfyUI was installed, read from what the log shows, and the launch line the guides print for it.

The guides' commands start with {{launch}}. A portable build's line is not a venv install's, and ComfyUI Desktop has no
command line at all: it takes launch flags in its Settings (Server-Config panel, kept as `Comfy.Server.LaunchArgs` in
comfy.settings.json and passed to main.py by the app: Comfy-Org/desktop src/main-process/comfyDesktopApp.ts
buildServerArgs). One table of signals (INSTALL_SIGNS), read by the "comfy_install" fact on frames, the error report's
system information and echoed command lines; the strongest install seen wins (INSTALL_ORDER: Desktop's report also says
"Embedded Python: false" and its paths hold a .venv)."""
import re

from .desktop_settings import sentence as desktop_sentence, split_flags

# (install, pattern, what it is) -- the whole table of signals
INSTALL_SIGNS = (
    # ComfyUI Desktop (Electron): its bundled ComfyUI under the app's resources folder ("...\Programs\@comfyorgcomfyui-electron\
    # resources\ComfyUI\..." on Windows, "/Applications/ComfyUI.app/Contents/Resources/ComfyUI/..." on macOS)
    ("desktop", r"@comfyorgcomfyui-electron|comfyui-electron[\\/]", "ComfyUI Desktop's bundled paths (Windows)"),
    ("desktop_mac", r"ComfyUI\.app[\\/]Contents[\\/]Resources[\\/]ComfyUI\b", "ComfyUI Desktop's bundled paths (macOS)"),
    # the Windows portable build: its embedded interpreter's folder (ComfyUI server.py:624 reports embedded_python when
    # sys.executable's folder is "python_embeded"; the frontend's error report prints it as "Embedded Python: true") and the
    # flag its run_*.bat files pass
    # (fix66f, rev66b F8) and the archive's own folder (frames under C:\ComfyUI_windows_portable\ComfyUI\...)
    ("portable", r"python_embeded[\\/]|ComfyUI_windows_portable[\\/]|Embedded Python:\W{0,4}true\b|--windows-standalone-build",
     "the portable build's python_embeded folder"),
    # a manual install: a virtual environment's or conda's site-packages, the report's "Embedded Python: false", a prompt that
    # ran `python main.py`
    ("manual", r"[\\/]\.?venv[\\/](?:Lib|lib|Scripts|bin)[\\/]|[\\/]envs[\\/][\w.-]{1,60}[\\/](?:Lib|lib)[\\/]|"
               r"Embedded Python:\W{0,4}false\b|(?:^|[>$] ?)python3?(?:\.exe)? main\.py\b",
     "a virtual environment's or manual install's paths"),
)
INSTALL_ORDER = ("desktop", "portable", "manual")
INSTALL_RE = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx, _ in INSTALL_SIGNS))
INSTALL_KEYS = ("comfyui-electron", "ComfyUI.app", "python_embeded", "ComfyUI_windows_portable", "Embedded Python",
                "--windows-standalone-build",
                "venv", "envs", "main.py")     # the fact's gate words: every pattern above holds one

LAUNCH = {"portable": r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build",
          "manual": "python main.py", "desktop": "python main.py"}
# unknown on Windows: the manual form, and what the other two take
UNKNOWN_NOTE = (r"The ComfyUI commands above use a manual install's launch line (the log does not show which install this is); in the portable build start "
                r"`.\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build` with the same flags, "
                "and ComfyUI Desktop takes them in Settings > Server-Config.")
DESKTOP_RESTART = "ComfyUI Desktop: restart the app from its menu."


# (fix66f, rev66b F7) signs that hold only on one OS: a Linux or macOS log with a Windows path pasted into it (a custom
# node's message naming someone's python_embeded) is no portable build
SIGN_OS = {"desktop": "windows", "portable": "windows", "desktop_mac": "darwin"}


def seen(f, m) -> None:
    """The "comfy_install" fact's handler: note the sign a line shows."""
    f.setdefault("comfy_install", set()).add(m.lastgroup)


def install(f, os_name=None) -> str | None:
    """The install the log shows (INSTALL_ORDER's first seen), else None. `os_name`: the log's OS (env["os"]); a sign
    SIGN_OS ties to another OS does not count (None: the OS is not known, every sign counts)."""
    got = {("desktop" if g == "desktop_mac" else g) for g in (f.get("comfy_install") or ())
           if os_name is None or SIGN_OS.get(g, os_name) == os_name}
    return next((i for i in INSTALL_ORDER if i in got), None)


def host_install(*paths) -> str | None:
    """The install a running ComfyUI is (the OOM panel's context "comfy_install"): the same signs read on the host's own
    paths (sys.executable: python_embeded or a venv; sys.argv[0]: Desktop's bundled main.py), INSTALL_ORDER's first."""
    f = {}
    for path in paths:
        for m in INSTALL_RE.finditer(str(path or "")):
            seen(f, m)
    return install(f)


def params(env, f, context=None) -> dict:
    """The guides' {{launch}} and the flags their conditions read: "comfyui" (the log is ComfyUI's), "comfy_desktop",
    "launch_unknown" (Windows, no install shown: the note under the commands). The host's own answer (the panel's context
    "comfy_install") comes before the log's signs. A tied OS vote (env.infer's "os_tied"; the host's platform never ties):
    the manual line unless a sign of no one OS shows."""
    p = {"comfyui": env.get("runtime") == "comfyui"}
    if not p["comfyui"]:
        return p
    tied = env.get("os_tied")
    how = (context or {}).get("comfy_install")
    how = how if how in LAUNCH else install(f, "" if tied else env.get("os"))    # "": an OS no sign is tied to
    if how:
        p["launch"] = LAUNCH[how]
        p["comfy_install"] = how
        p["comfy_desktop"] = how == "desktop"
        p["comfy_windows"] = env.get("os") == "windows" and not tied     # (fix67f) Desktop's env sentence in cmd's form
    elif env.get("os") == "windows" and not tied:
        p["launch"] = LAUNCH["manual"]
        p["launch_unknown"] = True
    return p


_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*\n?", re.S | re.M)


def _run(line, launch):
    """A line that starts ComfyUI (`launch`, after any VAR=value settings): its settings (group 1) and flags (group 2)."""
    return re.fullmatch(r"((?:[A-Za-z_]\w{0,60}=\S{1,200}[ \t]{1,4}){0,8})" + re.escape(launch) + r"((?:[ \t].*)?)", line)


DESKTOP_ENV = ("ComfyUI Desktop has no setting for environment variables such as `{env}`: it takes effect where ComfyUI "
               "is started from a terminal (a manual install: `{env} python main.py`).")
# (fix67f, rev67a F6) on Windows, cmd's form: `set` on a line of its own (`VAR=1 python main.py` is bash syntax)
DESKTOP_ENV_CMD = ("ComfyUI Desktop has no setting for environment variables such as `{env}`: it takes effect where "
                   "ComfyUI is started from a terminal (a manual install, in cmd: {sets}, then `python main.py`).")


def for_desktop(markdown: str, launch: str = LAUNCH["desktop"], windows: bool = False) -> str:
    """The guide for ComfyUI Desktop: each command line that starts ComfyUI becomes the sentence saying where Desktop takes
    its flags; other lines of the block stay in it (a block left empty goes). `windows`: environment variables in cmd's form."""
    def block(m):
        lines = m.group(1).splitlines()
        found = [(ln, _run(ln, launch)) for ln in lines]
        runs = [ln for ln, r in found if r]
        if not runs:
            return m.group(0)
        envs = [e for _, r in found if r for e in r.group(1).split()]
        flags = [fv for _, r in found if r for fv in split_flags(r.group(2) or "")]
        says = desktop_sentence(flags) if flags else ("" if envs else DESKTOP_RESTART)     # (fix66f) the panel, else the file
        if envs:       # (fix66f) Desktop's settings hold no environment variables
            says = (says + " " if says else "") + (
                DESKTOP_ENV_CMD.format(env=" ".join(envs), sets=", ".join(f"`set {e}`" for e in envs)) if windows
                else DESKTOP_ENV.format(env=" ".join(envs)))
        rest = [ln for ln in lines if ln not in runs]
        head = m.group(0)[:m.start(1) - m.start(0)]
        kept = head + "\n".join(rest) + "\n```\n" if rest else ""
        return kept + ("\n" if kept else "") + says + "\n"
    return _FENCE.sub(block, markdown)


def apply(guide: dict | None, params: dict, commands) -> None:
    """The rendered guide for the install the log shows: Desktop's sentences for its command lines; on Windows with no
    install shown, the note on the other two launch lines. `commands`: guides.commands, to relabel the blocks."""
    if not guide or not params.get("comfyui"):
        return
    md = guide["markdown"]
    if params.get("comfy_desktop"):
        md = for_desktop(md, windows=bool(params.get("comfy_windows")))
    elif params.get("launch_unknown") and (LAUNCH["manual"] + " ") in md:
        md = md.rstrip() + "\n\n" + UNKNOWN_NOTE + "\n"
    if md != guide["markdown"]:
        guide["markdown"] = md
        guide["commands"] = commands(md)
