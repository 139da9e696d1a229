"""Conformance suites for every door: arms, fusion methods, metrics and tables, built-in or plug-in.

Each suite is a plain function returning the problems it found (``[]``: the component keeps
its contract), so a team runs the same checks on its own plug-in as rulegauge runs on its
built-ins::

    from rulegauge.testing.arms import check_arm
    assert check_arm("acme-overlap").problems == []

and parametrise a test over a registry (``ARMS.names()``, ``FUSION_METHODS.names()``,
``METRICS.names()``: built-ins and installed plug-ins alike, as ``tests/testing/`` does).
docs/plugins.md lists what each suite checks; :mod:`rulegauge.testing.doc_tables` writes the
docs' generated tables.
"""
