/* textkit: small string helpers. */
#ifndef TEXTKIT_H
#define TEXTKIT_H

#include <stddef.h>

/* The number of words in s: runs of characters other than spaces, tabs and
 * newlines. "" and "   " have none. */
int tk_count_words(const char *s);

/* Reverses s in place. */
void tk_reverse(char *s);

/* 1 when s reads the same both ways, ignoring case and anything that is not
 * a letter or a digit ("A man, a plan, a canal: Panama"), else 0. */
int tk_is_palindrome(const char *s);

/* Parses a decimal integer with an optional + or - sign. *ok is 1 when the
 * whole of s is such a number, else 0 (and the result is 0). */
long tk_parse_long(const char *s, int *ok);

/* Copies src into dst, which holds n bytes: at most n - 1 characters, and
 * dst always ends with '\0' when n > 0. Returns strlen(src), as strlcpy. */
size_t tk_copy(char *dst, const char *src, size_t n);

/* Capitalises the first letter of each word, in place. */
void tk_title_case(char *s);

#endif
