char a, b = 1; void opt_me_not(void);
int main() {
  int l = -8;
  --a;
  l = (unsigned)a / b;
  opt_me_not(); // l
  return 0;
}
