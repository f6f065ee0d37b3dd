"""One convention for every verb's parser: its ``--help`` shows the verb module's
docstring (after the first line) as written, with ``code`` marks made plain."""
from __future__ import annotations

import argparse


def add_verb(verbs, name, summary, doc) -> argparse.ArgumentParser:
    """A sub-parser ``name`` of ``verbs``; ``summary`` is its line in ``fluidscope --help``."""
    body = doc.split("\n", 1)[1].strip() if "\n" in doc else ""
    return verbs.add_parser(name, help=summary, description=body.replace("``", "`"),
                            formatter_class=argparse.RawDescriptionHelpFormatter)


__all__ = ["add_verb"]
