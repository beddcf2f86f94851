short a, c; void opt_me_not(void);
long b;
short fun1() { return c; }
char d() {
  short l_30[4] = {1};
  a = fun1();
  l_30[3]++;
  opt_me_not(); //break here.
  return b;
}
int main() { d(); }
