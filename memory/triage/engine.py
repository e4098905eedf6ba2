"""`gpu-garden triage`: find the out-of-memory errors in a log, rank their causes, attach the guide.

The log is streamed in 1 MiB chunks and never held whole. A few C-speed `bytes.find` passes per chunk
(oom_parse.ANCHORS: "emory", "llocat", "Exception", ...) pick the lines worth decoding; every other line
costs nothing. What a failure needs from the lines around it (the model ComfyUI was loading, sampling
progress, a VAE decode, llama.cpp buffer sizes, vLLM's KV budget) is read back from the WINDOW bytes
before it, and the first HEAD bytes (startup: device, allocator, platform, flags) are read more widely.
Lines longer than LINE_CAP are cut into pieces, a huge line is read around its first anchor, so memory
stays bounded whatever the input: 100 MB in about 2 s with a ~5 MB heap (benchmarks/bench_triage.py).

An *incident* is one failure as the log shows it: ComfyUI prints the allocator message in its
`!!! Exception during processing !!!` line, again at the end of the traceback, then `Got an OOM`;
llama.cpp prints cudaMalloc, the buffer, then the kv-cache or compute failure, then Ollama wraps it.
Those lines are one event. Each event gets causes from the fixed vocabulary below, each with evidence.
"""
import collections
import re
import json
import math
import sys

from . import guides as guides_mod
from . import parse as P
from ..errors import UserError
from ..units import GiB, MiB, fmt_bytes

CAUSES = ("fragmentation", "weights-exceed-vram", "activations", "vae-decode", "text-encoder",
          "other-process", "kv-cache", "host-ram", "leak", "other")

CHUNK = 1 << 20
LINE_CAP = 2 << 20          # a 1 MB line is looked at whole; longer ones in 2 MiB pieces
HEAD = 4 << 20              # the first 4 MiB (startup lines) are read with the wider HEAD_ANCHORS
WINDOW = 48 << 10           # bytes before a failure read for its context
GAP = 200                   # lines after the last OOM line that still belong to the same incident
MAX_EVENTS = 200            # kept in full; older ones are counted only
MAX_FRAMES = 80
MAX_EVENT_LINES = 200       # recognised lines kept per event

# --- what ComfyUI's nodes, model classes and traceback frames say about the phase ------------

VAE_WORDS = ("vae", "autoencoder", "decode", "encode_tiled", "decode_tiled")
TE_MODEL_WORDS = ("clip", "tencoder", "temodel", "textencoder", "t5", "umt5", "llama", "qwen25", "gemma", "mistral", "bert")


def node_category(node_type: str | None):
    if not node_type:
        return None
    n = node_type.lower()
    if "vae" in n or "decode" in n and "text" not in n:
        return "vae-decode"
    if "textencode" in n or "cliptextencode" in n or n.startswith("clip") and "encode" in n or "textencoder" in n:
        return "text-encoder"
    if "sampler" in n or "sample" in n or "upscale" in n or "detailer" in n:
        return "activations"
    if "loader" in n or n.startswith("load"):
        return "weights-exceed-vram"
    return None


def model_category(cls: str):
    c = cls.lower()
    if c in ("autoencoderkl", "autoencodingengine", "vae", "wanvae", "videovae") or "vae" in c or c.startswith("autoencod"):
        return "vae-decode"
    if "clip" in c or "temodel" in c or "textencoder" in c or c.endswith("tencoder") or "t5" in c:
        return "text-encoder"
    return "activations"


def frame_category(path: str, func: str):
    p = path.replace("\\", "/").lower()
    if p.endswith("torch/nn/modules/module.py") and func in ("convert", "_apply", "to", "cuda"):
        return "weights-exceed-vram"      # model.to(device): moving the weights
    if "/torch/" in p or "site-packages/torch" in p or "/accelerate/" in p:
        return None
    if func in ("load_models_gpu", "model_load", "partially_load", "patch_weight_to_device", "_load_list", "load_state_dict",
                "load_diffusion_model", "load_checkpoint_guess_config") or ("model_patcher.py" in p and func in ("load", "patch_model")):
        return "weights-exceed-vram"
    if any(w in p for w in ("sd1_clip.py", "text_encoders/", "clip_model.py", "/t5.py", "sdxl_clip", "flux_clip", "hunyuan_video_clip")) \
            or func in ("encode_token_weights", "encode_from_tokens", "encode_from_tokens_scheduled"):
        return "text-encoder"
    if any(w in p for w in ("diffusionmodules/model.py", "/vae.py", "autoencoder", "/wan/vae", "causal_conv", "taesd")) \
            or (p.endswith("comfy/sd.py") and func in ("decode", "decode_tiled", "decode_tiled_", "decode_tiled_3d", "encode", "encode_tiled")) \
            or func in ("vae_decode", "decode_latents", "decode_tiled"):
        return "vae-decode"
    if any(w in p for w in ("samplers.py", "k_diffusion", "sampler_helpers", "model_base.py", "ldm/modules/attention.py",
                            "openaimodel.py", "comfy/ldm/", "model_patcher.py")) or func in ("sample", "apply_model", "sampling_function"):
        return "activations"
    return None


def nodes_py_category(path: str, func: str):
    """The node entry point: ComfyUI's nodes.py functions name the node (VAEDecode.decode, KSampler.sample ...)."""
    p = path.replace("\\", "/").lower()
    if not p.endswith("nodes.py") and "custom_nodes" not in p and "comfy_extras" not in p:
        return None
    if func in ("decode", "decode_tiled", "vae_decode"):
        return "vae-decode"
    if func in ("sample", "common_ksampler", "sample_custom"):
        return "activations"
    if func in ("encode",) and "clip" in p:
        return "text-encoder"
    return None


_WRAPPABLE = __import__("re").compile(r"out of memory\. Tried to allocate|(?:CUDA|HIP|XPU) out of memory\.\s*$|max seq len|KV cache is needed|on startup is less than|"
                                      r"MPS backend out of memory|DefaultCPUAllocator|model requires more system memory")


LONG_LINE = 20000


def _family(kind: str) -> str:
    return "llm-server" if kind.startswith(("vllm",)) else "ggml" if kind.startswith(("ggml", "ollama")) else "torch"


def _around_anchor(raw: bytes) -> bytes:
    """A huge line (a JSON dump, a progress bar without newlines): keep the part around its first anchor,
    where a message and its numbers are."""
    hits = [i for i in (raw.find(a) for a in P.HEAD_ANCHORS) if i >= 0]
    i = min(hits) if hits else 0
    return raw[max(0, i - 2000):max(0, i - 2000) + LONG_LINE]


def _following(block: bytes, end: int, n: int = 5) -> list:
    out, pos = [], end
    for _ in range(n):
        if pos >= len(block) - 1:
            break
        nxt = block.find(b"\n", pos + 1)
        if nxt < 0:
            nxt = len(block)
        out.append(P.clean(block[pos + 1:min(nxt, pos + 1 + 4096)]))
        pos = nxt
    return out


_LOAD_RE = re.compile(rb"Requested to load (\w+)")
_STREAM_ONLY = {"prompt_done", "exception_block", "frame", "got_prompt",
                "requested_load", "progress", "progress_done", "decode_phase"}
_GGML_FLAG = {"--ubatch-size": "ub", "--ctx-size": "c", "--batch-size": "b", "--n-gpu-layers": "ngl"}


# --- scanning -------------------------------------------------------------------------------------

