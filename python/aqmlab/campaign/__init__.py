"""Campaigns: a TOML file describing a base scenario, the axes to vary (scalars or whole tables,
crossed or zipped, with exclusions), seeds and metrics; run on local processes, a Dask cluster
or Slurm, resumably, into one tidy Parquet dataset with statistics, figures and an HTML report.

Modules: `errors` (CampaignError, StoreError), `spec` (the file format and its validation),
`units` (typed axis values), `store` (the output directory: lock, batches of runs, failures,
fingerprints), `worker` and `pool` (worker processes), `runner` (the one runner of campaigns,
sweeps, paper packs and characterization: local/Dask/Slurm execution), `dataset` (the tidy
tables), `stats` (means and t-based confidence intervals), `plot` (figures) and `report` (the
HTML report).
"""

from aqmlab.campaign.errors import CampaignError, StoreError

__all__ = ["Campaign", "CampaignError", "StoreError", "load_campaign"]


def __getattr__(name: str):
    # spec is imported on first use, so a worker process (which needs only `store` and
    # `worker`) does not load the campaign-file machinery
    if name in ("Campaign", "load_campaign"):
        from aqmlab.campaign import spec

        return getattr(spec, name)
    raise AttributeError(name)
