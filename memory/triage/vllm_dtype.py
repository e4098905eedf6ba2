"""(fix66g) vLLM's weights dtype as a fact (facts "vllm_dtype"), found in a time linear in the line.

Where it is read: the engine config's line ("... with config: model=..., dtype=torch.float32, ...", config/vllm.py
__str__), an offline script's `LLM(model=..., dtype=torch.float32)` or `dtype="float32"` (the constructor's line, as a
traceback shows it), or the --dtype flag. A traceback's other source lines ("torch.empty(shape, dtype=out_dtype)") name
a local tensor's dtype, not the weights'. The anchor is found with str.find and dtype= searched in a bounded span after
the first one: a line of many anchors costs one pass (fix66d's lazy `with config: .{0,4000}?` took 82 s on 10 MB)."""
import re

KEYS = ("with config:", "--dtype", "dtype=")      # (dtype=: an LLM( call's; "LLM(" would shadow llm_model's "LLM(model=")
TRIES = 16                     # --dtype occurrences tried on one line (a command holds one)
SPAN = 4000                    # how far after its anchor dtype= may stand on the engine config's (or the call's) line
_RX = re.compile(r"[\s,(]dtype=[\"']?(?:torch\.)?(\w+)|--dtype[ =](\w+)")
_FLAG = re.compile(r"(?!)()|--dtype[ =](\w+)")        # (group 2, as in _RX)


class _Fact:
    """re-like: search(line) -> a match whose group(1) is the config's or the call's dtype, group(2) the flag's;
    .pattern, a str as a compiled str pattern's (what the fuzz test and the fact gate read to pick str or bytes)."""

    pattern = _RX.pattern

    @staticmethod
    def search(line):
        for anchor, back in (("with config: ", 1), ("LLM(", 1)):
            i = line.find(anchor)
            if anchor == "LLM(" and i > 0 and (line[i - 1].isalnum() or line[i - 1] == "_"):
                i = -1                     # AsyncLLM(, vLLM(: not the offline constructor
            if i >= 0:
                m = _RX.search(line, i + len(anchor) - back, i + len(anchor) + SPAN)
                if m:
                    return m
        i, tries = line.find("--dtype"), 0
        while i >= 0 and tries < TRIES:
            m = _FLAG.match(line, i)
            if m:
                return m
            i, tries = line.find("--dtype", i + 7), tries + 1
        return None


FACT = _Fact()
