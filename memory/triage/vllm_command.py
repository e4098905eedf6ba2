"""(fix66c) What a vLLM guide's command may say, from the settings the log shows: no `--quantization X` beside a
checkpoint that is already quantized, no `--max-num-batched-tokens N` that is already the value in force.

- vLLM refuses a --quantization that differs from the method in the checkpoint's config: ModelConfig._verify_quantization
  raises "Quantization method specified in the model config (X) does not match the quantization method specified in the
  `quantization` argument (Y)" (vllm/config.py; vllm-project/vllm#19050). The engine's config line prints the method in
  force ("quantization=awq_marlin"; None when the weights are not quantized). (fix66f, rev66b F3) The checkpoint's method
  is read from that config line only (facts "vllm_ckpt_quant"); a `--quantization X` the log's own command set, or
  (tri67) a Python call's quantization="X" (LLM(...): the config prints it unquoted, a call quotes it) (facts
  "vllm_own_quant") is kept in the printed command, and its X is then the engine config's too, not the checkpoint's (an
  fp8 online quantization of a bf16 checkpoint; dropping it would serve the weights at twice the size). A `-q` counts only
  on a line that runs vLLM (pip's `-q -U` is no quantization).
- max_num_batched_tokens: vLLM prints it where chunked prefill is on ("Chunked prefill is enabled with
  max_num_batched_tokens=N", vllm/config.py SchedulerConfig), or the command line sets it. Else (fix66f, rev66b F5) the
  default is the calculator's one rule (memory/llm/runtimes/vllm.py settings(): V1 `vllm serve` 2048 on a card under
  70 GiB or an A100, else 8192; V0 max(max_model_len, 2048), 2048 above 32K where chunked prefill turns on). The guide's
  flag stays only where it lowers that value; V0 without chunked prefill refuses a value under max_model_len, so there
  a smaller one is no fix either.
- (fix66c 6) the guides' `vllm serve MODEL` takes the model the log names, and the log's --tensor-parallel-size N: a
  command that drops it would load the whole model on one GPU."""
import re

from ..llm.runtimes import at_least, parse_version
from ..llm.runtimes.vllm import settings as vllm_settings
from ..errors import UserError
from .vllm_own_flags import carried
from .vllm_short_q import SHORT, quants as short_quants
from ..units import GiB

GUIDE_BATCHED = 4096          # the --max-num-batched-tokens vllm-weights.md suggests
V1_DEFAULT_FROM = (0, 8, 0)   # the V1 engine is the default from vLLM 0.8.0
V0_NAMED_FROM = (0, 7, 0)     # "Initializing a V0 LLM engine": the words vLLM prints from 0.7 on (the version it then is at least)
V0_CHUNKED_ABOVE = 32768      # V0 turns chunked prefill on above this max_model_len (vllm.py settings())
BIG_CARD = 70 * GiB           # vLLM's larger V1 defaults from here (engine/arg_utils.py _set_default_args_v1)

BATCHED_RE = re.compile(r"\bmax_num_batched_tokens=(\d{1,7})\b|--max-num-batched-tokens[ =](\d{1,7})\b|"
                        r"(?P<v0>\bInitializing a V0 LLM engine\b)|(?P<v1>\bInitializing a V1 LLM engine\b)|"
                        # the tensor-parallel size alone (facts "vllm_tp" is the larger of it and the pipeline's)
                        r"(?:\btensor_parallel_size=|--tensor-parallel-size[ =]|\s-tp[ =])(?P<tp>\d{1,4})\b|"
                        # (fix66f) the engine config's method (the checkpoint's, unless the command set one) and the command's
                        r"(?<![-\w])quantization=(?P<cq>[\w-]{1,40})|(?:--quantization[ =]|(?<![-\w])quantization=[\"'])(?P<uq>[\w-]{1,40})|"
                        + SHORT)     # vLLM's -q X: its value read by vllm_short_q (fix67f)
BATCHED_KEYS = ("max_num_batched_tokens=", "--max-num-batched-tokens", "V0 LLM engine", "V1 LLM engine",
                "tensor_parallel_size=", "--tensor-parallel-size", "-tp", "quantization", "-q")


def seen(f, m, text=None, carried="") -> None:
    """The "vllm_batched" fact's handler: every setting the line states (the engine config line has several). A `-q X`:
    vllm_short_q's reading (`carried`: the command's earlier lines, each ended by a backslash)."""
    short = None     # vllm_short_q.quants on the line, read once at its first -q (review rev66e #3)
    for m in BATCHED_RE.finditer(text) if text is not None else (m,):
        if m.group("v0"):
            f["vllm_v0"] = True
        elif m.group("v1"):
            f["vllm_v1"] = True
        elif m.group("tp"):
            f["vllm_tensor_parallel"] = max(f.get("vllm_tensor_parallel") or 1, int(m.group("tp")))
        elif m.group("cq"):
            f["vllm_ckpt_quant"] = m.group("cq").lower()
        elif m.group("uq"):
            f["vllm_own_quant"] = m.group("uq").lower()
        elif m.group("short"):
            short = short_quants(text or "", carried) if short is None else short
            if m.start("short") - 3 in short:
                f["vllm_own_quant"] = short[m.start("short") - 3]
        else:
            f["vllm_batched"] = int(m.group(1) or m.group(2))


def _version(f):
    """(known, version tuple or None): known False where the log names no vLLM version or one parse_version refuses."""
    ver = (f.get("runtime_version") or {}).get("vllm")
    if not ver:
        return False, None
    try:
        v = parse_version(ver, "vllm")
    except (UserError, ValueError, TypeError):      # (rev66b F4) a version it refuses ("0.x") exited 2: no version
        return False, None
    return v is not None, v


