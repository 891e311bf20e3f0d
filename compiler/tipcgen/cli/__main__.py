"""`python -m tipcgen.cli`."""

from tipcgen.cli import main

main()
