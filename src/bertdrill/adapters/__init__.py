"""The adapters: each folder or module below here wraps one library or medium, and never imports another."""
