"""(fix68a, rev67g) vLLM's `-q X` in an argument list as Kubernetes and Compose files write a command
(`command: ["vllm", "serve", "Qwen/Qwen2.5-72B-Instruct", "-q", "fp8"]`, JSON or YAML's flow form): the items, unquoted and
joined, read as the command they are (vllm_short_q.quants), so `-q` is vLLM's --quantization only where a vLLM entry point
stands before it in the same list (an `args:` list apart from its `command:` says nothing, nor does a list of another
program's). YAML's block form (`- "-q"` then `- "fp8"` on the next line) is not read: its value is a line later."""
import re

from .vllm_short_q import quants

LINE = re.compile(r"\[([^\[\]\n]{0,4000}?[\"']-q[\"'][^\[\]\n]{0,4000}?)\]")
KEYS = ('"-q"', "'-q'")
FACT = ("vllm_args_list", LINE)
_ITEM = re.compile(r"\"([^\"\n]{0,400})\"|'([^'\n]{0,400})'")


def read(s, f, m, text, lineno, window) -> None:
    """The "vllm_args_list" fact's handler: the list's -q X, vLLM's, sets the run's quantization (vllm_wflags' "quant",
    vllm_command's "vllm_own_quant"), as `vllm serve M -q X` on a line does."""
    for lst in LINE.finditer(text):
        got = quants(" ".join(a or b for a, b in _ITEM.findall(lst.group(1))))
        if got:
            q = got[max(got)]
            f["vllm_wflags"]["quant"] = q
            f["vllm_own_quant"] = q
