/* Observation points (virtual branches): an assignment whose value is
   compared with the variables in use, and a call whose result's sign and
   zero are recorded. */
int shift(int x) { return x - 5; }

int main(void) {
  int a, b;
  if (scanf("%d %d", &a, &b) != 2)
    return 1;
  int s = a + b;
  int c = a + 1; /* ASSIGN */
  int d = shift(b); /* CALL */
  printf("%d %d %d\n", s, c, d);
  return 0;
}