class Incident:
    __slots__ = ("primary", "events", "first_line", "last_line", "frames", "load", "progress_done", "hints", "lines",
                 "recoverable_only", "successes_before", "node_type", "phase", "index", "has_exception_block", "inner", "ggml_phase", "texts")

    def __init__(self, ev, lineno, scan):
        self.primary = ev
        self.events = [ev]
        self.first_line = self.last_line = lineno
        self.frames = list(scan.pending_frames)
        self.load = list(scan.loads)
        self.progress_done = scan.progress_done
        self.hints = []
        self.lines = [lineno]
        self.texts = [ev["text"]]
        self.recoverable_only = bool(ev.get("recoverable"))
        self.successes_before = scan.successes
        self.index = scan.n_incidents
        self.has_exception_block = False
        self.inner = []
        self.ggml_phase = scan.ggml_phase
        self.phase = scan.phase
        self.node_type = scan.node_type if scan.node_type_line_recent(lineno) else None



def _line_starts(block: bytes, needles) -> set:
    """Offsets of the starts of the lines that contain any of `needles` (each line once per needle)."""
    starts = set()
    for k in needles:
        i = block.find(k)
        while i >= 0:
            starts.add(block.rfind(b"\n", 0, i) + 1)
            e = block.find(b"\n", i)
            if e < 0:
                break
            i = block.find(k, e)
    return starts

