"""The market-data layer: configuration, providers, cache and record/replay."""

from tools.data.config import DataConfig, DataMode, configure, get_config

__all__ = ["DataConfig", "DataMode", "configure", "get_config"]
