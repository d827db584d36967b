#!/usr/bin/env python3
"""The project's sources stay within the size limits that keep them easy to read and change.

- no source file (tests and experiments aside) over 500 lines;
- no function over 120 lines, counted from the line of its opening brace to that of its closing one;
- no class or struct with more than 40 member functions (constructors and operators count; a
  function declared and defined apart counts once, at its declaration).

The code is read with a small C++ scanner, not a compiler: comments, string and character literals
(raw strings included) and preprocessor lines are blanked first, then braces are matched. A brace
opens a function body when the text before it, back to the last `;`, `{` or `}`, ends in a
parameter list (with what may follow one: qualifiers, a trailing return type, a constructor's
initialisers) and the brace sits at namespace or class scope. A test that cannot fail is worth
nothing, so the scanner is first checked on snippets with known answers (`--self-test` runs only that).

Usage: size_limits_test.py REPO | size_limits_test.py --self-test
"""
import pathlib
import re
import sys

from project_sources import project_sources

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 120
MAX_CLASS_METHODS = 40
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\(")
CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(\w+)[^;()]*$")
AFTER_PARAMETERS = re.compile(
    r"\)\s*(?:const|noexcept(?:\([^()]*\))?|override|final|mutable|&|&&|\s)*"
    r"(?:->\s*[^{;]+)?\s*(?::\s*[^;]*)?$", re.S)
INITIALISER = re.compile(r"\)\s*(?:noexcept\s*)?:\s*[^;]*[\w>]\s*$", re.S)


def blank(text):
    """`text` with comments, literals and preprocessor lines turned into spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delimiter = text[i + 2:text.find("(", i + 2)]
            end = text.find(")" + delimiter + '"', i)
            end = n if end < 0 else end + len(delimiter) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a digit separator
            end = i + 1
            while end < n and text[end] != c:
                end += 2 if text[end] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:end]) + c)
            i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_function_head(head):
    """Whether `head`, the text before a `{` back to the last `;`, `{` or `}`, opens a function body."""
    head = head.strip()
    if "(" not in head or CONTROL.search(head) or re.search(r"\[[^\]]*\]\s*(\([^()]*\))?[^()]*$", head):
        return False  # no parameters, a control statement, or a lambda
    if re.search(r"=\s*$", head) or re.match(r"(return|namespace|enum)\b", head):
        return False
    # The parameter list is the first parenthesised group after a name that only qualifiers, a trailing
    # return type or a constructor's initialisers follow.
    depth = 0
    for position, c in enumerate(head):
        if c == "(":
            if depth == 0:
                start = position
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                before = head[:start].rstrip()
                name = re.search(r"(operator\s*\S+|~?\w+)\s*$", before)
                if name and AFTER_PARAMETERS.match(head[position:]):
                    # `x = f(a)` has `=` before the name; a declaration of `operator=` has it in the name
                    return "=" not in before or "operator" in before
    return False


class Scope:
    def __init__(self, kind, name, line):
        self.kind, self.name, self.line = kind, name, line
        self.methods = set()


def scan(text):
    """([(function head, first line, last line)], [(class name, line, member function count)])."""
    code = blank(text)
    functions, classes = [], []
    stack = [Scope("namespace", "", 1)]
    head_start = 0
    line = 1
    paren = 0
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in "([":
            paren += 1
        elif c in ")]":
            paren = max(0, paren - 1)
        elif c == ";" and paren == 0:
            if stack[-1].kind == "class":
                declared = member_function_name(code[head_start:i])
                if declared:
                    stack[-1].methods.add(declared)
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            scope = stack[-1]
            first_line = line
            if scope.kind in ("namespace", "class") and INITIALISER.search(head):
                stack.append(Scope("initialiser", "", first_line))
                continue  # `member{...}` in a constructor's initialisers: the head goes on after it
            elif scope.kind in ("namespace", "class") and is_function_head(head):
                if scope.kind == "class":
                    declared = member_function_name(head)
                    if declared:
                        scope.methods.add(declared)
                stack.append(Scope("function", " ".join(head.split())[-80:], first_line))
            elif (scope.kind in ("namespace", "class") and CLASS_HEAD.search(head.split("=")[0]) and "(" not in head
                  and not re.search(r"\benum\b", head)):
                stack.append(Scope("class", CLASS_HEAD.search(head).group(2), first_line))
            elif scope.kind == "namespace" and re.search(r"\b(namespace|extern\s+\"C\")\b[^;]*$", head):
                stack.append(Scope("namespace", "", first_line))
            else:
                stack.append(Scope("block", "", first_line))
            head_start = i + 1
            paren = 0
        elif c == "}":
            if len(stack) > 1:
                closed = stack.pop()
                if closed.kind == "initialiser":
                    continue
                if closed.kind == "function":
                    functions.append((closed.name, closed.line, line))
                elif closed.kind == "class":
                    classes.append((closed.name, closed.line, len(closed.methods)))
            head_start = i + 1
            paren = 0
    return functions, classes


def member_function_name(declaration):
    """The name of the member function `declaration` (text at class scope) declares, else None."""
    text = re.sub(r"\b(public|private|protected)\s*:", " ", declaration).strip()
    text = re.sub(r"^\s*(template\s*<[^;{]*?>\s*)", "", text)
    if "(" not in text or text.startswith(("using ", "friend ", "static_assert", "typedef ")):
        return None
    before = text[:text.index("(")]
    if "=" in before and "operator" not in before:
        return None  # a data member initialised with a call
    if before.count("<") > before.count(">"):
        return None  # std::function<void(int)> and the like: the parenthesis is in a template argument
    name = re.search(r"(operator\s*\S+|~?\w+)\s*$", before)
    if name is None:
        return None
    if not AFTER_PARAMETERS.match(text[text.index(")", len(before)) if ")" in text else 0:]) \
            and not re.search(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(=\s*(0|default|delete))?\s*$", text):
        return None
    # Overloads of one name are one member function each: keep the parameter list.
    return name.group(1) + re.sub(r"\s+", "", text[len(before):text.rfind(")") + 1])


def check(repo):
    problems = []
    files = 0
    for source, relative in project_sources(repo):
        files += 1
        text = source.read_text()
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            problems.append(f"{relative}: {lines} lines, more than {MAX_FILE_LINES}")
        functions, classes = scan(text)
        for name, first, last in functions:
            if last - first + 1 > MAX_FUNCTION_LINES:
                problems.append(f"{relative}:{first}: a function of {last - first + 1} lines, more than "
                                f"{MAX_FUNCTION_LINES}: {name}")
        for name, first, methods in classes:
            if methods > MAX_CLASS_METHODS:
                problems.append(f"{relative}:{first}: class {name} has {methods} member functions, more than "
                                f"{MAX_CLASS_METHODS}")
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(f"{len(problems)} source(s) over the size limits")
    print(f"{files} files within the size limits ({MAX_FILE_LINES} lines a file, {MAX_FUNCTION_LINES} a function, "
          f"{MAX_CLASS_METHODS} member functions a class)")


def self_test():
    """The scanner on snippets whose functions and classes are known."""
    body = "\n".join(f"  int v{k} = {k};" for k in range(10))
    cases = {
        "namespace a {\nint f(int x) {\n" + body + "\n  return x;\n}\n}\n": ([("f", 2, 14)], []),
        "struct S {\n  S() : a_(1), b_{2} {\n  }\n  int g() const noexcept { return 1; }\n  int a_; int b_;\n};\n":
            ([("S", 2, 3), ("g", 4, 4)], [("S", 1, 2)]),
        "auto h() -> int {\n  auto l = [&](int y) {\n    return y;\n  };\n  if (l(1)) {\n  }\n  return 0;\n}\n":
            ([("h", 1, 8)], []),
        'const char* s = "{ not a brace";\nint k(){\n  // }\n  return \'}\';\n}\n': ([("k", 2, 5)], []),
        "class C {\n public:\n  void a();\n  void a(int);\n  std::function<void(int)> cb;\n  int n = f(2);\n"
        "  bool operator==(const C&) const = default;\n  virtual void v() = 0;\n};\n": ([], [("C", 1, 4)]),
        'auto r = R"x(})x";\nstd::vector<int> v{1, 2};\nint m() { return 1\'000; }\n': ([("m", 3, 3)], []),
        "template <typename T>\nT t(T x)\n{\n  return x;\n}\nenum class E { a, b };\n": ([("t", 3, 5)], []),
    }
    failures = 0
    for snippet, (want_functions, want_classes) in cases.items():
        functions, classes = scan(snippet)
        got_functions = [(re.search(r"(operator\s*\S+|~?\w+)\s*\(", name).group(1), first, last)
                         for name, first, last in functions]
        if sorted(got_functions) != sorted(want_functions) or sorted(classes) != sorted(want_classes):
            failures += 1
            print(f"scanner wrong on:\n{snippet}\n  functions {got_functions}, expected {want_functions}"
                  f"\n  classes {classes}, expected {want_classes}")
    if failures:
        sys.exit(f"{failures} scanner case(s) wrong")
    print(f"the scanner reads all {len(cases)} snippets right")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        self_test()
        check(pathlib.Path(sys.argv[1]).resolve())
