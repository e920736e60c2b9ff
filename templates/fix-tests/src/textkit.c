#include "textkit.h"

#include <ctype.h>
#include <string.h>

int tk_count_words(const char *s) {
  int words = 1;
  for (; *s; s++)
    if (*s == ' ') words++;
  return words;
}

void tk_reverse(char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i <= n / 2 && n > 0; i++) {
    char c = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = c;
  }
}

int tk_is_palindrome(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n / 2; i++)
    if (s[i] != s[n - 1 - i]) return 0;
  return 1;
}

long tk_parse_long(const char *s, int *ok) {
  long value = 0;
  *ok = 0;
  if (*s == '+' || *s == '-') s++;
  if (!*s) return 0;
  for (; *s; s++) {
    if (!isdigit((unsigned char)*s)) return 0;
    value = value * 10 + (*s - '0');
  }
  *ok = 1;
  return value;
}

size_t tk_copy(char *dst, const char *src, size_t n) {
  size_t len = strlen(src);
  if (n == 0) return len;
  memcpy(dst, src, len < n ? len + 1 : n);
  return len;
}

void tk_title_case(char *s) {
  int start = 1;
  for (; *s; s++) {
    if (isspace((unsigned char)*s)) {
      start = 1;
    } else {
      if (start) *s = (char)toupper((unsigned char)*s);
      start = 0;
    }
  }
}
