#!/usr/bin/env python3
"""List the external commands that host-side bash scripts run.

    list-commands.py SCRIPT...   (a file named Makefile: its recipe lines)

Prints one command name per line, sorted. A static scan with a small bash
lexer: it finds the words in command position (start of a line, after ; & |
( { then do else ..., inside $(...) and `...` wherever they are), looks
through wrappers that run another command (env, timeout, exec, xargs, our own
`timed LABEL ...`), and leaves out here-document bodies, quoted programs (awk,
python), case patterns, loop variables, shell keywords, builtins, functions
the scripts define and words that are variables or paths. Used by
tests/host/harness.sh to check that harness/deps.sh installs everything the
harness calls.
"""
import re
import sys

KEYWORDS = set("if then else elif fi case esac for select while until do done in function "
               "time { } [[ ]] ! coproc".split())
BUILTINS = set("""alias bg bind break builtin caller cd command compgen complete compopt continue
declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs
kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift
shopt source suspend test times trap true type typeset ulimit umask unalias unset wait . : [""".split())
# Words that start a command list without being the command themselves.
STARTERS = {"then", "do", "else", "elif", "if", "while", "until", "time", "!", "{", "}",
            "fi", "done", "esac"}
# Wrappers: how many non-option words they take before the command they run.
# The last ones are the harness's and tests' own functions that run "$@".
WRAPPERS = {"env": 0, "exec": 0, "command": 0, "nice": 0, "nohup": 0, "xargs": 0,
            "timeout": 1, "setsid": 0, "stdbuf": 0,
            "timed": 1, "check": 1, "fails_with": 1, "rejects": 0, "exit2_one_line": 0}
OPERATOR_CHARS = ";&|()<>\n"
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
COMMAND_NAME = re.compile(r"^[A-Za-z_][\w.+-]*$")


class Scanner:
    def __init__(self, text):
        self.text = text
        self.words = []      # (kind, value): kind is "word" or "op"
        self.nested = []     # bodies of command substitutions
        self.heredocs = []   # delimiters waiting for the next newline

    def skip_quoted(self, i, quote):
        """i is just past an opening quote; return the index past its end."""
        t = self.text
        while i < len(t):
            c = t[i]
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c == quote:
                return i + 1
            if quote in '"`' and t.startswith("$(", i):
                i = self.skip_dollar(i)
                continue
            i += 1
        return i

    def skip_dollar(self, i):
        """i is at "$(" or "${": return the index past the construct."""
        t = self.text
        arithmetic = t.startswith("$((", i)
        opener = t[i + 1]
        closer = ")" if opener == "(" else "}"
        depth, j = 1, i + 2
        while j < len(t) and depth:
            c = t[j]
            if c in "'\"`" and not (c == "'" and opener == "(" and arithmetic):
                j = self.skip_quoted(j + 1, c)
                continue
            if t.startswith("$(", j) or t.startswith("${", j):
                j = self.skip_dollar(j)
                continue
            if c == "\\":
                j += 2
                continue
            depth += {opener: 1, closer: -1}.get(c, 0)
            j += 1
        if opener == "(" and not arithmetic:
            self.nested.append(t[i + 2:j - 1])
        return j

    def skip_array(self, i):
        """i is at the "(" of name=( ... ): return the index past its ")"."""
        t, j = self.text, i + 1
        while j < len(t) and t[j] != ")":
            if t[j] in "'\"`":
                j = self.skip_quoted(j + 1, t[j])
            elif t.startswith("$(", j) or t.startswith("${", j):
                j = self.skip_dollar(j)
            else:
                j += 2 if t[j] == "\\" else 1
        return j + 1

    def lex(self):
        t, i = self.text, 0
        while i < len(t):
            c = t[i]
            if c == "\n":
                self.words.append(("op", "\n"))
                i += 1
                for end in self.heredocs:
                    while i < len(t):
                        eol = t.find("\n", i)
                        eol = len(t) if eol == -1 else eol
                        line = t[i:eol]
                        i = eol + 1
                        if line.strip() == end:
                            break
                self.heredocs = []
                continue
            if c in " \t\r":
                i += 1
                continue
            if c == "\\" and t.startswith("\\\n", i):
                i += 2
                continue
            if c == "#":
                eol = t.find("\n", i)
                i = len(t) if eol == -1 else eol
                continue
            if c in OPERATOR_CHARS:
                j = i
                while j < len(t) and t[j] in OPERATOR_CHARS and t[j] != "\n" and j - i < 3:
                    j += 1
                op = t[i:j]
                if op.startswith("<<") and not op.startswith("<<<"):
                    m = re.match(r"<<-?\s*(['\"]?)(\w+)\1", t[i:])
                    if m:
                        self.heredocs.append(m.group(2))
                        self.words.append(("op", "<"))
                        i += m.end()
                        continue
                self.words.append(("op", op))
                i = j
                continue
            j = i
            while j < len(t) and t[j] not in " \t\r" + OPERATOR_CHARS:
                ch = t[j]
                if ch in "'\"`":
                    j = self.skip_quoted(j + 1, ch)
                elif t.startswith("$(", j) or t.startswith("${", j):
                    j = self.skip_dollar(j)
                elif ch == "\\":
                    j += 2
                else:
                    j += 1
            # An array assignment, name=( ... ), is one word.
            if t[j - 1:j] == "=" and t.startswith("(", j):
                j = self.skip_array(j)
            word = t[i:j]
            # A file descriptor number glued to a redirection is not a word.
            if word.isdigit() and j < len(t) and t[j] in "<>":
                i = j
                continue
            self.words.append(("word", word))
            i = j
        return self


