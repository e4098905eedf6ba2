"""`gpu-garden triage` and the OOM panel's entry points: the path of an OOM log through triage.

    scan.Scan          stream the log in bounded memory -> incidents (one per failure) + startup facts
                       (parse: error lines and numbers; facts: context lines; window: the lines before)
    env.infer          the failure's OS, backend, allocator, runtime
    case.build         the failure's facts under common names (numbers, phase, traceback, history)
    rank.diagnose      run the rules table (rules.py: WHERE A CAUSE IS DECIDED) -> ranked causes
    advice.params      the numbers the guide's commands need
    guides.select      the guide for the top cause on this runtime and platform
    render             the human text (the JSON is the result dict itself)

`triage_text` / `triage_stream` return {"found", "cause", "uncertain", "alternatives", "pair", "events", "count",
"lines"}; each event carries its causes (best first, with evidence), guide, numbers and platform.
"""
import codecs
import io
import json
import sys

from . import advice
from . import facts as facts_mod
from . import case as case_mod
from . import aimdo_abort, alloc_caps, comfy_launch, deepspeed_zero3, comfy_numbers, encoder_advice, guide_phase, ollama_compute, ollama_env_since, ollama_estimate, verdict_guides, vllm_command
from .vllm_run import run_setting, scan_for, vllm_setting     # vllm_setting re-exported (tests, facts' comments)
from . import env as env_mod
from . import guides as guides_mod
from . import parse as P
from . import rank
from .native_abort import TRAILING_KINDS
from .printed_card import tiny_printed
from .igpu_sign import igpu_sign
from .native_runtimes import WEBGPU_DEVICE_BY_OS
from .predicates import compiler_flood, fraction_cap, sysmem_fallback, trt_kv_sizing, wddm_refused
from .render import NO_LIMIT, render_human, render_numbers, NUMBER_LABELS  # noqa: F401  (re-exported)
from .rules import CAUSES  # noqa: F401  (re-exported: the fixed cause vocabulary)
from .scan import Scan
from .utf16_sniff import SNIFF_BYTES, utf16_encoding
from .servers import ggml_host_backend     # (round 112)
from ..errors import UserError
from ..units import fmt_bytes

EXPLAINED_WITHIN = 80     # lines between PyTorch's message and the server's that explains it (the re-raise's traceback)
is_oom_error = P.is_oom_error      # the capture's check, kept at its old path


def _alternatives(causes, env, params, kind, form=None, cause_forms=None, top_guide=None, seen=None) -> list:
    """The top two causes side by side, each with its guide, for an answer under rank.UNCERTAIN (cause_forms: a cause whose
    guide is chosen by a form of its own, as the system commit's host-ram; (tri67) the runner-up's guide in the phase of
    the top's, `top_guide`, where the log shows that phase, `seen`: guide_phase.py)."""
    out = []
    for i, c in enumerate(causes[:2]):
        g = guide_phase.runner_up(c["id"], env["runtime"], env, params, kind, (cause_forms or {}).get(c["id"], form),
                                  top_guide if i else None, seen)
        out.append({"id": c["id"], "confidence": c["confidence"], "evidence": c["evidence"][:2],
                    "guide": {"id": g["id"], "title": g["title"]} if g else None})
    return out


# PyTorch's own words on Metal: its MPS backend's report of a failed command buffer ("The Metal Performance Shaders
# operations encoded on it may not have completed"), the MPS allocator, torch's frames
_TORCH_METAL_WORDS = ("Metal Performance Shaders", "MPS", "torch")


def _torch_named(inc, env):
    """Something in the failure names PyTorch (ComfyUI, a torch frame, PyTorch's MPS wording): a bare Metal command-buffer
    failure under the runtime guess of last resort (pytorch) is any Metal program's (MLX, Warp, a game engine) and stays Metal."""
    return env["runtime"] == "comfyui" or any("torch" in p for p, _ in inc.frames) or \
        any(w in inc.primary.get("text", "") for w in _TORCH_METAL_WORDS)


