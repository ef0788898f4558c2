"""Shared test set-up: hypothesis profiles.

``HYPOTHESIS_PROFILE=thorough pytest tests/sdk/test_properties.py`` runs the property tests
with many more examples than the default (used when hunting rule bugs)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
