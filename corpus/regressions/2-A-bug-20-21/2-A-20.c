#include <stdio.h>

/* For every line "a b c", whether a triangle has sides a, b and c. */
int main(void) {
  int n, a, b, c;
  if (scanf("%d", &n) != 1)
    return 1;
  while (n-- > 0) {
    if (scanf("%d %d %d", &a, &b, &c) != 3)
      return 1;
    if (a + b > c && b + c > a || a + c > b)
      puts("YES");
    else
      puts("NO");
  }
  return 0;
}
