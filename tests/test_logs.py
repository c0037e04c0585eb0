"""Logs a person can read (issue 22, section 4): bars only on a terminal, one plain line per
finished unit otherwise, nothing when quiet."""

from __future__ import annotations

import io

from neuromark._progress import LineProgress, progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_one_line_per_unit_and_no_carriage_returns():
    log = io.StringIO()
    bar = progress(range(3), desc="mg tau17", unit="instance", stream=log)
    seen = []
    for k in bar:
        seen.append(k)
        bar.set_postfix(sMAPE=f"{k * 1.5:.2f}")
    assert seen == [0, 1, 2]
    text = log.getvalue()
    assert "\r" not in text
    assert text.splitlines() == ["mg tau17: 1/3 instance(s) done (sMAPE=0.00)",
                                 "mg tau17: 2/3 instance(s) done (sMAPE=1.50)",
                                 "mg tau17: 3/3 instance(s) done (sMAPE=3.00)"]


def test_quiet_prints_nothing():
    log = io.StringIO()
    assert list(progress(range(4), desc="x", unit="epoch", quiet=True, stream=log)) == [0, 1, 2, 3]
    assert log.getvalue() == ""


def test_manual_updates_count_from_the_resumed_position():
    log = io.StringIO()
    bar = progress(total=5, initial=3, desc="qubo q", unit="entry", stream=log)
    bar.update()
    bar.update()
    bar.close()
    assert log.getvalue().splitlines() == ["qubo q: 4/5 entry(s) done", "qubo q: 5/5 entry(s) done"]


def test_a_terminal_gets_a_bar():
    from tqdm.auto import tqdm

    stream = _Terminal()
    bar = progress(range(2), desc="x", unit="batch", stream=stream)
    assert isinstance(bar, tqdm) and not isinstance(bar, LineProgress)
    assert list(bar) == [0, 1]


def test_quiet_on_a_terminal_gets_no_bar():
    stream = _Terminal()
    bar = progress(range(2), desc="x", unit="batch", quiet=True, stream=stream)
    assert isinstance(bar, LineProgress) and list(bar) == [0, 1]
    assert stream.getvalue() == ""


def test_mackey_glass_instances_log_one_line_each(tmp_path, capsys):
    from neuromark.benchmarks.mackey_glass.instances import DataSettings, ModelSettings, run_instances

    out = run_instances(ModelSettings(name="esn", seed=0), _esn_params(), 17,
                        DataSettings(taus=[17], instances=2), None, quiet=False, desc="mg-test",
                        metrics=())
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = [line for line in err.splitlines() if line.startswith("mg-test")]
    assert len(lines) == 2 and lines[-1].startswith("mg-test: 2/2 instance(s) done (sMAPE=")
    assert out  # the figures themselves are checked by the task's tests


def _esn_params():
    from neuromark.benchmarks.mackey_glass.forecasters import ESNParams

    return ESNParams(reservoir_size=20)


def test_training_logs_one_line_per_epoch(capsys):
    import numpy as np
    import torch
    from torch import nn

    from neuromark.data.hdf5_spikes import SpikeSamples
    from neuromark.networks.spike_classifiers import TrainSettings
    from neuromark.networks.spike_training import SampleSplit, fit_torch_model

    # 4 samples of 2 spikes over 2 channels, binned to 3 bins of 0.1 s
    spikes = SpikeSamples(times=np.tile([0.05, 0.25], 4), units=np.tile(np.uint16([0, 1]), 4),
                          offsets=np.arange(0, 10, 2), labels=np.asarray([0, 1, 0, 1]), channels=2)

    class Readout(nn.Module):  # (B, T, C) -> (B, T, K), as the spiking models answer
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)

    torch.manual_seed(0)
    fit_torch_model(Readout, TrainSettings(epochs=3, batch_size=2), SampleSplit(spikes, 100_000, 300_000, 1),
                    np.random.default_rng(0), quiet=False, label="toy")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("train toy")]
    assert "\r" not in err and len(lines) == 3
    assert lines[-1].startswith("train toy: 3/3 epoch(s) done (loss=")
