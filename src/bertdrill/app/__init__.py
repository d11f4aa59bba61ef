"""The application: the review session and practice, reaching storage and scheduling through the ports."""
