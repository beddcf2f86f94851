int a[7][8]; void opt_me_not(void);
int main() {
  int b, j;
  b = 0;
  for (; b < 7; b++) {
    j = 0;
    for (; j < 8; j++)
      a[b][j] = 0;
  }
  opt_me_not(); // j
}
