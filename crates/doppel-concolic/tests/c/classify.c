/* Reads integers and classifies them: branches on values parsed by scanf. */
#include <stdio.h>

static const char *size(int n) {
  if (n < 0) return "negative";
  if (n == 0) return "zero";
  if (n < 10) return "small";
  if (n <= 1000) return "medium";
  return "large";
}

int main(void) {
  int n, count = 0;
  long long sum = 0;
  while (scanf("%d", &n) == 1) {
    count++;
    sum += n;
    printf("%d is %s", n, size(n));
    switch (n % 4) {
      case 0: printf(", divisible by 4\n"); break;
      case 1: printf(", 1 mod 4\n"); break;
      case 2: printf(", even\n"); break;
      default: printf(", odd\n"); break;
    }
  }
  if (count == 0) { printf("no input\n"); return 1; }
  printf("count=%d sum=%lld\n", count, sum);
  return 0;
}
