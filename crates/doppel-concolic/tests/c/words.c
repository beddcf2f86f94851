/* Strings: scanf %s, strcmp, qsort, character classes, malloc. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) { return *(const char *)a - *(const char *)b; }

int main(void) {
  char word[128];
  int lines = 0;
  while (scanf("%127s", word) == 1) {
    size_t n = strlen(word);
    char *sorted = malloc(n + 1);
    memcpy(sorted, word, n + 1);
    qsort(sorted, n, 1, cmp);
    int upper = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
      if (isupper((unsigned char)word[i])) upper++;
      if (isdigit((unsigned char)word[i])) digits++;
    }
    printf("%s -> %s (%zu chars, %d upper, %d digits)%s\n", word, sorted, n, upper, digits,
           strcmp(word, "stop") == 0 ? " STOP" : "");
    free(sorted);
    if (++lines > 50) break;
  }
  return 0;
}