class Scan:
    def __init__(self):
        self.lineno = 0
        self.facts = {"os_votes": collections.Counter(), "args": set(), "device": None, "allocator": None, "torch_version": None,
                      "total_vram": None, "rocm": False, "dynamic_vram": False, "vllm": False, "ggml": False, "ollama": False,
                      "vllm_kv_mem": None, "vllm_kv_tokens": None, "vllm_model_mem": None, "vllm_util": None, "vllm_maxlen": None,
                      "ggml_n_ctx": None, "ggml_offloaded": None, "ggml_device_free": None, "ggml_bufs": collections.OrderedDict(),
                      "ollama_env": {}, "comfy": False, "ggml_args": {}}
        self.incidents = collections.deque(maxlen=MAX_EVENTS)
        self.n_incidents = 0
        self.cur = None
        self.open_ev = None          # an event still collecting follow-up lines (cudaMallocAsync block)
        self.open_left = 0
        self.pending_frames = collections.deque(maxlen=MAX_FRAMES)
        self.loads = collections.deque(maxlen=4)
        self.progress_done = False
        self.successes = 0
        self.ggml_phase = None
        self.run_failed = False
        self.ok_models = set()
        self.phase = None
        self.consumed_until = 0
        self.node_type = None
        self.node_type_line = 0
        self.bytes_seen = 0
        self.tail = b""
        self._src = None
        self._lineno = 0

    def node_type_line_recent(self, lineno):
        return self.node_type is not None and lineno - self.node_type_line <= GAP

    # -- input --
    def feed_stream(self, stream):
        carry = b""
        eof = False
        while not eof:
            parts, got, fresh = [carry] if carry else [], len(carry), 0
            while fresh < CHUNK:                   # pipes and sockets hand out short reads: gather a chunk
                data = stream.read(CHUNK - fresh)
                if not data:
                    eof = True
                    break
                if isinstance(data, str):
                    data = data.encode("utf-8", "replace")
                parts.append(data)
                got += len(data)
                fresh += len(data)
            buf = b"".join(parts)
            if not buf:
                break
            if eof:
                self._block(buf if buf.endswith(b"\n") else buf + b"\n")
                break
            cut = buf.rfind(b"\n")
            if cut < 0:
                if len(buf) >= LINE_CAP:           # one enormous line: look at it in pieces
                    self._block(buf, ends_line=False)
                    carry = b""
                else:
                    carry = buf
                continue
            self._block(buf[:cut + 1])
            carry = buf[cut + 1:]
            if len(carry) >= LINE_CAP:
                self._block(carry, ends_line=False)
                carry = b""
        self._close_all()

    def feed_text(self, text: str):
        import io
        self.feed_stream(io.BytesIO(text.encode("utf-8", "replace")))

    def _starts(self, block: bytes) -> list:
        """Offsets of the lines worth reading: anchor lines, and in the log's head also its startup lines."""
        return sorted(_line_starts(block, P.HEAD_ANCHORS if self.bytes_seen < HEAD else P.ANCHORS))

    def _block(self, block: bytes, ends_line=True):
        base = self.lineno
        pos_counted, line_at = 0, base
        for start in self._starts(block):
            end = block.find(b"\n", start)
            if end < 0:
                end = len(block)
            line_at += block.count(b"\n", pos_counted, start)
            pos_counted = start
            raw = block[start:min(end, start + LINE_CAP)]
            if len(raw) > LONG_LINE:
                raw = _around_anchor(raw)
            self._src = (block, start)
            if len(raw) < 160 and b"Prompt executed" in raw and b"emory" not in raw and b"OOM" not in raw:
                self._run_finished()          # the most frequent anchor line: no need to decode it
                continue
            segs = [s for s in raw.split(b"\r") if s.strip()]
            for i, seg in enumerate(segs):
                more = (lambda n=5, e=end: _following(block, e, n)) if i == len(segs) - 1 else (lambda n=5: [])
                self._line(line_at + 1, P.clean(seg), more)
        self.bytes_seen += len(block)
        self.tail = block[-WINDOW:] if len(block) >= WINDOW else (self.tail + block)[-WINDOW:]
        if ends_line:
            self.lineno = base + block.count(b"\n")

    def _window_before(self, block: bytes, start: int) -> bytes:
        if start >= WINDOW:
            return block[start - WINDOW:start]
        return self.tail[len(self.tail) - (WINDOW - start):] + block[:start] if self.tail else block[:start]

    def _run_finished(self):
        """ComfyUI printed "Prompt executed in": one run is over (successful unless it failed)."""
        if not self.run_failed:
            self.successes += 1
            block, start = self._src
            if start < WINDOW and self.tail:       # the run began in an earlier chunk
                block, start = self._window_before(block, start), min(WINDOW, len(self.tail) + start)
            lo = max(0, start - WINDOW)
            prev = block.rfind(b"Prompt executed", lo, start)
            pos = block.find(b"\n", prev) + 1 if prev >= 0 else lo
            while True:
                i = block.find(b"Requested to load ", pos, start)
                if i < 0:
                    break
                m = _LOAD_RE.match(block, i, min(start, i + 200))
                if m:
                    self.ok_models.add(m.group(1).decode("ascii", "replace"))
                pos = i + 18
        self.run_failed = False
        self._close()
        self.pending_frames.clear()
        self.loads.clear()
        self.progress_done = False
        self.phase = None

    def _context(self):
        """Read the log just before this line for what the anchor scan skips: the model ComfyUI was loading,
        sampling progress, a VAE decode, llama.cpp buffer sizes, vLLM's budget, startup facts. Only this run's
        part counts."""
        raw = self._window_before(*self._src) if self._src else b""
        cut = raw.rfind(b"Prompt executed")
        if cut >= 0:
            raw = raw[raw.find(b"\n", cut) + 1:]
        if not raw:
            return
        self.loads.clear()
        self.phase = None
        pos = 0
        while True:                                  # every load of this run (for "ran fine before")
            i = raw.find(b"Requested to load ", pos)
            if i < 0:
                break
            e = raw.find(b"\n", i)
            m = re.match(rb"Requested to load (\w+)", raw[i:e if e >= 0 else len(raw)])
            if m:
                self.loads.append(m.group(1).decode("ascii", "replace"))
            pos = i + 18
        last = self.loads[-1] if self.loads else None
        load_at = raw.rfind(b"Requested to load ")
        prog_at = raw.rfind(b"%|")
        if last:
            self.phase = ("load", last)
        if prog_at > load_at:
            done = raw.rfind(b"100%|") >= prog_at - 4
            self.phase = ("done" if done else "progress", last)
            self.progress_done = done
        if P.DECODE_RE.search(raw, raw.rfind(b"\n", 0, max(load_at, prog_at, 0)) + 1):
            self.phase = ("decode", None)
        for st in sorted(_line_starts(raw, P.WINDOW_KEYS)):
            e = raw.find(b"\n", st)
            self._facts(0, P.clean(raw[st:e if e >= 0 else len(raw)][:4096]), window=True)

    # -- one interesting line --
    def _line(self, lineno, text, more=lambda n=5: []):
        self._lineno = lineno
        if self.open_ev is not None:
            if P.add_async_fields(self.open_ev, text):
                if self.open_ev.get("complete") and not self.open_ev.get("_await_limit"):
                    self._place(self.open_ev, self.open_ev["_line"])
                    self.open_ev = None
                return
            self.open_left -= 1
            if self.open_left <= 0 or P.recognise(text):
                self._place(self.open_ev, self.open_ev["_line"])
                self.open_ev = None
        if self.cur is not None and lineno - self.cur.last_line > GAP:
            self._close()
        self._facts(lineno, text)
        if lineno <= self.consumed_until:
            return
        ev = P.recognise(text)
        if (ev is None or not ev.get("complete")) and _WRAPPABLE.search(text):
            # a message wrapped over several lines (pasted logs, narrow terminals): join and look again
            following = more()
            for k in range(1, len(following) + 1):
                joined = text.rstrip() + " " + " ".join(x.strip() for x in following[:k])
                ev2 = P.recognise(joined)
                if ev2 and ev2.get("complete") and (ev is None or P.PRIORITY.get(ev2["kind"], 0) >= P.PRIORITY.get(ev["kind"], 0)):
                    ev, text = ev2, joined
                    self.consumed_until = lineno + k
                    break
        if ev is None:
            return
        ev["text"] = text.strip()[:400]
        ev["_line"] = lineno
        if ev["kind"] == "torch.cuda_async" and not ev.get("complete"):
            # the numbers follow on the next lines: read them now
            following = more(8)
            for k, nxt in enumerate(following, 1):
                if P.add_async_fields(ev, nxt):
                    self.consumed_until = lineno + k
                if ev.get("complete") and not ev.get("_await_limit"):
                    break
            if not ev.get("complete"):
                self.open_ev, self.open_left = ev, 8
                return
        self._place(ev, lineno)

    def _facts(self, lineno, text, window=False):
        f = self.facts
        for name, m in P.facts(text):
            if window and name in _STREAM_ONLY:
                continue
            if name == "device":
                f["device"] = m.group(2).strip()
                f["comfy"] = True
                if m.group(3):
                    f["allocator"] = "cudaMallocAsync" if m.group(3) == "cudaMallocAsync" else "native"
                if m.group(1) == "mps":
                    f["os_votes"]["darwin"] += 5
            elif name == "total_vram":
                f["total_vram"] = int(m.group(1)) * MiB
                f["comfy"] = True
            elif name == "torch_version":
                f["torch_version"] = m.group(1)
                if "rocm" in m.group(1):
                    f["rocm"] = True
            elif name == "platform":
                f["os_votes"][m.group(1).lower()] += 10
            elif name == "requested_load":
                self.loads.append(m.group(1))
                self.progress_done = False
                self.phase = ("load", m.group(1))
                f["comfy"] = True
                if self.cur is not None:
                    self.cur.hints.append(("late_load", m.group(1)))
            elif name == "dynamic_vram":
                f["dynamic_vram"] = True
            elif name == "prompt_done":
                self._run_finished()
            elif name == "node_type":
                self.node_type = m.group(1) or m.group(2) or m.group(3)
                self.node_type_line = self._lineno if window else lineno
                if self.cur is not None:
                    self.cur.node_type = self.node_type
            elif name == "exception_block":
                f["comfy"] = True
                if self.cur is not None and self.cur.has_exception_block:
                    self._close()
                self.pending_frames.clear()
                self._exception_pending = True
            elif name == "args":
                f["args"].add(m.group(1).split("=")[0].split(" ")[0] if m.group(1).startswith("--reserve") else m.group(1))
            elif name == "frame":
                fr = (m.group(1), m.group(2))
                if self.cur is not None:
                    if len(self.cur.frames) < MAX_FRAMES:
                        self.cur.frames.append(fr)
                else:
                    self.pending_frames.append(fr)
                p = m.group(1).replace("\\", "/")
                if "/comfy/" in p or "execution.py" in p or "ComfyUI" in p:
                    f["comfy"] = True
            elif name == "progress_done":
                self.progress_done = True
                self.phase = ("done", self.phase[1] if self.phase else None)
            elif name == "decode_phase":
                self.phase = ("decode", None)
            elif name == "progress":
                if not self.phase or self.phase[0] == "load":
                    self.phase = ("progress", self.phase[1] if self.phase else None)
            elif name == "vllm_kv_mem":
                f["vllm_kv_mem"] = P.size(m.group(1) + " GiB")
            elif name == "vllm_kv_mem_v0":
                f["vllm_kv_mem"] = P.size(m.group(1) + " GiB")
            elif name == "vllm_kv_tokens":
                f["vllm_kv_tokens"] = int(m.group(1).replace(",", ""))
            elif name == "vllm_model_mem":
                f["vllm_model_mem"] = P.size(m.group(1) + " GiB")
            elif name == "vllm_util":
                try:
                    f["vllm_util"] = float(m.group(1))
                except ValueError:
                    pass
            elif name == "vllm_maxlen":
                f["vllm_maxlen"] = int(m.group(1) or m.group(2))
            elif name == "vllm_marker":
                f["vllm"] = True
            elif name == "ggml_kv_buf":
                f["ggml_bufs"]["kv:" + m.group(1)] = P.size(m.group(2) + " MiB")
                self.ggml_phase = "kv"
            elif name == "ggml_compute_buf":
                f["ggml_bufs"]["compute:" + m.group(1)] = P.size(m.group(2) + " MiB")
                self.ggml_phase = "compute"
            elif name == "ggml_model_buf":
                if "KV" not in text and "compute" not in text and "output" not in text:
                    f["ggml_bufs"]["model:" + m.group(1)] = P.size(m.group(2) + " MiB")
                    self.ggml_phase = "model"
            elif name == "ggml_args":
                for flag, val in P.FACTS_GGML_ARGS.findall(text):
                    f["ggml_args"][_GGML_FLAG.get(flag, flag.lstrip("-"))] = int(val)
            elif name == "comfy_report":
                f["comfy"] = True
            elif name == "ggml_n_ctx":
                f["ggml_n_ctx"] = int(m.group(1))
            elif name == "ggml_offloaded":
                f["ggml_offloaded"] = (int(m.group(1)), int(m.group(2)))
            elif name == "ggml_device_free":
                f["ggml_device_free"] = int(m.group(3)) * MiB
            elif name == "ggml_marker":
                f["ggml"] = True
            elif name == "ollama_marker":
                if "ollama" in text.lower() or "OLLAMA_" in text:
                    f["ollama"] = True
            elif name == "ollama_env":
                f["ollama_env"][m.group(1)] = m.group(2)
            elif name == "rocm":
                f["rocm"] = True
            elif name in ("windows", "darwin", "linux"):
                f["os_votes"][name] += 1
            elif name == "wsl":
                f["os_votes"]["wsl"] += 1
        if window:
            return
        if "Traceback (most recent call last)" in text and self.cur is None:
            self.pending_frames.clear()
        if "retrying without pipeline parallelism" in text and self.cur is not None:
            self.cur.hints.append(("recovered", "llama.cpp retried without pipeline parallelism"))

    # -- grouping lines into incidents --
    def _place(self, ev, lineno):
        cur = self.cur
        if cur is not None:
            prim = cur.primary
            same_numbers = ev["kind"] == prim["kind"] and ev.get("numbers") == prim.get("numbers")
            different_failure = (ev.get("complete") and P.PRIORITY.get(ev["kind"], 0) >= 9 and prim.get("complete")
                                 and P.PRIORITY.get(prim["kind"], 0) >= 9 and not same_numbers and not prim.get("recoverable"))
            # two programs writing into one log (interleaved): a failure from another runtime is its own event
            other_runtime = (_family(ev["kind"]) != _family(prim["kind"]) and P.PRIORITY.get(ev["kind"], 0) >= 6
                             and P.PRIORITY.get(prim["kind"], 0) >= 6)
            different_failure = different_failure or other_runtime
            if different_failure:
                self._close()
                cur = None
        if not ev.get("recoverable"):
            self.run_failed = True
        if cur is None:
            self._context()
            self.cur = Incident(ev, lineno, self)
            self.n_incidents += 1
            if getattr(self, "_exception_pending", False):
                self.cur.has_exception_block = True
                self._exception_pending = False
            return
        if len(cur.events) < MAX_EVENT_LINES:      # a log repeating one error forever stays bounded
            cur.events.append(ev)
        cur.last_line = lineno
        if len(cur.lines) < 50:
            cur.lines.append(lineno)
            cur.texts.append(ev["text"])
        if ev["kind"] == "ollama.runner" and ev.get("inner"):
            cur.inner.append(ev["inner"])
        if not ev.get("recoverable"):
            cur.recoverable_only = False
        if getattr(self, "_exception_pending", False):
            cur.has_exception_block = True
            self._exception_pending = False
        better = P.PRIORITY.get(ev["kind"], 0) > P.PRIORITY.get(cur.primary["kind"], 0)
        richer = ev["kind"] == cur.primary["kind"] and len(ev.get("numbers") or {}) > len(cur.primary.get("numbers") or {})
        if better or richer:
            cur.primary = ev

    def _close(self):
        if self.open_ev is not None:
            ev, self.open_ev = self.open_ev, None
            self._place(ev, ev["_line"])
        if self.cur is not None:
            self.incidents.append(self.cur)
            self.cur = None

    def _close_all(self):
        self._close()


