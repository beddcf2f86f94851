#include <stdio.h>

int main(void) {
  int n, x, positives = 0, best = -1000000;
  if (scanf("%d", &n) != 1)
    return 1;
  for (int i = 0; i < n; i++) {
    scanf("%d", &x);
    if (x >= 0)
      positives++;
    if (x > best)
      best = x;
  }
  printf("%d %d\n", positives, best);
  return 0;
}
