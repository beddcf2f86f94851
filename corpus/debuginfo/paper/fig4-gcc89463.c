int a; void opt_me_not(void);
int main() {
  int i;
  for (; a < 10; a++)
    i = 0;
  for (; i < 6; i++)
    ;
  opt_me_not(); // i
}
