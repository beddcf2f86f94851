char a,b;
int main() {
  unsigned c;
  --b;
  c=2;
  if(a)
    b=0;
  return 0;
}
