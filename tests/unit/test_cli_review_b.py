"""Review rvB: a count given as a fraction says a whole number is wanted (it said '1.5' was not a number)."""
import pytest

from gpu_garden.memory import cli


@pytest.mark.parametrize("flag", ["--max-num-seqs", "--ubatch", "--num-gpus"])
def test_a_fractional_count_asks_for_a_whole_number(flag, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["kv", "--model", "Qwen3-8B", flag, "1.5"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{flag}: not a whole number: '1.5'" in err


def test_a_size_that_is_not_a_number_says_so(capsys):
    with pytest.raises(SystemExit):
        cli.main(["kv", "--model", "Qwen3-8B", "--kv-cache-memory", "lots"])
    assert "--kv-cache-memory: not a number: 'lots'" in capsys.readouterr().err
