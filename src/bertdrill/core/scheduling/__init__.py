"""Scheduling, pure: when each card comes back.

- :mod:`.state`: what every scheduler, the ports and the store share (a card's :class:`~.state.Schedule`,
  the grades, the study day, passing, re-drills, leeches, the answer kinds of the log);
- :mod:`.registry`: the schedulers a learner can choose, by stored name, with their titles and
  constructors: :mod:`.sm2` (the default) and :mod:`.fsrs` (FSRS-6 through py-fsrs with its default
  parameters, or through fsrs-rs with parameters fitted to the learner's log: :mod:`.fitted`), peers;
- :mod:`.spread`: fuzz and the load balancer around any of them, as Anki does (seeded by the card and the day);
- :mod:`.exam`: an exam date for every lesson or per lesson;
- :mod:`.replay` rebuilds a card's state from its review log (switching scheduler), and
  :mod:`.calibration` scores how well each scheduler predicted the learner's recall.
"""
