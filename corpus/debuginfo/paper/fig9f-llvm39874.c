char a = 25; void opt_me_not(void);
short b() {
  short i = 23680;
  i = a;
  opt_me_not(); // i
  return a;
}
int main() { b(); }
