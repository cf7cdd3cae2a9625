"""The library's pipelines behind the Python entry points (:mod:`kerckhoffs.api`) and the
command line (:mod:`kerckhoffs.cli`): :mod:`~kerckhoffs.pipelines.check` (check, measure,
read a release), :mod:`~kerckhoffs.pipelines.audit` (attack, audit) and
:mod:`~kerckhoffs.pipelines.arguments` (what the entry points accept). Anonymizing is
:func:`kerckhoffs.api.anonymize_table`; publishing against a budget is
:func:`kerckhoffs.dp.publish.publish`.
"""
