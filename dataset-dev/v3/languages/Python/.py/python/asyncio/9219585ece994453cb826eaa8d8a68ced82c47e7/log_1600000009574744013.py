"""Logging configuration."""

import logging


logger = logging.getLogger(__package__)