def _event_dict(scan, inc, context):
    env = env_mod.infer(scan, inc, context)
    case = case_mod.build(scan, inc, context, env)
    causes = rank.diagnose(case)
    ev = inc.primary
    device_kind = inc.primary.get("device_kind") or next((e["device_kind"] for e in inc.events if e.get("device_kind")), None) or env["backend"]
    if device_kind == "cpu" and ev["kind"] == "ggml.buffer":
        device_kind = ggml_host_backend(inc.events) or device_kind     # the CPU line under a GPU backend's _Host buffer
    if device_kind == "cuda" and env["backend"] == "rocm":
        device_kind = "rocm"
    elif device_kind == "metal" and env["runtime"] in ("pytorch", "comfyui") and _torch_named(inc, env):
        device_kind = "mps"          # a Metal command buffer failing under PyTorch: its device is MPS
    elif device_kind == "webgpu":
        device_kind = WEBGPU_DEVICE_BY_OS.get(env["os"], "webgpu")      # Dawn's backend on this OS (round 67)
    rscan = scan_for(scan, ev.get("_line", inc.first_line), case.until)     # (fix67g) the facts of the vLLM run that failed
    params = advice.params(inc, env, rscan, context, case.total)
    params.update(ollama_compute.params(case, env))     # (fix66c) Ollama's compute buffer: case.py's stage (fix66f)
    params["sysmem_fallback"] = sysmem_fallback(case)
    params.update(aimdo_abort.params(inc.frames, scan.facts, ev.get("_line", inc.first_line), params.get("comfy_install")))
    params.update(encoder_advice.params(case.node, inc.phase[1] if inc.phase else None))   # (aud67b #7) the guide's node
    tiny = bool(getattr(case, "tiny", False) or tiny_printed(case))     # (fix66c) the rules' tiny-card reading
    params["igpu"] = igpu_sign(case, tiny)      # (fix66f) the carve-out advice needs an integrated GPU's sign, not size alone
    params["tiny_device"] = tiny and params["igpu"]
    if fraction_cap(case):     # the rule row's own predicate: the guide names the cap, not the driver (review16a F1)
        params.update(fraction_cap=True, allowed=fmt_bytes(case.n["allowed"]), free=fmt_bytes(case.free))
    top = causes[0]["id"]
    gkind = "comfy.compiler" if top == "other" and env["runtime"] == "comfyui" and compiler_flood(scan.facts) else ev["kind"]
    params["vulkan_cap"] = alloc_caps.vulkan_cap(case)     # (aud68c #8) the guide of Vulkan's one-allocation cap
    gkind = alloc_caps.guide_kind(top, gkind, params)
    gkind = deepspeed_zero3.guide_kind(top, gkind, inc.frames)     # (aud68c #9) ZeRO-3's parameter gathering
    # the row's own predicate: host-ram's guide is the system commit's (os-host-ram), whether first or runner-up
    cause_forms = {"host-ram": "wddm"} if wddm_refused(case) and any(c["id"] == "host-ram" for c in causes[:2]) else {}
    if cause_forms:
        params["wddm"] = True
    # (fix34) the guide variant follows the failure's device: a failure in host RAM (device cpu) on a machine whose backend is
    # a GPU's reads the guides written for the CPU (platforms: [cpu]), as a ROCm or MPS device reads its own
    genv = dict(env, backend="cpu") if device_kind == "cpu" else env
    guide = guides_mod.select(top, env["runtime"], genv, params, kind=gkind, form=cause_forms.get(top, ev.get("form")))
    guide = ollama_compute.guide(guide, top, params, guides_mod)     # (fix66c) Ollama's compute buffer: its own guide
    guide = verdict_guides.apply(guide, params, guides_mod)     # (aud68c #5) should_fit's verdict: the previous version first
    comfy_launch.apply(guide, params, guides_mod.commands)
    vf = rscan.facts      # (fix67g, rev67b F4) a guide whose lines size the cache for themselves keeps no --max-model-len of the log's
    if guide and guides_mod.load_all().get(guide["id"], {}).get("carry_max_model_len") == "no":
        vf = dict(vf, vllm_own={k: v for k, v in (vf.get("vllm_own") or {}).items() if k != "max_model_len"})
    ollama_env_since.apply(guide, rscan.facts, guides_mod.commands)     # (aud68c #3) settings the log's Ollama lacks
    vllm_command.apply(guide, vf, guides_mod.commands)     # (fix66c) the log's model and tensor-parallel size     # (fix66c) Desktop's settings, not a command line
    note = env_mod.expandable_note(env) if guide and "expandable_segments" in guide["markdown"] else None
    if note:
        guide["markdown"] = guide["markdown"].rstrip() + "\n\n" + note
        guide["commands"] = guides_mod.commands(guide["markdown"])
    numbers = dict(ev.get("numbers") or {})
    if case.bogus_limit:
        numbers["total"] = case.total      # the card (ComfyUI's start-up total), not the message's device limit
    if env["runtime"] == "comfyui" and len(scan.facts["nunchaku_gpus"]) == 1:
        numbers.setdefault("total", next(iter(scan.facts["nunchaku_gpus"].values())))   # nunchaku's loader printed its one card
    if ev["kind"] == "cuda.driver":
        for key, v in scan.facts["mmgp_pin"].items():
            numbers.setdefault(key, v)      # mmgp's pinning lines: the page-locked RAM it needed, had left, and reached
    if ev["kind"] in ("vllm.no_kv_blocks", "vllm.startup_free") or env["runtime"] == "vllm":
        # (round 97) the settings that sized the cache vLLM found no room for (its config line or its flags): the fraction, the context
        # (round 117) and in any failure of a vLLM run but its start-up check (which quotes the fraction it used, or elides it)
        # (rev8 B1) by line: the nearest printed at or before the failure (a retry's settings after it are the next run's),
        # else (a paste quoting the start-up after its error) the first after it and before the next failure
        # (round 118) the start-up check quotes no context: its run's --max-model-len alone; (rev9 D1) one read for both
        at = ev.get("_line", inc.first_line)
        util = run_setting(scan.facts, "vllm_util_at", at, case.until) if ev["kind"] != "vllm.startup_free" else None
        if util is not None:
            numbers.setdefault("gpu_memory_utilization_ratio", util)
        maxlen = run_setting(scan.facts, "vllm_maxlen_at", at, case.until)     # (fix67o) within the failing run
        if maxlen:
            numbers.setdefault("max_model_len_tokens", maxlen)
        # (fix67a, aud67b #8) its start-up figures under the numbers' existing keys: the weights one GPU loaded, the KV cache's bytes and tokens
        for key, fact in (("weights", "vllm_model_mem"), ("kv_available", "vllm_kv_mem"), ("kv_max_tokens", "vllm_kv_tokens")):
            if rscan.facts.get(fact) is not None:
                numbers.setdefault(key, rscan.facts[fact])
    if ev.get("form") == "stream_executor" or (ev["kind"] == "xla.oom" and ev.get("device_kind") in (None, "cuda", "rocm")):
        for key, v in scan.facts["tf_device_mem"].items():
            numbers.setdefault(key, v)      # TensorFlow's device creation printed the card's total and free memory (round 110: for its BFC allocator's or an op's refusal too)
    query = set(scan.facts["cuda_query_total"].values())
    if device_kind == "cuda" and len(query) == 1:
        numbers.setdefault("total", query.pop())    # (round 111) deviceQuery (tri78: or nvidia-smi) printed the card's total (every card alike)
    # (round 113) MONAI Label's planner measured it free at start-up; (rev6 B7) by line: its nearest measurement before this
    # failure and after the one before, else (a paste quoting the server's start-up after its error) the first after it and
    # before the next failure; none from another failure's stretch of the log
    at, monai = ev.get("_line", inc.first_line), scan.facts["monai_gpu_free"]
    monai = [v for n, v in monai.items() if inc.after < n < at][-1:] or [v for n, v in monai.items() if at < n < (case.until or 1 << 60)]
    if monai and ev["kind"].startswith("torch.") and device_kind == "cuda":
        numbers.setdefault("available", monai[0])
    if ev.get("form") == "bfc":
        for key, v in facts_mod.bfc_stats_after(scan.facts, ev.get("_line", inc.first_line)).items():
            numbers.setdefault(key, v)      # the BFC allocator's stats after the failure: its limit and the bytes in use
    for key, v in (trt_kv_sizing(case) or {}).items():
        if key != "short":
            numbers.setdefault(key, v)      # TensorRT-LLM's KV sizing line: the card's total and what the engine left free
    if scan.facts.get("as_limit") and device_kind == "cpu":
        numbers.setdefault("limit", scan.facts["as_limit"])     # (round 112) the address-space cap a host allocation ran into
    # (round 118) tpu-inference's memory statistics: the chip's HBM; (rev9 D3) by line, as vLLM's settings (two chips or runs)
    hbm = vllm_setting(scan.facts.get("tpu_hbm_limit", {}), ev.get("_line", inc.first_line), case.until)
    if hbm and device_kind == "tpu":
        numbers.setdefault("total", hbm)
    if ev["kind"] == "cuda.driver" and scan.facts["ggml_pool_req"]:
        numbers.setdefault("requested", scan.facts["ggml_pool_req"])     # ggml's pool printed the size it failed on
    for other in sorted(inc.events, key=lambda e: -P.PRIORITY.get(e["kind"], 0)):
        for key, v in (other.get("numbers") or {}).items():
            numbers.setdefault(key, v)
    ollama_estimate.numbers(numbers, rscan.facts, env["runtime"])     # (aud68c #5) Ollama's room and plan
    comfy_numbers.add(numbers, scan.facts, env["runtime"], device_kind, ev["kind"], causes[0]["id"] if causes else None,
                      ev.get("_line", inc.first_line), case.until, ev.get("device_index"))
    if ev["kind"] in case_mod.EXPLAINING:
        # a server's message raised from PyTorch's just before it (vLLM's "CUDA out of memory occurred when warming up
        # sampler"): a failure of its own for the scan (another runtime's family), whose sizes are that message's
        prev = next((i for i in reversed(scan.incidents) if i.index < inc.index), None)
        if prev is not None and prev.primary["kind"] in case_mod.TORCH and inc.first_line - prev.last_line <= EXPLAINED_WITHIN:
            for key, v in (prev.primary.get("numbers") or {}).items():
                numbers.setdefault(key, v)
    if ev["kind"] in ("vllm.no_kv_blocks", "vllm.startup_free") or env["runtime"] == "vllm":
        # (fixB B1) the card's total vLLM's profiling line printed (by line, as the share), after every figure a message states
        vtotal = vllm_setting(scan.facts["vllm_total_at"], ev.get("_line", inc.first_line), case.until)
        if vtotal:
            numbers.setdefault("total", vtotal)
    out = {
        "runtime": env["runtime"], "device_kind": device_kind, "kind": ev["kind"], "numbers": numbers,
        "causes": causes, "guide": guide, "line": ev.get("_line", inc.first_line), "lines": inc.lines[:20],
        "message": ev["text"], "recoverable": inc.recoverable_only or any(h[0] == "recovered" for h in inc.hints),
        "platform": {k: env[k] for k in ("os", "backend", "allocator", "expandable_segments")},
        "uncertain": rank.uncertain(causes),
    }
    out["alternatives"] = (_alternatives(causes, genv, params, ev["kind"], ev.get("form"), cause_forms, guide and guide["id"],
                                         guide_phase.shown(inc, scan.facts, ev))
                           if out["uncertain"] else [])
    if out["alternatives"] and guide:     # (rev68f #1) the guide printed, picked after the list's (Vulkan cap, ZeRO-3, verdict)
        out["alternatives"][0]["guide"] = {"id": guide["id"], "title": guide["title"]}
    out["pair"] = rank.pair(out["alternatives"])      # the two fit about equally (else the first is only the likelier)
    if env["runtime"] in ("vllm", "llama.cpp", "ollama") and top in ("kv-cache", "weights-exceed-vram", "activations"):
        sugg = advice.llm_suggestions(rscan, inc, numbers, env["runtime"], case)
        if sugg:
            out["suggestions"] = sugg
            if guide is not None:
                lines = "\n".join(f"- `{x['text']}`: {x['reason']}" for x in sugg)
                # (fixB S5) the blocks take the list's values: a command a user copies never contradicts the list below it
                guide["markdown"] = guides_mod.set_flags(guide["markdown"], sugg)
                guide["commands"] = guides_mod.commands(guide["markdown"])
                guide["markdown"] = guide["markdown"].rstrip() + "\n\n**From this log's numbers** (memory/llm/kv.py):\n\n" + lines + "\n"
                guide["commands"] += [{"label": "From this log's numbers" + (f", or with {alt}" if alt else ""), "text": text}
                                      for alt, text in flag_commands(sugg)]
    if "device_index" in ev:
        out["device_index"] = ev["device_index"]
    if ev.get("form"):
        out["form"] = ev["form"]
    return out



