"""Bayesian machinery shared by the grammar plugins.

- `dp`: the DP predictive and collapsed-joint terms every sampler uses (`log_predictive`, `log_rising`,
  `log_normaliser`; numba), and collapsed Dirichlet-process count tables over interned structures (`DPCounts`).
- `gibbs`: a generic site-wise Gibbs driver with annealing and exact checkpoint/resume (`GibbsSampler`).
- `blocked`: a generic blocked Metropolis-Hastings driver over whole derivations (`BlockedMH`, `Proposal`).
- `hyper`: slice sampling of concentrations and Beta-prior parameters.
- `averaging`: posterior averaging over several samples of a chain (`AveragingOptions`, `SampleCollector`).
"""

from treegram.bayes.averaging import AveragingOptions, SampleCollector, average_counts
from treegram.bayes.blocked import BlockedMH, BlockedModel, Proposal
from treegram.bayes.dp import (CountError, DPArrays, DPCounts, KeyTable, log_normaliser, log_predictive, log_rising,
                               nb_decrement, nb_increment, nb_log_predictive)
from treegram.bayes.driver import (AnnealingSchedule, CheckpointConfig, tempered_accept, tempered_binary,
                                   tempered_choice)
from treegram.bayes.gibbs import GibbsModel, GibbsSampler
from treegram.bayes.hyper import (Beta, Gamma, resample_beta, resample_beta_slice, resample_concentrations,
                                  slice_sample, slice_sample_log, slice_sample_logit)

__all__ = [
    "AnnealingSchedule", "AveragingOptions", "Beta", "BlockedMH", "BlockedModel", "CheckpointConfig", "CountError", "DPArrays",
    "DPCounts", "Gamma", "GibbsModel", "GibbsSampler", "KeyTable", "Proposal", "SampleCollector", "average_counts", "log_normaliser", "log_predictive",
    "log_rising", "nb_decrement", "nb_increment",
    "nb_log_predictive", "resample_beta", "resample_beta_slice", "resample_concentrations", "slice_sample",
    "slice_sample_log", "slice_sample_logit", "tempered_accept", "tempered_binary", "tempered_choice",
]