# --- diagnosis --------------------------------------------------------------------------------------

def _env(scan: Scan, inc: Incident, context: dict):
    f = scan.facts
    ev = inc.primary
    ctx = context or {}
    votes = f["os_votes"]
    os_name = ctx.get("platform")
    if not os_name:
        best = max(("windows", "linux", "darwin"), key=lambda k: votes.get(k, 0))
        os_name = best if votes.get(best, 0) > 0 else None
    kinds = {e["kind"] for e in inc.events}
    backend = ctx.get("backend")
    if not backend:
        dk = next((e["device_kind"] for e in inc.events if e.get("device_kind")), None)
        backend = "rocm" if (dk == "rocm" or f["rocm"] and dk in (None, "cuda")) else dk
    runtime = ctx.get("runtime") or ("comfyui" if ctx.get("node_type") or ctx.get("loaded_models") is not None
                                      else _runtime(scan, inc))
    allocator = None
    if "torch.cuda_async" in kinds:
        allocator = "cudaMallocAsync"
    elif ev["kind"] in ("torch.cuda", "torch.hip") and ev.get("form") != "partial":
        allocator = "native"
    elif ctx.get("cuda_malloc_async") is not None:
        allocator = "cudaMallocAsync" if ctx["cuda_malloc_async"] else "native"
    elif f["allocator"]:
        allocator = f["allocator"]
    elif "backend:cudaMallocAsync" in f["args"]:
        allocator = "cudaMallocAsync"
    elif "--disable-cuda-malloc" in f["args"]:
        allocator = "native"
    elif runtime == "comfyui" and backend in (None, "cuda"):
        allocator = "cudaMallocAsync"     # ComfyUI's default on CUDA (cuda_malloc.py) unless --disable-cuda-malloc
    expandable_ok = (os_name != "windows" and backend in (None, "cuda") and allocator != "cudaMallocAsync")
    return {"os": os_name, "backend": backend or "cuda", "allocator": allocator, "runtime": runtime,
            "expandable_segments": expandable_ok, "wsl": votes.get("wsl", 0) > 0,
            "dynamic_vram": f["dynamic_vram"] and "--disable-dynamic-vram" not in f["args"]}


def _runtime(scan, inc):
    kinds = [e["kind"] for e in inc.events]
    f = scan.facts
    if any(k.startswith("ollama") for k in kinds) or (f["ollama"] and any(k.startswith("ggml") for k in kinds)):
        return "ollama"
    if any(k.startswith("ggml") for k in kinds):
        return "llama.cpp"
    if any(k.startswith("vllm") for k in kinds):
        return "vllm"
    if any(k.startswith("comfy") for k in kinds) or inc.has_exception_block:
        return "comfyui"
    if f["vllm"] and not f["comfy"]:
        return "vllm"
    paths = " ".join(p for p, _ in inc.frames).replace("\\", "/")
    if f["comfy"] or "/comfy/" in paths or "execution.py" in paths or "custom_nodes" in paths:
        return "comfyui"
    if f["ggml"] and any(k in ("cuda.driver",) for k in kinds):
        return "llama.cpp"
    return "pytorch"


class Scores:
    def __init__(self):
        self.s = collections.defaultdict(float)
        self.ev = collections.defaultdict(list)

    def add(self, cause, score, evidence):
        self.s[cause] += score
        if evidence and evidence not in self.ev[cause]:
            self.ev[cause].append(evidence)

    def ranked(self):
        if not self.s:
            self.add("other", 1.0, "an out-of-memory error without numbers or context")
        total = sum(max(v, 0) for v in self.s.values()) or 1.0
        out = [{"id": c, "confidence": round(max(v, 0) / total, 2), "evidence": self.ev[c][:6]}
               for c, v in sorted(self.s.items(), key=lambda kv: (-kv[1], CAUSES.index(kv[0]))) if v > 0]
        return out


def _b(n):
    return fmt_bytes(n)