def flag_commands(sugg) -> list:
    """The suggested flags as commands a user can paste: one value per flag in each. A flag suggested "with" another
    (vLLM: --max-model-len N2 with --kv-cache-dtype fp8) goes with that one into an alternative command, which keeps
    the other flags; a flag named twice otherwise keeps its first value. [(None or the alternative's flag, text)]."""
    flags = [x for x in sugg if x.get("kind") == "flag"]
    texts = {x["text"] for x in flags}
    with_ = lambda x: x["reason"][5:] if x["reason"].startswith("with ") and x["reason"][5:] in texts else None
    leads = [x for x in flags if any(with_(y) == x["text"] for y in flags)]
    groups = [[t] + [y for y in flags if with_(y) == t["text"]] for t in leads]
    grouped = {id(y) for g in groups for y in g}
    base = {}
    for x in flags:
        if id(x) not in grouped:
            base.setdefault(x["name"], x["text"])
    out = [(None, " ".join(base.values()))] if base else []
    for g in groups:
        names = {y["name"] for y in g}
        out.append((g[0]["text"], " ".join([t for k, t in base.items() if k not in names] + [y["text"] for y in g])))
    return out


def _result(scan: Scan, context=None) -> dict:
    """One answer for the log. An event the run went on from ("recoverable": ComfyUI's tiled VAE retry, PyTorch's allocator
    warning before a server came up) is kept and listed, but names the answer only where no event failed: "headline" is the
    index in "events" of the event the answer speaks of (the last that failed, else the last), "recovered_only" is true
    where every event was recovered from (no failure to fix)."""
    events = [_event_dict(scan, inc, context) for inc in scan.incidents]
    hard = [i for i, e in enumerate(events) if not e["recoverable"]]
    # (tri82) a native abort after an earlier failure of the same ComfyUI prompt and process is how that failure ended the
    # process: it does not head the answer. One caught in an earlier prompt or before a restart did not (rev65c #3)
    runs = [inc.run for inc in scan.incidents]
    hard = [i for i in hard if events[i]["kind"] not in TRAILING_KINDS or not any(j < i and runs[j] == runs[i] for j in hard)]
    head = (hard[-1] if hard else len(events) - 1) if events else None
    last = events[head] if events else None
    return {"found": bool(events), "cause": last["causes"][0]["id"] if last else None,
            "uncertain": last["uncertain"] if last else False, "alternatives": last["alternatives"] if last else [],
            "pair": last["pair"] if last else False, "headline": head, "recovered_only": bool(events) and not hard,
            "events": events, "count": scan.n_incidents, "lines": scan.lineno}


