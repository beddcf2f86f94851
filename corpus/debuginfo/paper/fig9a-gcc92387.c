int printf(const char *, ...); static int a[6];
int b;
static void c () {
  b = 5 ^ a[b & 5];
}
int main() {
  int i, d = 0;
  c();
  i = 0;
  for (; i < 8; i++) {
    c();
    if(d)printf("%d",i);//i
  }
}
