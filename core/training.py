"""The core training loop every sampling formalism gets (see the contract in `treegram.formalism`).

``run_sampler`` is what ``treegram train NAME`` runs for a formalism with ``sampling`` set::

    prepared = formalism.prepare(corpus, settings)                 # derivation data + base distribution P0
    state    = formalism.make_state(prepared, settings, move.state_kind, run, ctx)
    driver   = move.start(state, ...)                               # registered sampler move (--sampler)
    trace    = driver.run(iterations)                               # annealing, checkpoints, Ctrl-C, progress
    model    = formalism.extract_model(state, prepared, settings, run, trace)

Posterior averaging (`treegram.bayes.averaging`): when ``formalism.averaging(settings)`` (by default the
settings' own ``averaging()`` method) returns `AveragingOptions` with more than one sample, a `SampleCollector`
takes ``state.snapshot()`` after the scheduled sweeps (kept in the checkpoint, so resume is exact) and the model
is extracted with ``extract_model(..., samples=<snapshots, newest first>, averaging_info=<sweeps used>)``.

Hyperparameter resampling happens inside the state's sweep (it is part of the model: which parameters have
priors), checkpoint/resume and annealing inside the driver (`treegram.bayes.driver`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from treegram.errors import InputError

if TYPE_CHECKING:  # the contract calls this loop (Formalism.train), so the loop only names its types
    from treegram.formalism import Formalism, RunOptions, TrainContext


def get_move(formalism: Formalism, name: str):
    """The registered sampler move `name`, checked against the state kinds `formalism` can build."""
    from treegram.plugin_manager import sampler_moves

    found = sampler_moves()
    if name not in found:
        raise InputError(f"unknown sampler {name!r} (installed: {', '.join(sorted(found)) or 'none'})",
                         hint="run `treegram plugins` to see the registered sampler moves")
    move = found[name].obj
    if move.state_kind not in formalism.state_kinds:
        usable = ", ".join(formalism.sampler_moves()) or "none"
        raise InputError(f"sampler {name!r} needs a {move.state_kind!r} state, which {formalism.name} does not "
                         f"provide", hint=f"use one of: {usable}")
    return move


def with_move(formalism: Formalism, run: RunOptions) -> RunOptions:
    """`run` with its sampler move named: ``move=None`` is the formalism's default (``Sampling.default_move``)."""
    return run if run.move is not None else attrs.evolve(run, move=formalism.sampling.default_move)


def sample(formalism: Formalism, corpus: Any, settings: Any, run: RunOptions, *, callback=None, note=None,
           ctx: TrainContext | None = None, unit_progress=None, on_start=None):
    """Run the loop without a console: returns (model, trace).  `callback(record)` sees every sweep record,
    `unit_progress(fraction)` the progress inside a sweep (`SweepDriver.unit_progress`), `on_start(driver)` the
    moment sampling starts (after the data is prepared and the state built); ``run.move`` None: the formalism's
    default move."""
    run = with_move(formalism, run)
    move = get_move(formalism, run.move)
    prepared = formalism.prepare(corpus, settings)
    state = formalism.make_state(prepared, settings, move.state_kind, run, ctx)
    driver = run.start(move, state, callback)
    collector = attach_averaging(driver, state, formalism.averaging(settings), run.iterations)
    if note is not None and run.resume:
        note(f"resumed from {run.checkpoint} after {driver.sweeps_done} iterations")
    driver.unit_progress = unit_progress
    if on_start is not None:
        on_start(driver)
    trace = driver.run(run.iterations)  # Ctrl-C / kill: the driver checkpoints at the next site and stops
    if collector is None:
        return formalism.extract_model(state, prepared, settings, run, trace), trace
    return formalism.extract_model(state, prepared, settings, run, trace, samples=collector.samples(),
                                   averaging_info=collector.info()), trace


def attach_averaging(driver, state, options, iterations: int):
    """A `SampleCollector` on `driver` when `options` (`AveragingOptions` or None) asks for more than one sample,
    else None."""
    from treegram.bayes.averaging import SampleCollector

    if options is None or options.samples <= 1:
        return None
    if not callable(getattr(state, "snapshot", None)):
        raise InputError(f"posterior averaging needs a state with snapshot(); {type(state).__name__} has none",
                         hint="train with --average 1")
    return SampleCollector(options, iterations, state.snapshot).attach(driver)


def _default_progress(record: dict) -> str:
    return f"LL {record['log_likelihood']:.1f}  T {record['temperature']:.2f}  {record['seconds']:.1f}s"


def run_sampler(formalism: Formalism, corpus: Any, settings: Any, run: RunOptions, ctx: TrainContext):
    """`sample` with a progress bar, the per-iteration table and the checkpoint note on the console."""
    ui, spec, run = ctx.ui, formalism.sampling, with_move(formalism, run)
    rows: list[dict] = []
    label = spec.label or f"{run.move} sampling"
    fmt = spec.progress or _default_progress
    # the bar's clock (elapsed, ETA) starts with the first sweep, after preparation and any initialisation bar
    with ui.task(label, total=run.iterations, start=False) as advance:
        def callback(record):
            rows.append(record)
            advance(completed=record["sweep"], info=fmt(record))

        model, _trace = sample(formalism, corpus, settings, run, callback=callback, note=ui.note, ctx=ctx,
                               unit_progress=advance, on_start=lambda driver: advance(completed=driver.sweeps_done))
    if rows and not ctx.json:
        headers = ["iteration", "T", "log-likelihood", *[h for h, _ in spec.columns], "seconds"]
        ui.table(f"{label} (per iteration)", headers,
                 [(r["sweep"], r["temperature"], round(r["log_likelihood"], 1),
                   *[_column(r, key) for _, key in spec.columns], round(r["seconds"], 2)) for r in rows[-20:]])
    if run.checkpoint is not None:
        ui.note(f"checkpoint: {run.checkpoint} (continue with --resume --iterations N)")
    return model


def _column(record: dict, key: str):
    for k in key.split("|"):  # "changed|accepted": the first key the record has
        if k in record:
            v = record[k]
            return round(v, 3) if isinstance(v, float) else v
    return ""
