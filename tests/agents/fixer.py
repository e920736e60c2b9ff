#!/usr/bin/env python3
"""A scripted stand-in for a coding agent on the fix-tests template's textkit.

It reads the prompt on stdin (saved as $AGENT_LOG_DIR/prompt-<n>.md when set),
acts out the step that $FIXER_PLAN gives this experiment ("2:count_words
3:cheat ..."), and prints a Claude Code style JSON report. Steps:
  <case>      fix the bug behind that test case in src/textkit.c
  cheat       make every test pass by editing the protected test file
  typeerror   fix reverse, but with an int/size_t conversion the type check refuses
  syntax      break the build
  nothing     change nothing
"""
import re
import sys

from standin_common import plan_step, read_prompt, report

FIXES = {
    "count_words": """int tk_count_words(const char *s) {
  int words = 0;
  int in_word = 0;
  for (; *s; s++) {
    int space = *s == ' ' || *s == '\\t' || *s == '\\n';
    if (!space && !in_word) words++;
    in_word = !space;
  }
  return words;
}""",
    "reverse": """void tk_reverse(char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n / 2; i++) {
    char c = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = c;
  }
}""",
    "palindrome": """int tk_is_palindrome(const char *s) {
  size_t i = 0, j = strlen(s);
  while (i < j) {
    if (!isalnum((unsigned char)s[i])) { i++; continue; }
    if (!isalnum((unsigned char)s[j - 1])) { j--; continue; }
    if (tolower((unsigned char)s[i]) != tolower((unsigned char)s[j - 1])) return 0;
    i++;
    j--;
  }
  return 1;
}""",
    "parse_long": """long tk_parse_long(const char *s, int *ok) {
  long value = 0;
  int negative = *s == '-';
  *ok = 0;
  if (*s == '+' || *s == '-') s++;
  if (!*s) return 0;
  for (; *s; s++) {
    if (!isdigit((unsigned char)*s)) return 0;
    value = value * 10 + (*s - '0');
  }
  *ok = 1;
  return negative ? -value : value;
}""",
    "copy": """size_t tk_copy(char *dst, const char *src, size_t n) {
  size_t len = strlen(src);
  if (n == 0) return len;
  size_t k = len < n ? len : n - 1;
  memcpy(dst, src, k);
  dst[k] = '\\0';
  return len;
}""",
}
NAMES = {"count_words": "tk_count_words", "reverse": "tk_reverse", "palindrome": "tk_is_palindrome",
         "parse_long": "tk_parse_long", "copy": "tk_copy"}


def replace_function(source, name, body):
    pattern = re.compile(r"^[a-z_ ]+\b" + name + r"\(.*?^}", re.S | re.M)
    new, count = pattern.subn(lambda _: body, source, count=1)
    if count != 1:
        sys.exit(f"fixer: no function {name} in src/textkit.c")
    return new


def main():
    read_prompt()
    step = plan_step("FIXER_PLAN")
    with open("src/textkit.c") as f:
        source = f.read()
    if step in FIXES:
        source = replace_function(source, NAMES[step], FIXES[step])
        description = f"fix {NAMES[step]} so that the {step} test passes"
    elif step == "cheat":
        with open("tests/test_textkit.c") as f:
            tests = f.read()
        with open("tests/test_textkit.c", "w") as f:
            f.write(tests.replace("if (!(cond))", "if (0 && !(cond))"))
        report("make the checks kinder")
        return
    elif step == "typeerror":
        source = replace_function(source, "tk_reverse", """void tk_reverse(char *s) {
  int n = strlen(s);
  for (int i = 0; i < n / 2; i++) {
    char c = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = c;
  }
}""")
        description = "fix tk_reverse with an int length"
    elif step == "syntax":
        source = source.replace("int tk_count_words(const char *s) {", "int tk_count_words(const char *s) {{", 1)
        description = "restructure tk_count_words"
    else:
        report("no change: nothing to fix that I understand")
        return
    with open("src/textkit.c", "w") as f:
        f.write(source)
    report(description)


if __name__ == "__main__":
    main()