def diagnose(scan: Scan, inc: Incident, context: dict | None, env: dict) -> list:
    sc = Scores()
    ev = inc.primary
    k = ev["kind"]
    n = ev.get("numbers") or {}
    f = scan.facts
    ctx = context or {}
    hint_weight = 1.0
    comfy = env["runtime"] == "comfyui"

    # numbers from the allocator message
    if k in ("torch.cuda", "torch.hip", "torch.xpu") and "total" in n:
        req, total = n.get("requested") or 0, n["total"]
        free = n["free"] if n.get("free") is not None else max(0, total - (n.get("reserved") or 0))
        ru = n.get("reserved_unallocated")
        reserved = n.get("reserved")
        allocated = n.get("allocated")
        short = max(req - free, 0)
        if _impossible(sc, req, total, free, n.get("allowed")):
            pass
        elif ru is not None and req and ru >= req and ru >= 64 * MiB:
            # the cached slack would have served the request had it been in one piece; when the slack is a
            # sliver of the card, the card is simply full and fragmentation only decided which request failed
            sc.add("fragmentation", 3.2 if ru >= 0.02 * total else 1.4,
                   f"{_b(ru)} reserved by PyTorch but unallocated >= the {_b(req)} requested: the cache has room, but not in one piece")
        elif ru is not None and req and ru >= 0.5 * req and ru >= 256 * MiB and ru >= 0.08 * total:
            sc.add("fragmentation", 1.4, f"{_b(ru)} reserved but unallocated, {ru / total:.0%} of the card")
        others = n.get("other_processes")
        if others is None and n.get("this_process") is not None:
            others = max(0, total - free - n["this_process"])
        if others is not None:
            if others >= max(1.5 * GiB, 0.1 * total) and others >= short:
                sc.add("other-process", 3.0, f"other processes hold {_b(others)} on this GPU; freeing them covers the {_b(short)} shortfall")
            elif others >= 0.15 * total:
                sc.add("other-process", 1.5, f"other processes hold {_b(others)} ({others / total:.0%} of the card)")
        elif reserved is not None:
            # no per-process report (Windows, containers, old PyTorch): what is neither free nor PyTorch's
            # belongs to the CUDA context (~0.3-1 GiB) and to other programs
            nt = total - free - reserved
            if nt >= 0.5 * total and nt >= short:
                sc.add("other-process", 3.0, f"{_b(nt)} of the {_b(total)} card is used outside PyTorch: another program holds it")
            elif nt - GiB >= max(GiB, 0.15 * total) and nt - GiB >= short:
                sc.add("other-process", 1.6, f"{_b(nt)} of the card is used outside PyTorch (other programs, or non-PyTorch libraries)")
        if req >= 0.5 * total:
            sc.add("activations", 2.4, f"one request of {_b(req)} is {req / total:.0%} of the {_b(total)} card: the tensor itself is too large for this resolution, length or batch")
        elif (comfy and allocated is not None and allocated >= 0.85 * (n.get("allowed") or total)
              and req <= 0.05 * total):
            # inference: what PyTorch holds is mostly weights
            sc.add("weights-exceed-vram", 1.6, f"PyTorch already holds {_b(allocated)} of {_b(total)} and fails on a small {_b(req)} request")
            sc.add("activations", 1.0, f"{_b(req)} requested with {_b(free)} free")
        else:
            sc.add("activations", 1.5, f"{_b(req)} requested with {_b(free)} free of {_b(total)}")
    elif k == "torch.cuda_async":
        req, lim, free, alloc = n.get("requested") or 0, n.get("device_limit"), n.get("free") or 0, n.get("allocated") or 0
        if lim and _impossible(sc, req, lim, free, n.get("limit") if (n.get("limit") or 0) < lim else None):
            pass
        elif lim:
            others = lim - free - alloc
            if others >= max(2 * GiB, 0.15 * lim):
                sc.add("other-process", 2.6, f"{_b(others)} of the {_b(lim)} card is used outside PyTorch's allocations (other programs, or this process's CUDA context)")
            elif others >= 1.2 * GiB and others >= req - free:
                sc.add("other-process", 1.3, f"{_b(others)} used outside PyTorch; freeing it would cover the request")
            if req >= 0.5 * lim:
                sc.add("activations", 2.4, f"one request of {_b(req)} is {req / lim:.0%} of the card")
            elif comfy and alloc >= 0.85 * lim and req <= 0.05 * lim:
                sc.add("weights-exceed-vram", 1.6, f"PyTorch holds {_b(alloc)} of {_b(lim)} and fails on a {_b(req)} request")
                sc.add("activations", 1.0, f"{_b(req)} requested with {_b(free)} free")
            else:
                sc.add("activations", 1.5, f"{_b(req)} requested with {_b(free)} free, {_b(alloc)} allocated of {_b(lim)}")
        else:
            sc.add("activations", 1.0, "cudaMallocAsync refused an allocation")
    elif k == "torch.mps":
        req, alloc, other, mx = n.get("requested") or 0, n.get("allocated") or 0, n.get("other_allocations") or 0, n.get("max_allowed")
        cap = mx or (alloc + other + req)
        if req >= 0.3 * cap:
            sc.add("activations", 2.4, f"one request of {_b(req)} is {req / cap:.0%} of the {_b(cap)} MPS limit")
        elif alloc >= 0.7 * cap and (comfy or alloc >= 0.85 * cap):
            sc.add("weights-exceed-vram", 1.5, f"MPS already holds {_b(alloc)} of {_b(cap)}")
            sc.add("activations", 1.2, f"{_b(req)} requested")
        else:
            sc.add("activations", 1.5, f"{_b(req)} requested; MPS {_b(alloc)}, other allocations {_b(other)}, limit {_b(mx)}")
    elif k == "torch.cpu":
        sc.add("host-ram", 8.0, f"the CPU allocator could not get {_b(n.get('requested'))} of system RAM")
    elif k == "python.memory_error":
        sc.add("host-ram", 8.0, "Python could not get system RAM (MemoryError)"
               + (f" for {_b(n['requested'])}" if n.get("requested") else ""))
    elif k == "ollama.system_memory":
        sc.add("host-ram", 4.0, "Ollama: model needs " + (f"{_b(n['required'])}, {_b(n['available'])} available" if "required" in n else "more system memory than is available"))
    elif k == "ggml.host":
        sc.add("host-ram", 4.0, f"ggml could not allocate {_b(n.get('requested'))} of host memory")
    elif k == "vllm.kv_max_len":
        if "kv_needed" in n:
            sc.add("kv-cache", 4.0, f"{_b(n['kv_needed'])} of KV cache needed for one full-length request, {_b(n['kv_available'])} available")
        else:
            sc.add("kv-cache", 4.0, f"max_model_len {n.get('max_model_len_tokens')} tokens > {n.get('kv_max_tokens')} tokens the KV cache can hold")
    elif k == "vllm.no_kv_blocks":
        kvm = f["vllm_kv_mem"]
        sc.add("weights-exceed-vram", 3.0, "no memory left for KV cache blocks after weights and activations"
               + (f" (Available KV cache memory: {_b(kvm)})" if kvm is not None else ""))
        sc.add("kv-cache", 1.5, "the KV cache gets what is left of gpu_memory_utilization x total")
        if f["vllm_model_mem"]:
            sc.add("weights-exceed-vram", 0.5, f"model loading took {_b(f['vllm_model_mem'])}")
    elif k in ("vllm.startup_free", "vllm.profile_race"):
        if k == "vllm.startup_free":
            sc.add("other-process", 4.0, f"only {_b(n['free'])} of {_b(n['total'])} free at startup; gpu_memory_utilization {n['gpu_memory_utilization_ratio']} asks for {_b(n['requested'])}")
        else:
            sc.add("other-process", 4.0, "another process released GPU memory while vLLM was profiling")
    elif k.startswith("ggml") or k == "ollama.runner" or k == "ollama.insufficient":
        _ggml(sc, scan, inc, n)
    elif k == "comfy.dynamic_vram":
        sc.add("other", 3.0, "ComfyUI Dynamic VRAM (comfy-aimdo) failed to map weights: " + ev["text"][:120])
        hint_weight = 0.3
    elif k == "torch.nvml_assert":
        sc.add("other", 1.8, "NVML assert while PyTorch built its out-of-memory report (MIG, WSL or Jetson): the OOM numbers are lost")
    elif k == "cuda.driver":
        sc.add("other-process", 1.2, "CUDA driver out of memory: often context creation while another process holds the card")
        sc.add("other", 1.0, "driver-level CUDA error without allocator numbers")
    elif k in ("cublas.alloc", "cudnn.alloc"):
        sc.add("activations", 1.4, f"{'cuBLAS' if k == 'cublas.alloc' else 'cuDNN'} could not allocate its workspace: the card was already full")
    elif k == "comfy.vae_tiled_fallback":
        pass
    else:
        sc.add("other", 1.0, "an out-of-memory error without numbers")

    # what the host measured at the failure (the OOM panel's probe snapshot)
    dev = _snapshot_device(ctx, ev)
    if dev and dev.get("other_processes") and dev.get("total") and "other-process" not in sc.s:
        op, tot = dev["other_processes"], dev["total"]
        if op >= max(1.5 * GiB, 0.1 * tot):
            sc.add("other-process", 2.8, f"at the failure other processes held {_b(op)} of the {_b(tot)} card (NVML)")
    # the rest of the log: the node, the traceback, the model being loaded, earlier runs
    _phase(sc, scan, inc, ctx, hint_weight, env)
    _history(sc, scan, inc)
    _session_history(sc, inc, ctx)
    return sc.ranked()


