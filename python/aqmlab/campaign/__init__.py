"""Campaigns: a TOML file describing a base scenario, the axes to vary (scalars or whole tables,
crossed or zipped, with exclusions), seeds and metrics; run on a local process pool or a Dask
cluster, resumably, into one tidy Parquet dataset with statistics, figures and an HTML report.

Modules: `spec` (the file format and its validation), `units` (typed axis values), `runner`
(planning, cache keys, local/Dask execution), `dataset` (the tidy tables), `stats` (means and
t-based confidence intervals), `plot` (figures) and `report` (the HTML report).
"""

from aqmlab.campaign.spec import Campaign, CampaignError, load_campaign

__all__ = ["Campaign", "CampaignError", "load_campaign"]
