"""Hypothesis settings for the property tests: deterministic (derandomize: the same
examples on every run and machine, so CI never fails by chance), no per-example deadline
(a loaded CI machine must not turn slowness into failures), and few examples, so the whole
directory stays within seconds. ``HYPOTHESIS_PROFILE=thorough`` explores more locally."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          database=None,  # nothing written into the checkout
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("thorough", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