def _snapshot_device(ctx: dict, ev: dict):
    try:
        devs = (ctx.get("snapshot") or {}).get("devices") or []
    except AttributeError:
        return None
    idx = ev.get("device_index")
    for d in devs:
        if isinstance(d, dict) and (idx is None or d.get("index") == idx):
            return d
    return None


def _impossible(sc, req, total, free, allowed) -> bool:
    """Numbers no real shortage produces: the driver or the platform refused, not the memory."""
    if allowed:
        return False
    if free > total * 1.01:
        sc.add("other", 3.5, f"{_b(free)} free on a {_b(total)} card: the driver reports impossible numbers")
    elif req > 8 * total:
        sc.add("other", 3.5, f"a single {_b(req)} request on a {_b(total)} card: a size no workload asks for; a driver or build bug")
    elif req and free >= 4 * req and free >= 2 * GiB:
        sc.add("other", 3.5, f"the allocation of {_b(req)} failed with {_b(free)} free: the driver or platform refused it, not a lack of memory")
    else:
        return False
    return True


def _ggml(sc, scan, inc, n):
    kinds = [e["kind"] for e in inc.events]
    f = scan.facts
    texts = " | ".join(inc.texts + inc.inner)
    bufname = next((e["text"] for e in inc.events if e["kind"] == "ggml.buffer"), "")
    if "ollama.system_memory" in kinds:
        sc.add("host-ram", 4.0, "Ollama: not enough system memory")
    if "ggml.kv_cache" in kinds or "kv cache" in texts.lower():
        sc.add("kv-cache", 4.0, "llama.cpp: failed to allocate buffer for kv cache"
               + (f" (n_ctx {f['ggml_n_ctx']})" if f["ggml_n_ctx"] else ""))
    elif "ggml.model_load" in kinds or "error loading model" in texts:
        sc.add("weights-exceed-vram", 4.0, "llama.cpp could not allocate the model's weight buffer")
    elif "ggml.compute" in kinds:
        sc.add("activations", 3.4, "llama.cpp: failed to allocate compute buffers (the graph's scratch memory, grows with -ub/-b and context)")
        if f["ggml_n_ctx"] and f["ggml_n_ctx"] >= 32768:
            sc.add("kv-cache", 1.0, f"context of {f['ggml_n_ctx']} tokens")
    elif inc.ggml_phase == "model":
        sc.add("kv-cache", 2.6, "the model's buffers were allocated; the next allocation (the KV cache) failed")
    elif inc.ggml_phase in ("kv", "compute"):
        sc.add("activations", 2.6, "weights and KV cache were allocated; the compute buffer failed")
    elif "ggml.malloc" in kinds or "ggml.vulkan" in kinds or "ggml.buffer" in kinds:
        sc.add("weights-exceed-vram", 2.4, "device allocation failed while loading the model")
    elif "ollama.insufficient" in kinds:
        sc.add("weights-exceed-vram", 2.0, "Ollama's estimate: the model's allocations do not fit")
    ub = f["ggml_args"].get("ub")
    if ub and ub >= 4096 and not any(k in kinds for k in ("ggml.kv_cache", "ggml.model_load")):
        sc.add("activations", 2.6, f"-ub {ub}: a micro-batch of {ub} tokens makes the compute buffer several GiB")
    host = bufname if any(w in bufname for w in (" CPU buffer", "CUDA_Host", "CPU_Mapped")) else \
        next((t for t in inc.texts + inc.inner if "cpu_buffer_type_alloc_buffer" in t or "ggml_aligned_malloc" in t), "")
    if host:
        sc.add("host-ram", 3.5, "host (CPU) buffer allocation failed: " + host[:160])
    if n.get("requested"):
        sc.add(max(sc.s, key=sc.s.get) if sc.s else "weights-exceed-vram", 0.1, f"failed allocation: {_b(n['requested'])}")
    if not sc.s:
        sc.add("other", 1.0, "llama.cpp/Ollama allocation failure without detail")


def _phase(sc, scan, inc, ctx, w, env=None):
    comfy = (env or {}).get("runtime", _runtime(scan, inc)) == "comfyui"
    node = ctx.get("node_type") or inc.node_type
    cat = node_category(node)
    if cat:
        # a sampler node runs loading and sampling both: it hints, a VAE/encoder/loader node decides
        sc.add(cat, (1.0 if cat == "activations" else 4.0) * w, f"failing node: {node}")
    # traceback frames, innermost first: what the failing code was doing
    cats = []
    for path, func in reversed(inc.frames):
        c = frame_category(path, func)
        if c and c not in cats:
            cats.append(c)
            if len(cats) == 1:
                where = f"{func}() in {'/'.join(path.replace(chr(92), '/').split('/')[-3:])}"
    inner = cats[0] if cats else None
    if inner == "weights-exceed-vram" and any(c in ("text-encoder", "vae-decode") for c in cats[1:]):
        # loading the text encoder or the VAE: that component is what does not fit
        part = next(c for c in cats[1:] if c in ("text-encoder", "vae-decode"))
        sc.add(part, 3.0 * w, f"traceback: loading weights ({where}) for the {part.replace('-decode', '')}")
        sc.add("weights-exceed-vram", 1.5 * w, f"traceback: {where}")
        inner = part
    elif inner:
        sc.add(inner, 3.0 * w, f"traceback: {where}")
    for path, func in inc.frames:
        outer = nodes_py_category(path, func)
        if outer and outer not in cats:
            # a node's FUNCTION names what it does: decode()/encode() are decisive, sample() runs load and sampling both
            sc.add(outer, (1.2 if outer == "activations" else 2.0) * w,
                   f"node entry point: {func}() in {path.replace(chr(92), '/').rsplit('/', 1)[-1]}")
            break
    kinds = {e["kind"] for e in inc.events}
    if "comfy.vae_tiled_fallback" in kinds:
        tiled = next(e for e in inc.events if e["kind"] == "comfy.vae_tiled_fallback")
        sc.add("vae-decode", 3.6 * w, "ComfyUI: " + tiled["text"][:140])
    # ComfyUI's own log: the last "Requested to load X" and whether sampling had started since
    if inc.phase and inc.phase[0] == "decode" and not cat and inner in (None, "activations"):
        sc.add("vae-decode", 2.6 * w, "the log shows a VAE decode running when it failed")
    elif comfy and inc.phase and not cat and inner in (None, "weights-exceed-vram", "activations"):
        state, model = inc.phase
        mc = model_category(model) if model else None
        if state == "load" and mc in ("text-encoder", "vae-decode"):
            sc.add(mc, 2.2 * w, f"ComfyUI was loading {model} (a {mc.replace('-decode', '')}) when it failed")
        elif state == "load" and model:
            sc.add("weights-exceed-vram", 1.5 * w, f"ComfyUI was loading {model} when it failed; sampling had not started")
        elif state == "progress":
            sc.add("activations", 1.0 * w, f"sampling {model or ''} had started".replace("  ", " "))
        elif state == "done" and mc in (None, "activations"):
            sc.add("vae-decode", 1.0 * w, "sampling had finished (100%) before the error: decode phase")
    lm = ctx.get("loaded_models") or []
    tes = [m for m in lm if m.get("is_text_encoder") and (m.get("bytes") or 0) > 0]
    if tes and cat in (None, "activations") and not inner == "text-encoder":
        size = sum(m.get("bytes") or 0 for m in tes)
        if size >= GiB:
            sc.add("text-encoder", 1.2 * w, f"text encoder still in VRAM during the failure: {', '.join(m.get('name', '?') for m in tes)[:120]} ({_b(size)})")


