"""(fix67a, aud67b #1) The flags the log's own vLLM command set, carried into the guides' `vllm serve MODEL ...` lines.

A figure the guide computes holds only under the settings that produced it: a --max-model-len sized for an fp8 cache
(--kv-cache-dtype fp8) fails again with vLLM's default cache, which is twice the bytes a token (vllm-project/vllm#25350);
a model that needs --trust-remote-code does not load without it; an attention backend set in the environment
(VLLM_ATTENTION_BACKEND=FLASHINFER) sizes its own workspace. So a guide's command keeps the log's --kv-cache-dtype (the
fact vllm_kv_dtype), --max-model-len (unless the guide's line sets its own), --trust-remote-code and the variables set
before `vllm serve`.

The command is the line that runs `vllm serve` (or V0's `python -m vllm.entrypoints.openai.api_server`); the last such
line in the log is the fact, and (fix67g) where the log holds several, a failure reads its own run's (vllm_run.py). Its --max-num-seqs is kept
too: the graph-capture guide never raises it (vllm_capture_fix.py)."""
import re

# a shell prompt ("$ ", "# ", "user@host:~$ ", (fix68h, rev68a #3) with a conda/venv environment before it:
# "(base) user@host:~$ ", "(.venv) $ "); vllm_launch.LINE's too
PROMPT = r"[ \t]{0,8}(?:(?:\([^\s()]{1,60}\)[ \t]{1,4})?[^\s$#>%]{0,80}[$#>%][ \t]{0,4})?"
# a prompt, then VAR=value assignments, then the command
OWN_LINE = re.compile(r"^" + PROMPT + r"((?:[A-Za-z_]\w{0,60}=\S{1,200}[ \t]{1,4}){0,8})"
                      r"(?:vllm[ \t]{1,4}serve|python3?[ \t]{1,4}-m[ \t]{1,4}vllm\.entrypoints\.openai\.api_server)(?=\s|$)(.{0,4000})")
KEYS = ("vllm serve", "vllm.entrypoints.openai")
_ENV = re.compile(r"([A-Za-z_]\w{0,60})=([\w./:,@+-]{1,200})(?=\s|$)")
_SET = re.compile(r"(?:^|\s)([A-Za-z_]\w{0,60})=")     # (fix67g, rev67b F6) every NAME= a guide line sets, whatever its value
_MAXLEN = re.compile(r"--max[-_]model[-_]len[ =](\d{1,9})(?=\s|$)")
_SEQS = re.compile(r"--max[-_]num[-_]seqs[ =](\d{1,7})(?=\s|$)")
_TRUST = re.compile(r"--trust[-_]remote[-_]code(?=\s|$)")
_KV_BYTES = re.compile(r"--kv[-_]cache[-_]memory(?:[-_]bytes)?\b")


def seen(f, m) -> None:
    """The "vllm_own" fact's handler: this run's own flags (a dict; empty values left out)."""
    env, rest = m.group(1), m.group(2)
    own = {"env": [(k, v) for k, v in _ENV.findall(env or "")]}
    for key, rx in (("max_model_len", _MAXLEN), ("max_num_seqs", _SEQS)):
        hit = rx.search(rest)
        if hit:
            own[key] = hit.group(1)
    own["trust_remote_code"] = bool(_TRUST.search(rest))
    f["vllm_own"] = own


def carried(prefix: str, rest: str, own: dict, kv_dtype=None) -> tuple:
    """(env prefix, flags to insert after the model) for one guide line: the log's own settings the line does not set.
    `kv_dtype`: (fix67g, rev67b F3) the cache type the log shows, the facts' one source (vllm_kv_dtype: the flag on any line
    of a command split over continuation lines or run by `docker run ... vllm/vllm-openai`, or the engine config's kv_cache_dtype=)."""
    own = own or {}
    have = set(_SET.findall(prefix))
    env = "".join(f"{k}={v} " for k, v in own.get("env", ()) if k not in have)
    flags = ""
    if kv_dtype and kv_dtype != "auto" and not re.search(r"--kv[-_]cache[-_]dtype\b", rest):
        flags += f" --kv-cache-dtype {kv_dtype}"
    # (fix67g, rev67b F4) not into a line that fixes the cache's bytes (--kv-cache-memory-bytes): the context that cache holds
    # is its own, and the log's (131072 tokens of Qwen2.5-7B: 7 GiB) need not fit the guide's 4 GiB
    if own.get("max_model_len") and not re.search(r"--max[-_]model[-_]len\b", rest) and not _KV_BYTES.search(rest):
        flags += f" --max-model-len {own['max_model_len']}"
    if own.get("trust_remote_code") and not _TRUST.search(rest):
        flags += " --trust-remote-code"
    return env + prefix, flags
