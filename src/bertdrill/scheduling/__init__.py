"""The schedulers a learner can choose, behind :class:`bertdrill.ports.Scheduler`.

- ``sm2``: SM-2 as the team pinned it (:mod:`bertdrill.sm2`), the default.
- ``fsrs``: FSRS-6 through py-fsrs (:mod:`bertdrill.scheduling.fsrs`).

Also pure: :mod:`.replay` rebuilds a card's state from its review log (switching scheduler),
and :mod:`.calibration` scores how well each scheduler predicted the learner's recall.
"""
