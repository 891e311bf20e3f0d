"""tipcgen: typed specs compiled into PaddlePaddle TIPC test suites.

Data flows one way: load (YAML with positions) -> validate (pydantic Spec) ->
lower (Spec -> legacy config text, per layout table) -> plan (config text -> steps)
-> emit (templates) / execute.
"""

# The one place the version is written: pyproject reads it (dynamic), CHANGELOG.md's first
# version heading must name it (tests/test_release.py).
__version__ = "0.2.0"
