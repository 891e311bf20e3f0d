"""tinyrec: a deliberately small, PaddleOCR-shaped text recognition project.

It exists so that TIPC-style shell commands written for PaddleOCR
(``tools/train.py -c ... -o ...``, ``tools/export_model.py``,
``tools/infer/predict_rec.py``) can be exercised end to end on a CPU-only
machine in well under a minute.
"""

DEFAULT_CHARACTERS = "0123456789abcdefghijklmnopqrstuvwxyz"