def commands(text, defined):
    scan = Scanner(text).lex()
    found = set()
    for body in scan.nested:
        found |= commands(body, defined)
    expect, pending, redirect = True, 0, False
    case_depth, in_pattern, in_test = 0, False, False
    previous = None
    for kind, value in scan.words:
        if kind == "op":
            if redirect and value == "\n":
                redirect = False
            if "<" in value or ">" in value:
                redirect = True
                continue
            if case_depth and (value.startswith(";;") or (value == "\n" and previous == "in")):
                in_pattern = True
            elif in_pattern and ")" in value:
                in_pattern = False
            elif not in_pattern:
                expect, pending = value != ")" or expect, 0
                if value == ")":
                    expect = False
            previous = value
            continue
        previous = value
        if redirect:
            redirect = False
            continue
        if value == "esac":
            # A case pattern's ")" inside $( ) ends the substitution early
            # for this scanner, leaving its esac outside: never below 0.
            case_depth = max(0, case_depth - 1)
            in_pattern = False
            continue
        if in_pattern:
            continue
        if in_test:
            in_test = value != "]]"
            continue
        if value == "case":
            case_depth += 1
            expect = False
            continue
        if value == "in" and case_depth and not expect:
            in_pattern = True
            continue
        if value in ("for", "select"):
            expect = False
            continue
        if not expect:
            continue
        if value == "[[":
            in_test, expect = True, False
            continue
        if value in STARTERS:
            continue
        if ASSIGNMENT.match(value):
            continue
        if pending:
            if not value.startswith("-"):
                pending -= 1
            continue
        name = value.strip("'\"")
        if name in WRAPPERS:
            pending = WRAPPERS[name]
            if name not in BUILTINS and name not in defined:
                found.add(name)
            continue
        expect = False
        if name in BUILTINS or name in KEYWORDS or name in defined or not COMMAND_NAME.match(name):
            continue
        found.add(name)
    return found


def make_recipes(text):
    """A Makefile's recipe lines as shell text, make's variables made harmless:
    $(CC) and $(MAKE) are the commands they name, any other $(VAR) a path."""
    lines = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            line = line[1:].lstrip("@-+")
            line = line.replace("$(CC)", "gcc").replace("$(MAKE)", "make")
            line = re.sub(r"\$[@<^*?]", "/automatic", line.replace("$$", "\0"))
            inner = re.compile(r"\$[({][^$(){}]*[)}]")
            while inner.search(line):  # innermost first: $(if $(findstring ...))
                line = inner.sub("/make-variable", line)
            lines.append(line.replace("\0", "$"))
    return "\n".join(lines) + "\n"


def main(paths):
    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        texts.append(make_recipes(text) if path.endswith("Makefile") else text)
    defined = set()
    for text in texts:
        defined |= set(re.findall(r"^\s*(?:function\s+)?([\w-]+)\s*\(\)", text, re.M))
    found = set()
    for text in texts:
        found |= commands(text, defined)
    print("\n".join(sorted(found)))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: list-commands.py SCRIPT...")
    main(sys.argv[1:])
