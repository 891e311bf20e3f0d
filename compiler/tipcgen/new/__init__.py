"""A new suite for a model that has none yet: `tipcgen new` (starter.py), a use case above the
stages it uses (families' keys, the spec checks, the write gate)."""