def _history(sc, scan, inc):
    prior = [i for i in scan.incidents if i.index < inc.index and not i.recoverable_only]
    if inc.recoverable_only:
        return
    model = inc.phase[1] if inc.phase else None
    if model and model in scan.ok_models:
        sc.add("leak", 2.5, f"{model} ran fine in an earlier run of this log and fails now: memory was not returned in between")
    if not prior:
        if inc.successes_before >= 1:
            sc.add("leak", 1.3, f"the same log shows {inc.successes_before} successful run(s) before this failure: "
                                "memory may not be returned between runs")
        return
    ev, pev = inc.primary, prior[-1].primary
    a, pa = (ev.get("numbers") or {}).get("allocated"), (pev.get("numbers") or {}).get("allocated")
    if a and pa and a > pa * 1.05 and a - pa >= 256 * MiB:
        sc.add("leak", 3.6, f"allocated memory grew from {_b(pa)} to {_b(a)} between failures")
    if inc.successes_before >= 1:
        sc.add("leak", 1.2,
               f"OOM #{len(prior) + 1} in this log, after {inc.successes_before} successful run(s): memory is not returned between runs")
    elif len(prior) >= 2:
        sc.add("leak", 1.0, f"OOM #{len(prior) + 1} in this log")


def _session_history(sc, inc, ctx):
    """Earlier OOMs of the same host process (context "previous_ooms", oldest first, each with its numbers),
    which the log text of one failure cannot show: the OOM panel passes them."""
    kind = inc.primary.get("kind")
    prior = [p for p in ctx.get("previous_ooms") or () if isinstance(p, dict) and p.get("kind") in (None, kind)]
    if not prior or inc.recoverable_only:
        return
    a = (inc.primary.get("numbers") or {}).get("allocated")
    pa = (prior[-1].get("numbers") or {}).get("allocated")
    # Only growth counts: the same failure repeated on retry is the same problem, not a leak.
    if a and pa and a > pa * 1.05 and a - pa >= 256 * MiB:
        sc.add("leak", 3.6, f"allocated memory grew from {_b(pa)} at the previous OOM of this ComfyUI session to {_b(a)} now")


# --- results --------------------------------------------------------------------------------------

