"""What the CLI shows a person: control characters made visible, everything else as it is."""
from __future__ import annotations

import io

from supermemory.terminal import printable, say


def test_control_characters_but_tab_and_newline_are_written_as_escapes():
    assert printable("a\x00b\x1b[31mc\rd\x7fe\x85f\x9bg") == "a\\x00b\\x1b[31mc\\x0dd\\x7fe\\x85f\\x9bg"
    assert printable("tab\there\nnext line, 中文, é, \u00a0") == "tab\there\nnext line, 中文, é, \u00a0"


def test_say_writes_the_escaped_text_and_the_line_end():
    out = io.StringIO()
    say("x\x1by", stream=out)
    say("z", end="", stream=out)
    assert out.getvalue() == "x\\x1by\nz"
