char a,b; void opt_me_not(void);
int main() {
  unsigned c;
  --b;
  opt_me_not(); // c
  c=2;
  if(a)
    b=0;
  return 0;
}
