"""PaddleOCR-style logging: ``[YYYY/MM/DD HH:MM:SS] ppocr INFO: message``."""

import logging
import os
import sys

_FMT = "[%(asctime)s] %(name)s %(levelname)s: %(message)s"
_DATEFMT = "%Y/%m/%d %H:%M:%S"


def get_logger(name="ppocr", log_file=None):
    logger = logging.getLogger(name)
    if not getattr(logger, "_tinyrec_ready", False):
        handler = logging.StreamHandler(stream=sys.stdout)
        handler.setFormatter(logging.Formatter(_FMT, datefmt=_DATEFMT))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        logger._tinyrec_ready = True
    if log_file:
        have = [h for h in logger.handlers if isinstance(h, logging.FileHandler)]
        if not have:
            d = os.path.dirname(log_file)
            if d:
                os.makedirs(d, exist_ok=True)
            fh = logging.FileHandler(log_file, "a")
            fh.setFormatter(logging.Formatter(_FMT, datefmt=_DATEFMT))
            logger.addHandler(fh)
    return logger
