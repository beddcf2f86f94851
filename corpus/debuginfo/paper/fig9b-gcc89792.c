volatile int a, b; void opt_me_not(void);
static int c;
int main() {
  int i;
  b = 0;
  i = 0;
  for (; i < 3; i++)
    a = c;
  i = 0;
  for (; i < 5; i++)
    ;
  opt_me_not(); // i
}
