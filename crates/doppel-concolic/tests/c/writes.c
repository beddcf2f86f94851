/* Output statements for Observe::writes: each write to stdout belongs to
   the user's statement whose call made it. */
#include <stdio.h>
#include <stdlib.h>

static void stars(int n) {
  for (int i = 0; i < n && i < 3; i++)
    putchar('*'); /* STARS */
}

int main(void) {
  int n = 0;
  if (getenv("BUFFERED") == 0)
    setvbuf(stdout, 0, _IONBF, 0);
  if (scanf("%d", &n) != 1)
    return 1;
  printf("n=%d ", n); /* HEAD */
  if (n > 3)
    puts("big"); /* BIG */
  else
    puts("small"); /* SMALL */
  stars(n); /* CALL */
  putchar('\n'); /* END */
  return 0;
}
