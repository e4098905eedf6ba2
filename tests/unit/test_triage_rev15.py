"""rev15 B2 and S2 (session 46, fix17): round 121's Ollama-discovery row (server_predicates.ollama_discovery_cpu) under
Ollama >= 0.12, written by hand from review rev15's hand checks (/tmp/rev15/c2.py) and Ollama's own source (ollama/ollama
before 9db4bdbad): GPU discovery bootstraps a runner through llm.StartRunner(true, "", ...) (discover/runner.go:497, "no
model"), which logs msg="starting runner" cmd=... (llm/server.go:433) with "--model" only for a model path (llm/server.go:
357-365); a model load passes its path (llm/server.go:276). And 2025 builds print "no compatible GPUs were discovered" right
before the CPU record (app/server/server_test.go:288).

B2: a "starting runner" with no --model in its cmd is discovery's, not a model load: a 0.12-shaped discovery OOM reads
other-process again (it read other); one with --model still refuses the row.
S2: "no compatible GPUs were discovered" alone no longer refuses the row; "Listening on" stays the restart evidence."""
from support.regex_time import assert_each_fast
from support.triage_event import top
from test_triage_rev14 import CPU, LISTEN, NONE_FOUND, OOM, T, _refused, _row
from gpu_garden.memory.triage import engine

LISTEN12 = LISTEN.replace("0.5.7", "0.12.6")
DISC = T + 'source=runner.go:80 msg="discovering available GPUs..."\n'
SR = T + 'source=server.go:433 msg="starting runner" cmd="/usr/local/bin/ollama runner --ollama-engine --port 40123"\n'
SR_MODEL = SR.replace("--port", "--model /root/.ollama/models/blobs/sha256-6a0746a1ec1a --port")
CPU12 = (T + 'source=types.go:60 msg="inference compute" id=cpu library=cpu compute="" name=cpu description=cpu '
         'libdirs=ollama driver="" pci_id="" type="" total="31.3 GiB" available="30.4 GiB"\n')


def _discovery(ev, cause):
    return cause == "other-process" and ev["runtime"] == "ollama" and _row(ev)


def test_discovery_runner_without_model_is_no_load():
    for text in (LISTEN12 + DISC + SR + OOM + CPU12, SR + OOM + CPU12,
                 LISTEN12 + DISC + SR + OOM + "  current device: 0, in function ggml_cuda_init at ggml-cuda.cu:300\n" + CPU12):
        cause, _, ev = top(text)
        assert _discovery(ev, cause), (text, cause)          # was other: the bootstrap runner read as a model load


def test_runner_with_a_model_still_refuses():
    _refused(LISTEN12 + DISC + SR_MODEL + OOM + CPU12)
    _refused(SR_MODEL + OOM + CPU12)
    # a cmd cut before its port (no --port seen) is read as before: a load
    _refused(SR.split(" --port")[0] + "\n" + OOM + CPU12)


def test_runner_cmd_reads_linear():
    n = 1 << 20
    long_cmd = T + 'msg="starting runner" cmd="ollama runner ' + "--modex " * (n // 8) + '--port 1"\n'
    assert_each_fast([(engine.triage_text, [long_cmd + OOM + CPU12, (SR * (n // len(SR))) + OOM + CPU12])], limit=10.0)


def test_no_gpus_alone_does_not_refuse():
    for text in (LISTEN12 + DISC + SR + OOM + NONE_FOUND + CPU12, OOM + NONE_FOUND + CPU):
        cause, _, ev = top(text)
        assert _discovery(ev, cause), text                  # was refused (other)
    _refused(OOM + NONE_FOUND + LISTEN + CPU)                # a restart between still refuses
