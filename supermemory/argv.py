"""The CLI's argparse parser: text starting with "-" is told to follow "--"; `hook` arguments never exit 2."""
from __future__ import annotations

import argparse
import re
import shlex
import sys

_NEGATIVE_NUMBER = re.compile(r"-\d+|-\d*\.\d+")   # argparse takes these as values, not options


def _shell_word(text: str) -> str:
    return f'"{text}"' if not re.search(r'["$`\\!]', text) else shlex.quote(text)


class DashHintParser(argparse.ArgumentParser):
    """argparse with one better error: text that starts with "-" (`recall -pytest`) is read as an unknown
    option, so argparse says the text is missing; this parser says to put `--` before it."""

    def __init__(self, *args, **kwargs):
        self.option_names: set[str] = set()
        self.argv: list[str] = []
        super().__init__(*args, **kwargs)

    def _add_action(self, action):
        """Every option this parser knows, also those added through a mutually exclusive group."""
        self.option_names.update(action.option_strings)
        return super()._add_action(action)

    def parse_known_args(self, args=None, namespace=None):
        self.argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _unknown_option(self, token: str) -> bool:
        """True for a token argparse reads as an option this command does not have (not a negative number,
        not a prefix of a known option, nothing with a space: argparse takes those as text)."""
        name = token.split("=", 1)[0]
        return (token.startswith("-") and token != "-" and " " not in token
                and not _NEGATIVE_NUMBER.fullmatch(token)
                and not any(known.startswith(name) for known in self.option_names))

    def error(self, message):
        prefix = "the following arguments are required: "
        if message.startswith(prefix):
            tokens = self.argv[:self.argv.index("--")] if "--" in self.argv else self.argv
            stray = next((t for t in tokens if self._unknown_option(t)), None)
            if stray is not None:
                missing = message[len(prefix):].split(",")[0].strip()
                rest = [shlex.quote(t) for t in self.argv if t != stray]
                line = " ".join([self.prog, *rest, "--", _shell_word(stray)])
                message = f'a {missing} starting with "-" needs "--" before it: {line}'
        super().error(message)


MORE_WORDS = "more_words"   # a command's default naming its list positional: words after an option join it


class VersionAction(argparse.Action):
    """`--version`: reads the version (its install record) only when asked, not for every command's parser."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from supermemory import __version__

        print(f"supermemory {__version__}")   # on stdout, as argparse's own version action prints
        parser.exit()


def _joined(parser: argparse.ArgumentParser, args, extra: list[str]):
    """`recall flaky test --limit 3 on CI` reads as one query: argparse ends a list positional at the first option
    and calls what follows unrecognized. Words (never unknown options) after an option join the positional the
    command names in `MORE_WORDS`; anything else is the error argparse gives."""
    target = getattr(args, MORE_WORDS, None)
    if extra and target and isinstance(getattr(args, target, None), list) and not any(
            word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.fullmatch(word) for word in extra):
        getattr(args, target).extend(extra)
        extra = []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None = None):
    """The parsed arguments; for `supermemory hook …` leniently: arguments this version does not know are warned
    about and ignored, and ones argparse refuses (no event) give None instead of exit 2, which Claude Code and
    Codex read as a blocking error (a Codex Stop hook would keep the agent going with our usage text)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if next((a for a in argv if not a.startswith("-")), None) != "hook":
        return _joined(parser, *parser.parse_known_args(argv))
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as exc:   # a missing event (argparse said so on stderr), or --help
        if exc.code:
            sys.stderr.write("supermemory hook: arguments not understood; nothing done (the session continues)\n")
        return None
    if extra:
        sys.stderr.write(f"supermemory hook: ignoring arguments this version does not know: {' '.join(extra)}\n")
    return args
