"""(fix66f, review rev66b F6) Where ComfyUI Desktop takes a launch flag a guide prints.

Desktop has no command line. Its Settings > Server-Config panel is a fixed list of fields (Comfy-Org/ComfyUI_frontend
src/constants/serverConfig.ts SERVER_CONFIG_ITEMS; the same fields in the frontends 1.35.9 and 1.58.1 bundled with
ComfyUI: listen, port, tls-*, cuda-device, cuda-malloc, the precisions, cpu-vae, directml, preview, cache-classic,
cache-lru, cross-attention-method, disable-xformers, vram-management, reserve-vram, disable-smart-memory, fast,
disable-all-custom-nodes, directories, ...). The panel writes them to `Comfy.Server.LaunchArgs` in
`user/default/comfy.settings.json` under Desktop's base path, and Desktop passes every entry of that record to main.py as
`--name value` (an empty value: the bare switch; Comfy-Org/desktop src/main-process/comfyServer.ts buildLaunchArgs,
comfyDesktopApp.ts buildServerArgs). A flag with no field (--disable-pinned-memory, --cache-ram, --cache-none,
--disable-dynamic-vram, --disable-comfy-compiler, --vram-headroom) can only go in that file by hand; the panel rewrites
the record when one of its own fields changes (ServerConfigPanel's watch on launchArgs)."""

# flag -> (the panel's field, the value to choose; "{}" is the flag's own value)
_VRAM = {f"--{m}": ("VRAM management mode", m) for m in ("gpu-only", "highvram", "normalvram", "lowvram", "novram", "cpu")}
_ATTN = {f"--use-{m}-cross-attention": ("Cross attention method", m) for m in ("split", "quad", "pytorch")}
_TEXT = {f"--{p}-text-enc": ("Text Encoder precision", p) for p in ("fp8_e4m3fn", "fp8_e5m2", "fp16", "fp32")}
_VAE = {f"--{p}-vae": ("VAE precision", p) for p in ("fp16", "fp32", "bf16")}
_UNET = {f"--{p}-unet": ("UNET precision", p) for p in ("fp64", "fp32", "fp16", "bf16", "fp8_e4m3fn", "fp8_e5m2")}
PANEL = {
    "--reserve-vram": ("Reserved VRAM (GB)", "{}"),
    "--cpu-vae": ("Run VAE on CPU", "on"),
    "--disable-smart-memory": ("Disable smart memory management", "on"),
    "--disable-cuda-malloc": ("Use CUDA malloc for memory allocation", "disable"),
    "--cuda-malloc": ("Use CUDA malloc for memory allocation", "enable"),
    "--disable-xformers": ("Disable xFormers optimization", "on"),
    "--disable-all-custom-nodes": ("Disable loading all custom nodes", "on"),
    "--cache-lru": ("Use LRU caching", "{}"),
    "--cache-classic": ("Use classic cache system", "on"),
    "--directml": ("DirectML device index", "{}"),
    "--cuda-device": ("CUDA device index to use", "{}"),
    "--force-fp16": ("Global floating point precision", "fp16"),
    "--force-fp32": ("Global floating point precision", "fp32"),
    **_VRAM, **_ATTN, **_TEXT, **_VAE, **_UNET,
}
SETTINGS_FILE = "user/default/comfy.settings.json"


def split_flags(text: str) -> list:
    """"--a 1 --b" -> [("--a", "1"), ("--b", "")]."""
    out = []
    for tok in text.split():
        if tok.startswith("--") or not out:
            out.append((tok, ""))
        else:
            out[-1] = (out[-1][0], (out[-1][1] + " " + tok).strip())
    return out


def _field(flag, value):
    name, choose = PANEL[flag]
    return f"{name}: {choose.format(value) if '{}' in choose else choose}" if value or "{}" not in choose else name


def sentence(flags: list) -> str:
    """What Desktop's user does for these (flag, value) pairs: the panel's fields where they exist, the settings file
    for the rest."""
    inpanel = [(f, v) for f, v in flags if f in PANEL]
    outside = [(f, v) for f, v in flags if f not in PANEL]
    parts = []
    if inpanel:
        parts.append("ComfyUI Desktop has no launch line: in Settings > Server-Config set " +
                     ", ".join(f"{_field(f, v)} (`{(f + ' ' + v).strip()}`)" for f, v in inpanel) +
                     ", then restart the app.")
    if outside:
        entries = ", ".join(f'`"{f[2:]}": "{v}"`' for f, v in outside)
        names = " and ".join(f"`{(f + ' ' + v).strip()}`" for f, v in outside)
        parts.append(("ComfyUI Desktop has no launch line, and " if not inpanel else "") +
                     f"its Settings > Server-Config panel has no field for {names}, so it is not settable there: with the "
                     f"app closed, add {entries} to `Comfy.Server.LaunchArgs` in `{SETTINGS_FILE}` under Desktop's base "
                     "path (Desktop passes each entry to main.py as a flag; changing a field in the panel rewrites that "
                     "list), then start the app.")
    return " ".join(parts)
