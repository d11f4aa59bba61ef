"""bertdrill: turn a technical lesson into things people practise with."""

__version__ = "0.1.0"
