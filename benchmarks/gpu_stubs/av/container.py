"""Stand-in for PyAV on the GPU machine (not installed there): ComfyUI's comfy_api imports it for video I/O,
which the Fit to Card benchmark never uses. Any attribute is a dummy class."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (), {})
