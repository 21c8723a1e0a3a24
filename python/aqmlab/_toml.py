"""TOML reading on every supported Python: the standard `tomllib` (3.11+), else `tomli`."""

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["tomllib"]