def _params(inc, env, scan, context):
    """Numbers the guides fill in: --reserve-vram, --max-model-len, --gpu-memory-utilization, -ngl, -c."""
    n = inc.primary.get("numbers") or {}
    f = scan.facts
    p = {}
    if env.get("os") == "windows":
        p["launch"] = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"
    lat = (context or {}).get("latent") or {}
    try:
        area = int(lat.get("width") or 0) * int(lat.get("height") or 0)
        frames = int(lat.get("frames") or 1)
    except (TypeError, ValueError):
        area, frames = 0, 1
    # big images and long clips (the panel passes latent frames: 21 for 81 video frames): smaller tiles from the start
    if area >= 1536 * 1536 or (frames > 1 and area >= 1280 * 704) or frames >= 16:
        p["tile_size"], p["overlap"] = 256, 32
        p["temporal_size"], p["temporal_overlap"] = 32, 8
    total = n.get("total") or n.get("device_limit") or f["total_vram"]
    if not total and context and context.get("snapshot"):
        try:
            total = context["snapshot"]["devices"][0]["total"]
        except (KeyError, IndexError, TypeError):
            pass
    req, free = n.get("requested"), n.get("free")
    others = n.get("other_processes")
    if others is None and n.get("this_process") is not None and total and free is not None:
        others = max(0, total - free - n["this_process"])
    if others is None and n.get("device_limit") and free is not None and n.get("allocated") is not None:
        others = max(0, n["device_limit"] - free - n["allocated"])
    dev = _snapshot_device(context or {}, inc.primary)
    if dev and dev.get("other_processes"):
        others = max(others or 0, dev["other_processes"])
    if total:
        p["total_gib"] = f"{total / GiB:.1f}"
    if req:
        p["requested"] = _b(req)
    reserve = None
    if req is not None and free is not None:
        short = max(0, req - free)
        p["shortfall"] = _b(short)
        reserve = math.ceil((short / GiB + 0.6) * 10) / 10
    if others:
        reserve = max(reserve or 0, math.ceil((others / GiB + 0.5) * 10) / 10)
    if reserve is not None:
        if total:
            reserve = min(reserve, round(total / GiB / 2, 1))
        p["reserve_vram_gb"] = f"{max(reserve, 0.6):.1f}"
    if others:
        p["other_processes"] = _b(others)
    if n.get("reserved_unallocated") is not None:
        p["reserved_unallocated"] = _b(n["reserved_unallocated"])
    est = n.get("estimated_max_len_tokens")
    if not est and n.get("kv_needed") and n.get("kv_available", 0) > 0 and n.get("max_model_len_tokens"):
        est = int(n["max_model_len_tokens"] * n["kv_available"] / n["kv_needed"])
    if est:
        p["max_model_len"] = str(est // 256 * 256 if est >= 512 else est)
    elif n.get("kv_max_tokens"):
        t = n["kv_max_tokens"]
        p["max_model_len"] = str(t // 256 * 256 if t >= 512 else t)
    elif f["vllm_kv_tokens"]:
        p["max_model_len"] = str(min(8192, f["vllm_kv_tokens"] // 256 * 256))
    if inc.primary["kind"] == "vllm.startup_free" and n.get("total"):
        p["gpu_memory_utilization"] = f"{max(0.05, math.floor((n['free'] / n['total'] - 0.02) * 100) / 100):.2f}"
    if f["ggml_n_ctx"]:
        p["n_ctx"] = str(f["ggml_n_ctx"])
        p["n_ctx_half"] = str(max(2048, f["ggml_n_ctx"] // 2 // 256 * 256))
    off, dev_free = f["ggml_offloaded"], f["ggml_device_free"]
    model_bytes = sum(v for k2, v in f["ggml_bufs"].items() if k2.startswith("model:") and "CPU" not in k2 and "Host" not in k2)
    if off and dev_free and req:
        layers = off[0]
        per = max(req, model_bytes) / max(layers, 1)
        fit = int((dev_free - 1.5 * GiB) / per) if per else layers
        p["ngl"] = str(max(0, min(layers - 1, fit)))
    return p


def _event_dict(scan, inc, context):
    env = _env(scan, inc, context)
    causes = diagnose(scan, inc, context, env)
    ev = inc.primary
    device_kind = next((e["device_kind"] for e in inc.events if e.get("device_kind")), None) or env["backend"]
    if device_kind == "cuda" and env["backend"] == "rocm":
        device_kind = "rocm"
    params = _params(inc, env, scan, context)
    top = causes[0]["id"]
    guide = guides_mod.select(top, env["runtime"], env, params, kind=ev["kind"])
    numbers = dict(ev.get("numbers") or {})
    for other in sorted(inc.events, key=lambda e: -P.PRIORITY.get(e["kind"], 0)):
        for key, v in (other.get("numbers") or {}).items():
            numbers.setdefault(key, v)
    out = {
        "runtime": env["runtime"], "device_kind": device_kind, "kind": ev["kind"], "numbers": numbers,
        "causes": causes, "guide": guide, "line": ev.get("_line", inc.first_line), "lines": inc.lines[:20],
        "message": ev["text"], "recoverable": inc.recoverable_only or any(h[0] == "recovered" for h in inc.hints),
        "platform": {k: env[k] for k in ("os", "backend", "allocator", "expandable_segments")},
    }
    if env["runtime"] in ("vllm", "llama.cpp", "ollama") and top in ("kv-cache", "weights-exceed-vram", "activations"):
        sugg = _llm_suggestions(scan, inc, numbers, env["runtime"])
        if sugg:
            out["suggestions"] = sugg
            if guide is not None:
                lines = "\n".join(f"- `{x['text']}`: {x['reason']}" for x in sugg)
                guide["markdown"] = guide["markdown"].rstrip() + "\n\n**From this log's numbers** (memory/llm.py):\n\n" + lines + "\n"
                flags = " ".join(x["text"] for x in sugg if x.get("kind") == "flag")
                if flags:
                    guide["commands"].append({"label": "From this log's numbers", "text": flags})
    if "device_index" in ev:
        out["device_index"] = ev["device_index"]
    if ev.get("form"):
        out["form"] = ev["form"]
    return out


def _llm_suggestions(scan, inc, numbers, runtime) -> list:
    """Flags the LLM calculator derives from the numbers this log states (context, KV budget, failed buffer)."""
    f = scan.facts
    n = dict(numbers)
    for key, fact in (("kv_available", "vllm_kv_mem"), ("kv_tokens", "vllm_kv_tokens"), ("gpu_memory_utilization", "vllm_util"),
                      ("max_model_len", "vllm_maxlen"), ("n_ctx", "ggml_n_ctx"), ("free", "ggml_device_free")):
        if f.get(fact) is not None:
            n.setdefault(key, f[fact])
    if f.get("ggml_offloaded"):
        n.setdefault("n_gpu_layers", f["ggml_offloaded"][0])
        n.setdefault("n_layers", f["ggml_offloaded"][1])
    kv = sum(v for k, v in f["ggml_bufs"].items() if k.startswith("kv:"))
    if kv:
        n.setdefault("kv_buffer", kv)
    if any(e["kind"] == "ggml.compute" for e in inc.events):
        n["buffer"] = "compute"
    try:
        from ..llm import kv as llm
        return list(llm.suggest_flags_from_log(n, runtime) or [])[:6]
    except Exception:      # an optional helper: triage answers without it
        return []


def _result(scan: Scan, context=None) -> dict:
    events = [_event_dict(scan, inc, context) for inc in scan.incidents]
    hard = [e for e in events if not e["recoverable"]]
    last = (hard or events)[-1] if events else None
    return {"found": bool(events), "cause": last["causes"][0]["id"] if last else None,
            "events": events, "count": scan.n_incidents, "lines": scan.lineno}


def triage_stream(stream, context: dict | None = None) -> dict:
    scan = Scan()
    scan.feed_stream(stream)
    return _result(scan, context)


def triage_text(text: str, context: dict | None = None) -> dict:
    """The OOM panel's entry point: a message or a whole log, plus what the host knows (context keys:
    node_type, node_title, platform, backend, cuda_malloc_async, snapshot, loaded_models, latent, model_family,
    previous_ooms: earlier OOMs of the same host process, oldest first, each {"numbers": {...}, "kind": the
    message kind (events' "kind"), compared only with failures of the same kind})."""
    scan = Scan()
    scan.feed_text(text or "")
    return _result(scan, context)


def is_oom_error(exc_type_name: str, message: str) -> bool:
    """True when an exception is an out-of-memory error, by its type name or by its message."""
    name = (exc_type_name or "").rsplit(".", 1)[-1]
    if name in ("OutOfMemoryError", "OOMError", "MemoryError", "_ArrayMemoryError") or name.endswith("OutOfMemoryError"):
        return True
    msg = message or ""
    if not msg:
        return False
    if P.recognise(msg) or any(P.recognise(line) for line in msg[:20000].splitlines()[:100]):
        return True
    return False


# --- output -----------------------------------------------------------------------------------------

NUMBER_LABELS = [
    ("requested", "requested"), ("total", "total"), ("device_limit", "device limit"), ("free", "free"),
    ("allocated", "allocated by PyTorch"), ("reserved", "reserved by PyTorch"),
    ("reserved_unallocated", "reserved but unallocated"), ("private_pools", "in private pools"),
    ("this_process", "this process"), ("other_processes", "other processes"), ("allowed", "allowed (memory fraction)"),
    ("limit", "PyTorch limit"), ("other_allocations", "other allocations"), ("max_allowed", "max allowed"),
    ("required", "required"), ("available", "available"), ("kv_needed", "KV cache needed"), ("kv_available", "KV cache available"),
    ("free_initial", "free at start"), ("free_current", "free now"),
]


def render_numbers(nums: dict) -> str:
    parts = []
    for key, label in NUMBER_LABELS:
        if key in nums and nums[key] is not None:
            parts.append(f"{label} {fmt_bytes(nums[key])}")
    for key, v in nums.items():
        if key.endswith("_tokens"):
            parts.append(f"{key[:-7].replace('_', ' ')} {v} tokens")
        elif key.endswith("_ratio"):
            parts.append(f"{key[:-6].replace('_', ' ')} {v}")
        elif key in ("tile_size", "overlap"):
            parts.append(f"{key.replace('_', ' ')} {v}")
    return ", ".join(parts)


def render_human(res: dict, max_events: int = 3) -> str:
    if not res["found"]:
        return f"No out-of-memory error found ({res.get('lines', 0)} lines read)."
    out = []
    events = res["events"]
    last = next((e for e in reversed(events) if not e["recoverable"]), events[-1])
    top = last["causes"][0]
    where = f"{last['runtime']}, {last['device_kind'] or 'device'}"
    out.append(f"Cause: {top['id']} ({top['confidence']:.0%}) - {where}, line {last['line']}")
    if last["numbers"]:
        out.append("Numbers: " + render_numbers(last["numbers"]))
    for c in last["causes"][:3]:
        out.append(f"  {c['id']:<20} {c['confidence']:.0%}  " + "; ".join(c["evidence"][:2]))
    if res["count"] > 1:
        out.append(f"{res['count']} out-of-memory events in this log; this is the last one that failed.")
        earlier = [e for e in events if e is not last][-max_events:]
        for e in earlier:
            out.append(f"  line {e['line']}: {e['causes'][0]['id']}{' (recovered)' if e['recoverable'] else ''} - {e['message'][:100]}")
    g = last["guide"]
    if g:
        out.append("")
        out.append(f"== {g['title']} ==")
        out.append(g["markdown"].strip())
        for faq in g.get("faqs", []):
            out.append("")
            out.append(f"-- {faq['title']}")
            out.append(faq["markdown"].strip())
    return "\n".join(out)


def run_cli(args) -> int:
    path = getattr(args, "file", "-") or "-"
    if path == "-":
        res = triage_stream(sys.stdin.buffer)
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
            res = triage_stream(fh)
    if getattr(args, "json", False):
        print(json.dumps(res, indent=2))
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
        return dict(res, sample=sample.name)
    head = f"Triage of a bundled ComfyUI log ({sample.name}, modelled on a public report):\n"
    return head + render_human(res)
