/* 2-B: a lift goes from floor a to floor b; how many floors does it pass,
   both ends included? */
#include <stdio.h>

int main(void) {
  int a, b, floors;
  if (scanf("%d %d", &a, &b) != 2)
    return 1;
  if (a > b)
    floors = a - b + 1;
  else
    floors = b - a + 1;
  printf("%d\n", floors);
  return 0;
}
