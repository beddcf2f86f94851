/* Observation points at 1- and 2-byte stores (char and short variables):
   each assignment is compared with the variables of its size in use (at
   the char assignment: a, just read, and d and b, used before it). */
#include <stdio.h>

int main(void) {
  char a, b;
  short x, y;
  if (scanf(" %c %c %hd %hd", &a, &b, &x, &y) != 4)
    return 1;
  char d = b;
  char c = a + 1; /* CHAR */
  short s = x * 2; /* SHORT */
  printf("%c %c %c %d %d %d\n", a, b, c, x, y, s);
  return 0;
}
