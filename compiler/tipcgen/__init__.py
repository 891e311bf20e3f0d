"""tipcgen: typed specs compiled into PaddlePaddle TIPC test suites.

Data flows one way: load (YAML with positions) -> validate (pydantic Spec) ->
lower (Spec -> legacy config text, per layout table) -> plan (config text -> steps)
-> emit (templates) / execute.
"""

__version__ = "0.1.0"
