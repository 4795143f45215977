"""The one home of escaping and cutting user text for people (kubesched.sdk._text)."""

from kubesched.sdk._text import cut, printable, quote


def test_printable_escapes_every_control_character():
    assert printable("web\x1b[2J\x07") == "web\\x1b[2J\\x07"
    assert printable("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert printable("x\x7f\x85y") == "x\\x7f\\x85y"
    assert printable("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    assert printable("plain-name.example") == "plain-name.example"
    assert printable(5) == "5"


def test_cut_says_how_much_was_left_out_and_escapes():
    assert cut("a" * 70) == "a" * 64 + "... (6 more characters)"
    assert cut("short") == "short"
    assert cut("\x1b" * 3, 2) == "\\x1b\\x1b... (1 more character)"
    assert cut("a" * 65) == "a" * 64 + "... (1 more character)"
    assert quote("eyJ" + "t" * 100) == '"eyJ' + "t" * 61 + '... (39 more characters)"'
