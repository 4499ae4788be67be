"""Reading a recorded run as an audit trail: lineage, an HTML report, a replay-backed rerun.

Everything here reads through ``store/`` and ``replay/`` and decides nothing. The views are
generic: they are driven by ``SolutionRecorded`` parents/origin/detail, by any decision payload
that names a solution id, and by the ``PipelineState`` projection, so event types added later
by other strategies show up without changes here.
"""
