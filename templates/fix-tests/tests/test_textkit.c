/* The textkit test suite: `test_textkit NAME` runs one case and exits 0 when
 * it passes. Protected: the loop may not change it. */
#include <stdio.h>
#include <string.h>

#include "textkit.h"

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      printf("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static void count_words(void) {
  CHECK(tk_count_words("hello world") == 2);
  CHECK(tk_count_words("") == 0);
  CHECK(tk_count_words("   ") == 0);
  CHECK(tk_count_words("  one   two\tthree\n") == 3);
}

static int reversed(const char *in, const char *want) {
  char buf[64];
  strcpy(buf, in);
  tk_reverse(buf);
  return strcmp(buf, want) == 0;
}

static void reverse(void) {
  CHECK(reversed("abc", "cba"));
  CHECK(reversed("ab", "ba"));
  CHECK(reversed("", ""));
  CHECK(reversed("racecars", "sracecar"));
}

static void palindrome(void) {
  CHECK(tk_is_palindrome("level"));
  CHECK(!tk_is_palindrome("levels"));
  CHECK(tk_is_palindrome("A man, a plan, a canal: Panama"));
  CHECK(tk_is_palindrome("No 'x' in Nixon"));
  CHECK(tk_is_palindrome(""));
}

static void parse_long(void) {
  int ok = 0;
  CHECK(tk_parse_long("42", &ok) == 42 && ok);
  CHECK(tk_parse_long("-17", &ok) == -17 && ok);
  CHECK(tk_parse_long("+5", &ok) == 5 && ok);
  CHECK(tk_parse_long("12a", &ok) == 0 && !ok);
  CHECK(tk_parse_long("-", &ok) == 0 && !ok);
}

static void copy(void) {
  char buf[8];
  memset(buf, 'x', sizeof buf);
  CHECK(tk_copy(buf, "hi", sizeof buf) == 2 && strcmp(buf, "hi") == 0);
  memset(buf, 'x', sizeof buf);
  CHECK(tk_copy(buf, "truncated", 4) == 9);
  CHECK(memcmp(buf, "tru", 4) == 0);  /* three characters and '\0' */
}

static void title_case(void) {
  char buf[64];
  strcpy(buf, "the quick  brown fox");
  tk_title_case(buf);
  CHECK(strcmp(buf, "The Quick  Brown Fox") == 0);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*run)(void);
  } cases[] = {{"count_words", count_words}, {"reverse", reverse},   {"palindrome", palindrome},
               {"parse_long", parse_long},   {"copy", copy},         {"title_case", title_case}};
  if (argc != 2) {
    fprintf(stderr, "usage: test_textkit NAME\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (strcmp(argv[1], cases[i].name) == 0) {
      cases[i].run();
      return failures == 0 ? 0 : 1;
    }
  }
  fprintf(stderr, "test_textkit: no case named %s\n", argv[1]);
  return 2;
}
