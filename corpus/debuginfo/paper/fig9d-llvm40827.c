char a; void opt_me_not(void);
int main() {
  int i;
  int b[] = {7, 7, 7};
  a = b[2];
  i = 0;
  for (; i < 5; i++)
    ;
  opt_me_not(); // b
}