def _v0(f) -> bool:
    if f.get("vllm_v0"):
        return True
    known, v = _version(f)
    return not f.get("vllm_v1") and known and not at_least(v, *V1_DEFAULT_FROM)


def batched_in_force(f, card=None):
    """(tokens, why) of max_num_batched_tokens in force, else (None, None): the log's own setting, else vLLM's default for
    the engine, context and card the log shows (vllm.py settings(), the calculator's rule). V1 on a card the log does not
    size: (None, "card")."""
    if f.get("vllm_batched"):
        return f["vllm_batched"], "the log's own setting"
    v0 = _v0(f)
    known, version = _version(f)
    if v0:
        if not f.get("vllm_maxlen"):
            return None, None
        ctx = int(f["vllm_maxlen"])
        version = version if known else V0_NAMED_FROM
        knobs = {"vllm_engine": "v0"}
    else:
        # vLLM's logs name no card, and its V1 rule makes an A100 (80 GiB) 2048 like a small card: a card of 70 GiB or more
        # with no name is as unknown as no card (review rev66e #2)
        if not card or card >= BIG_CARD and not f.get("device"):
            return None, "card"
        ctx = int(f.get("vllm_maxlen") or 2048)
        knobs = {"vllm_engine": "v1" if f.get("vllm_v1") else None, "gpu_name": f.get("device"), "vllm_entrypoint": "serve"}
    try:
        n = vllm_settings(version, card, ctx, knobs)["max_batched"]
    except (UserError, ValueError, TypeError, KeyError):
        return None, None
    if v0:
        why = ("the V0 engine's default, max(max_model_len, 2048)" if ctx <= V0_CHUNKED_ABOVE else
               "the V0 engine turns chunked prefill on above 32K tokens, at 2048")
    else:
        why = ("the V1 engine's `vllm serve` default on a card under 70 GiB or an A100" if n < 8192 else
               "the V1 engine's `vllm serve` default on a card of 70 GiB or more")
    return n, why


def _no_util_fits(f, card) -> bool:
    """The log's figures (util_from_log.share_needed, the suggestion list's one rule) say no utilization fits."""
    if not card or f.get("vllm_util") is None or f.get("vllm_kv_mem") is None:
        return False
    from ..llm.util_from_log import share_needed
    need = share_needed({"total": card, "gpu_memory_utilization": f["vllm_util"], "kv_available": f["vllm_kv_mem"],
                         "log_model": (f.get("llm_model") or (None, None))[-1], "max_model_len": f.get("vllm_maxlen"),
                         "kv_cache_dtype": f.get("vllm_kv_dtype")})
    return bool(need) and need["util"] is None


def params(f, card=None) -> dict:
    """The vLLM guides' flags: quant_flag / batched_flag empty where the log makes them wrong, and the words saying why.
    `card`: the card's total the failure or the log gives (bytes), else None."""
    if not f.get("vllm"):
        return {}
    p = {}
    own, ckpt = f.get("vllm_own_quant"), f.get("vllm_ckpt_quant")
    if own and own != "none":
        p.update(quant_flag=f"--quantization {own} ", vllm_own_quant=own)     # the log's own method: kept
    elif ckpt and ckpt != "none":
        p.update(quant_flag="", vllm_quantized=ckpt)
    if _no_util_fits(f, card):
        p.update(util_flag="", no_util_fits=True)       # (fix66f, rev66b F9) no share up to 0.95 holds the log's figures
    n, why = batched_in_force(f, card)
    if why == "card":
        p.update(batched_flag="", batched_card_unknown=True)
    elif n is not None and (n <= GUIDE_BATCHED or (_v0(f) and not f.get("vllm_batched")
                                                  and int(f.get("vllm_maxlen") or 0) <= V0_CHUNKED_ABOVE)):
        p.update(batched_flag="", batched_in_force=str(n), batched_why=why)
    return p


# (fix66f, rev66b F8) a guide's line may set environment variables before the command ("VAR=value vllm serve MODEL")
_SERVE = re.compile(r"^((?:[A-Za-z_]\w{0,60}=\S{1,200}[ \t]{1,4}){0,8})vllm serve MODEL(?=\s|$)(.*)$", re.M)
_SAFE_MODEL = re.compile(r"[\w./:@+-]{1,200}")


def apply(guide, f, commands) -> None:
    """The rendered vLLM guide's `vllm serve MODEL ...` lines with the log's model and tensor-parallel size, and (fix67a) its
    own --kv-cache-dtype, --max-model-len, --trust-remote-code and environment (vllm_own_flags.py)."""
    if not guide or not f.get("vllm"):
        return
    model = (f.get("llm_model") or (None, None))[-1]
    model = model if model and _SAFE_MODEL.fullmatch(model) else None
    tp = f.get("vllm_tensor_parallel") or 1

    def line(m):
        rest = m.group(2)
        prefix, own = carried(m.group(1), rest, f.get("vllm_own"), f.get("vllm_kv_dtype"))     # (fix67a) the log's own settings
        rest = own + rest
        if tp > 1 and "--tensor-parallel-size" not in rest:
            rest = f" --tensor-parallel-size {tp}" + rest
        return prefix + "vllm serve " + (model or "MODEL") + rest
    md = _SERVE.sub(line, guide["markdown"])
    if md != guide["markdown"]:
        guide["markdown"] = md
        guide["commands"] = commands(md)
