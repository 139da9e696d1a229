"""Conformance suites for every door: arms, fusion methods, metrics and tables, built-in or plug-in.

Each suite is a plain function returning the problems it found (``[]``: the component keeps
its contract), so a team runs the same checks on its own plug-in as rulegauge runs on its
built-ins::

    from rulegauge.testing.arms import check_arm
    assert check_arm("acme-overlap").problems == []

and :mod:`rulegauge.testing.pytest_params` gives pytest parameters over every registered
component. docs/plugins.md lists what each suite checks.
"""
