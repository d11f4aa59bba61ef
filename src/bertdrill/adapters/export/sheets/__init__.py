"""Quiz sheets for teachers: one module per output format."""
