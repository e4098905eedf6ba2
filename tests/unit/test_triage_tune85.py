"""Triage round 85 (task tune85: batches 296, 298, 300, 301, 302 and 304 after first sight), written from the runtimes' own
message formats:
- Triton's shared-memory refusal ("out of resource: shared memory, Required: N, Hardware limit: M"): its two numbers named
  as the corpus reads a per-allocation cap (requested, max_allowed); and Inductor's autotuner when no config of a kernel fits
  ("No valid triton configs. OutOfResources: out of resource: shared memory, Required: N, Hardware limit: M"), quoted with
  the exception between elided: the same refusal (other), the same numbers.
- text-generation-inference's launcher when a child it started ends by SIGKILL ("Download process was signaled to shutdown
  with signal 9", "Shard process ..."): the OOM killer, host-ram, the device the host's CPU.
- XLA's rematerialization warning quoted without its byte counts and "by rematerialization" ("Can't reduce memory use below
  N; only reduced to M"): read as the full warning is, its two printed sizes.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers); every event's kind


def test_triton_shared_memory_numbers_are_the_request_and_the_cap():
    text = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 81920, Hardware limit: 65536. "
            "Reducing block sizes or `num_stages` may help.\n")
    assert _read(text) == ("other", "triton.shared_memory", "pytorch", "cuda", {"requested": 81920, "max_allowed": 65536})


def test_inductor_no_valid_triton_configs_elided_is_the_shared_memory_refusal():
    text = "No valid triton configs ... Required: 131072, Hardware limit: 101376\n"
    assert _read(text) == ("other", "triton.shared_memory", "pytorch", "cuda", {"requested": 131072, "max_allowed": 101376})


def test_inductor_no_valid_triton_configs_in_full_reads_the_same():
    text = ("torch._inductor.exc.InductorError: RuntimeError: No valid triton configs. OutOfResources: out of resource: shared "
            "memory, Required: 262144, Hardware limit: 232448. Reducing block sizes or `num_stages` may help.\n")
    assert _read(text)[:2] == ("other", "triton.shared_memory")
    assert _read(text)[4] == {"requested": 262144, "max_allowed": 232448}


def test_no_valid_triton_configs_without_its_numbers_is_not_read():
    assert "triton.shared_memory" not in _kinds("RuntimeError: No valid triton configs\n")


TGI = ("2024-05-02T10:00:00.000000Z  INFO text_generation_launcher: Args {{ model_id: \"org/seq2seq-base\", num_shard: Some(1) }}\n"
       "2024-05-02T10:00:00.100000Z  INFO download: text_generation_launcher: Starting download process.\n"
       "2024-05-02T10:00:30.000000Z  WARN text_generation_launcher: No safetensors weights found for model org/seq2seq-base at "
       "revision None. Converting PyTorch weights to safetensors.\n"
       "2024-05-02T10:01:10.000000Z ERROR download: text_generation_launcher: Download process was signaled to shutdown with "
       "signal {sig}: \n"
       "Error: DownloadError\n")


def test_tgi_download_process_killed_by_signal_9_is_host_ram():
    assert _read(TGI.format(sig=9))[:4] == ("host-ram", "os.oom_killer", "tgi", "cpu")


def test_tgi_shard_process_killed_by_signal_9_is_the_oom_killer():
    text = "2024-05-02T10:02:00.000000Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 9\n"
    assert "os.oom_killer" in _kinds(text)


def test_tgi_process_ended_by_another_signal_is_not_a_kill():
    assert "os.oom_killer" not in _kinds(TGI.format(sig=15))


def test_xla_remat_warning_without_its_byte_counts_reads_its_sizes():
    text = "hlo_rematerialization: Can't reduce memory use below 30.00GiB; only reduced to 41.50GiB\n"
    assert _read(text)[:2] == ("activations", "xla.remat")
    assert _read(text)[4] == {"required": 44560285696, "limit": 32212254720}


def test_xla_remat_warning_in_full_reads_as_before():
    text = ("W external/xla/xla/service/hlo_rematerialization.cc:3005] Can't reduce memory use below 30.00GiB (32212254720 "
            "bytes) by rematerialization; only reduced to 41.50GiB (44560285696 bytes), down from 52.00GiB (55834574848 bytes) "
            "originally\n")
    assert _read(text)[:3] == ("activations", "xla.remat", "jax")
    assert _read(text)[4] == {"required": 44560285696, "limit": 32212254720}