def triage_stream(stream, context: dict | None = None) -> dict:
    scan = Scan()
    scan.feed_stream(stream)
    return _result(scan, context)


def triage_text(text: str, context: dict | None = None) -> dict:
    """The OOM panel's entry point: a message or a whole log, plus what the host knows (context keys:
    node_type, platform, backend, runtime, cuda_malloc_async, dynamic_vram, comfy_compiler, snapshot, loaded_models, latent,
    previous_ooms: earlier OOMs of the same host process, oldest first, each {"numbers": {...}, "kind": the
    message kind (events' "kind"), compared only with failures of the same kind}). Other keys are ignored
    (the capture's "node_title" and "model_family" are not read).

    The result: {"found", "cause", "uncertain", "alternatives", "headline", "recovered_only", "events", "count", "lines"}
    ("headline": the index of the event "cause" speaks of; "recovered_only": the run went on from every event, see _result). "uncertain" is
    true when the top cause has under rank.UNCERTAIN (0.7) of the points plus rank.NOT_DETERMINED's; "alternatives"
    then lists the top two causes side by side ({"id", "confidence", "evidence", "guide": {"id", "title"}}; one when
    a single cause fired and rules_runner_up.py names no likeliest other reading for it), else []; "pair" is true when those two fit about equally (the second's confidence
    rank.PAIR_RATIO of the first's or more), else the first is only the likelier. Each event carries the same keys for itself."""
    scan = Scan()
    scan.feed_text(text or "")
    return _result(scan, context)


