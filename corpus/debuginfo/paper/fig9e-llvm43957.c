char a, b;
int main() {
  --b;
  unsigned l_801 = 36901;
  ++l_801;
  if (a) // l_801
    b = 0;
}
