"""The exports: Anki packages, quiz sheets, and the one atomic writer every output file goes through."""