# A compressed file's first bytes (its format's magic number) -> its name and the command that reads it as text. Such
# a file (a rotated comfyui.log.1.gz, a zip of logs) holds no readable line: "no out-of-memory error found" would be false.
COMPRESSED = (
    (b"\x1f\x8b", "gzip", "zcat"),
    (b"PK\x03\x04", "zip", "unzip -p"),
    (b"\xfd7zXZ\x00", "xz", "xzcat"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
    (b"7z\xbc\xaf\x27\x1c", "7z", "7z x -so"),
)


def _refuse_not_a_log(head: bytes, name: str) -> None:
    for magic, kind, reader in COMPRESSED:
        if head.startswith(magic):
            raise UserError(f"{name} is {kind}-compressed, not a text log: decompress it first, e.g. "
                            f"{reader} {'FILE' if name == 'standard input' else name} | gpu-garden triage -")
    # a model file given by mistake: its gigabytes of weights were read as text for minutes, then "the input is empty"
    # (a sparse or zero-filled file) or "no out-of-memory error found". A safetensors file opens with its header's
    # length (8 bytes, little-endian: its high half zero, a NUL no text log starts with) and the header's JSON; a GGUF
    # file with its magic and its version as a uint32, little- or big-endian (gguf-py writes either): any version from 1
    # to 0xFFFF in either order has two NUL bytes at one end, which four printable bytes never have (a log line
    # 'GGUF model ...' reads 0x6F6D2064 / 0x206D6F64); a zero header length (8 NULs) is no safetensors file.
    gguf = head.startswith(b"GGUF") and len(head) >= 8 and any(
        0 < int.from_bytes(head[4:8], order) < 0x10000 for order in ("little", "big"))
    tensors = head[4:8] == bytes(4) and head[:8] != bytes(8) and head[8:10] == b'{"'
    kind = "GGUF" if gguf else "safetensors" if tensors else None
    if kind:
        raise UserError(f"{name} is a {kind} model file, not a log: give the log the run printed (the model file's "
                        f"memory is what gpu-garden {'kv --gguf FILE or ' if kind == 'GGUF' else ''}estimate FILE reads)")


class _Prefixed(io.RawIOBase):
    """The bytes already taken from a stream, then the rest of it: what _head hands on when a short read made it read."""

    def __init__(self, head: bytes, rest):
        self._head, self._rest = head, rest

    def readable(self):
        return True

    def readinto(self, b):
        if self._head:
            n = min(len(b), len(self._head))
            b[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._rest.read1(len(b)) if hasattr(self._rest, "read1") else self._rest.read(len(b))
        b[:len(data)] = data
        return len(data)


class _Counted(io.RawIOBase):
    """A stream passed on as read, counting its bytes and whether any is text: a file of NULs (truncate -s 100M)
    read as no line at all was reported as 'the input is empty (0 lines)'. Spaces, tabs and newlines are text (a
    blank file was called 'none printable')."""
    BLANK = bytes(b for b in range(32) if b not in b"\t\n\x0b\x0c\r") + b"\x7f"  # NUL, control characters, DEL
    # (fixB D) the bytes no text log holds, counted to say how much of a file is binary: those above but ESC (ANSI colours)
    # and backspace (progress bars), and each byte that is not UTF-8 (the decoder's U+FFFD)
    CONTROL = BLANK.translate(None, b"\x1b\x08")

    def __init__(self, rest):
        self._rest, self.n, self.text, self.binary = rest, 0, False, 0
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    def readable(self):
        return True

    def readinto(self, b):
        data = self._rest.read1(len(b)) if hasattr(self._rest, "read1") else self._rest.read(len(b))
        b[:len(data)] = data
        self.n += len(data)
        if not self.text and data.translate(None, self.BLANK):
            self.text = True
        self.binary += len(data) - len(data.translate(None, self.CONTROL)) + self._utf8.decode(data, not data).count("\ufffd")
        return len(data)


def _head(stream, n: int):
    """A stream's first n bytes (fewer only at its end) without losing them: (head, the stream to read from the first
    byte). A pipe hands out short reads, so peek may show fewer than n bytes while more are on the way (`(head -c1 x.gz;
    sleep 1; tail -c +2 x.gz) | gpu-garden triage`): then they are read until n or the end, and put back in front."""
    if not hasattr(stream, "peek"):
        return b"", stream
    head = stream.peek(n)[:n]
    if len(head) >= n or not head:
        return head, stream
    got = b""
    while len(got) < n:
        data = stream.read1(n - len(got)) if hasattr(stream, "read1") else stream.read(n - len(got))
        if not data:
            break
        got += data
    return got, io.BufferedReader(_Prefixed(got, stream))


# (fixB D) a file with no failure found and this share of its bytes binary (NUL, control, not UTF-8) is called no text log:
# random bytes are ~55 % binary by this count, a log with a few stray NULs or Latin-1 accents well under 1 %
NOT_TEXT_SHARE = 0.10


def _read_log(stream, name: str) -> dict:
    """Triage of a byte stream, looked at first without consuming it (peek: a pipe, /dev/fd/N or standard input cannot
    seek back): a compressed file or a model file is refused; a UTF-16 log (with its byte-order mark: PowerShell 5's `>` and Out-File
    write UTF-16LE) is read as text, not as bytes with a NUL after every character; one without the mark too, told by
    its alternating NULs (utf16_sniff)."""
    head, stream = _head(stream, SNIFF_BYTES)
    utf16 = utf16_encoding(head)
    _refuse_not_a_log(head, name)
    counted = _Counted(stream)
    stream = io.BufferedReader(counted, 1 << 16)
    if utf16:
        text = io.TextIOWrapper(stream, encoding=utf16, errors="replace")
        try:
            res = triage_stream(text)
        finally:
            text.detach()  # the caller's stream stays open (standard input) or is closed by the caller
    else:
        res = triage_stream(stream)
    if not res["found"] and counted.n and not counted.text:
        res = dict(res, no_text=True, bytes=counted.n)
    elif not res["found"] and not utf16 and counted.binary >= NOT_TEXT_SHARE * counted.n > 0:
        res = dict(res, not_text=True, bytes=counted.n, binary_bytes=counted.binary)     # (fixB D) UTF-16's NULs are text
    return res


def for_json(obj):
    """The result as --json prints it: a "limit" at PyTorch's no-limit sentinel (2^64, "no memory fraction set"; the
    text says "no limit") is null, which a JSON reader keeps exact where 18446744073709551616 loses precision (rev52 B)."""
    if isinstance(obj, dict):
        return {k: (None if k == "limit" and isinstance(v, int) and v >= NO_LIMIT else for_json(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [for_json(v) for v in obj]
    return obj


def run_cli(args) -> int:
    path = getattr(args, "file", "-") or "-"
    if path == "-":
        if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:   # `gpu-garden triage <&-`: no file descriptor 0
            raise UserError("standard input is closed: give a log file (gpu-garden triage FILE) or pipe one in")
        res = _read_log(sys.stdin.buffer, "standard input")
    else:
        import os
        if os.path.isdir(path):
            raise UserError(f"{path} is a directory, not a log file")
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            raise UserError(f"no such file: {path}") from None
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
        with fh:
            res = _read_log(fh, path)
    if getattr(args, "json", False):
        print(json.dumps(for_json(res), indent=2))
    else:
        print(render_human(res))
    return 0 if res["found"] else 1


def demo_section(as_json: bool = False):
    from pathlib import Path
    sample = Path(__file__).parent / "samples" / "comfyui_vae_decode_oom.log"
    try:
        text = sample.read_text(encoding="utf-8")
    except OSError as exc:
        return {"error": f"sample log missing: {exc}"} if as_json else f"sample log missing: {exc}"
    res = triage_text(text)
    if as_json:
        return dict(for_json(res), sample=sample.name)
    head = f"Triage of a bundled ComfyUI log ({sample.name}, modelled on a public report):\n"
    return head + render_human(res)
