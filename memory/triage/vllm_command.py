"""(fix66c) What a vLLM guide's command may say, from the settings the log shows: no `--quantization X` beside a
checkpoint that is already quantized, no `--max-num-batched-tokens N` that is already the value in force.

- vLLM refuses a --quantization that differs from the method in the checkpoint's config: ModelConfig._verify_quantization
  raises "Quantization method specified in the model config (X) does not match the quantization method specified in the
  `quantization` argument (Y)" (vllm/config.py; vllm-project/vllm#19050). The engine's config line prints the method in
  force ("quantization=awq_marlin"; None when the weights are not quantized): facts "vllm_wflags"["quant"].
- max_num_batched_tokens: vLLM prints it where chunked prefill is on ("Chunked prefill is enabled with
  max_num_batched_tokens=N", vllm/config.py SchedulerConfig), or the command line sets it. The V0 engine without chunked
  prefill takes max(max_model_len, 2048) (SchedulerConfig.__post_init__, _DEFAULT_MAX_NUM_BATCHED_TOKENS) and refuses a
  value under max_model_len, so there a smaller one is no fix either.
- (fix66c 6) the guides' `vllm serve MODEL` takes the model the log names, and the log's --tensor-parallel-size N: a
  command that drops it would load the whole model on one GPU."""
import re

from ..llm.runtimes import at_least, parse_version

GUIDE_BATCHED = 4096          # the --max-num-batched-tokens vllm-weights.md suggests
V0_DEFAULT_BATCHED = 2048     # vLLM's _DEFAULT_MAX_NUM_BATCHED_TOKENS
V1_DEFAULT_FROM = (0, 8, 0)   # the V1 engine is the default from vLLM 0.8.0

BATCHED_RE = re.compile(r"\bmax_num_batched_tokens=(\d{1,7})\b|--max-num-batched-tokens[ =](\d{1,7})\b|"
                        r"(?P<v0>\bInitializing a V0 LLM engine\b)|"
                        # the tensor-parallel size alone (facts "vllm_tp" is the larger of it and the pipeline's)
                        r"(?:\btensor_parallel_size=|--tensor-parallel-size[ =]|\s-tp[ =])(?P<tp>\d{1,4})\b")
BATCHED_KEYS = ("max_num_batched_tokens=", "--max-num-batched-tokens", "V0 LLM engine", "tensor_parallel_size=",
                "--tensor-parallel-size", "-tp")


def seen(f, m) -> None:
    """The "vllm_batched" fact's handler: the value printed or set, and whether the V0 engine said it started."""
    if m.group("v0"):
        f["vllm_v0"] = True
    elif m.group("tp"):
        f["vllm_tensor_parallel"] = max(f.get("vllm_tensor_parallel") or 1, int(m.group("tp")))
    else:
        f["vllm_batched"] = int(m.group(1) or m.group(2))


def _v0(f) -> bool:
    if f.get("vllm_v0"):
        return True
    ver = (f.get("runtime_version") or {}).get("vllm")
    v = parse_version(ver, "vllm") if ver else None
    return v is not None and not at_least(v, *V1_DEFAULT_FROM)


def batched_in_force(f):
    """(tokens, why) of max_num_batched_tokens in force, else (None, None)."""
    if f.get("vllm_batched"):
        return f["vllm_batched"], "the log's own setting"
    if _v0(f) and f.get("vllm_maxlen"):
        return max(int(f["vllm_maxlen"]), V0_DEFAULT_BATCHED), "the V0 engine's default, max(max_model_len, 2048)"
    return None, None


def params(f) -> dict:
    """The vLLM guides' flags: quant_flag / batched_flag empty where the log makes them wrong, and the words saying why."""
    if not f.get("vllm"):
        return {}
    p = {}
    quant = (f.get("vllm_wflags") or {}).get("quant")
    if quant:
        p.update(quant_flag="", vllm_quantized=quant)
    n, why = batched_in_force(f)
    if n is not None and (n <= GUIDE_BATCHED or (_v0(f) and not f.get("vllm_batched"))):
        p.update(batched_flag="", batched_in_force=str(n), batched_why=why)
    return p


_SERVE = re.compile(r"^vllm serve MODEL(?=\s|$)(.*)$", re.M)
_SAFE_MODEL = re.compile(r"[\w./:@+-]{1,200}")


def apply(guide, f, commands) -> None:
    """The rendered vLLM guide's `vllm serve MODEL ...` lines with the log's model and tensor-parallel size."""
    if not guide or not f.get("vllm"):
        return
    model = (f.get("llm_model") or (None, None))[-1]
    model = model if model and _SAFE_MODEL.fullmatch(model) else None
    tp = f.get("vllm_tensor_parallel") or 1

    def line(m):
        rest = m.group(1)
        if tp > 1 and "--tensor-parallel-size" not in rest:
            rest = f" --tensor-parallel-size {tp}" + rest
        return "vllm serve " + (model or "MODEL") + rest
    md = _SERVE.sub(line, guide["markdown"])
    if md != guide["markdown"]:
        guide["markdown"] = md
        guide["commands"] = commands(md)
