"""A minimal stand-in for ComfyUI's `comfy_api.latest`, for unit tests of schema shapes only.
The real API is exercised by tests/host against a real ComfyUI."""
import types


class ComfyExtension:
    async def get_node_list(self):
        return []


class _Port:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _Type:
    Input = _Port
    Output = _Port

    def __init__(self, name):
        self.io_type = name


class Schema:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class NodeOutput:
    def __init__(self, *values, ui=None, **kwargs):
        self.values, self.ui = values, ui


class ComfyNode:
    @classmethod
    def GET_SCHEMA(cls):
        return cls.define_schema()


def _custom(name):
    return type(name, (_Type,), {})


class _IO(types.ModuleType):
    ComfyNode, Schema, NodeOutput = ComfyNode, Schema, NodeOutput
    Custom = staticmethod(_custom)

    def __getattr__(self, name):  # io.Model, io.Latent, io.Int, io.Hidden, ...
        t = _custom(name)
        setattr(self, name, t)
        return t


io = _IO("io")
ui = _IO("ui")
