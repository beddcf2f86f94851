#include <stdio.h>

/* The letter grade of every score: A from 90, B from 75, C from 50. */
int main(void) {
  int n, s;
  if (scanf("%d", &n) != 1)
    return 1;
  for (int i = 0; i < n; i++) {
    if (scanf("%d", &s) != 1)
      return 1;
    char g;
    if (s >= 90)
      g = 'A';
    else if (s >= 70)
      g = 'B';
    else if (s >= 50)
      g = 'C';
    else
      g = 'F';
    printf("%c\n", g);
  }
  return 0;
}
