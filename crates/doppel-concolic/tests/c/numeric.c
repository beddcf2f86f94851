/* Floats and 64-bit integers: sqrt, pow, fmod, division, conversions. */
#include <math.h>
#include <stdio.h>

int main(void) {
  double x, y;
  long long a;
  if (scanf("%lf %lf %lld", &x, &y, &a) != 3) return 2;
  printf("%.4f %.4f %.4f\n", sqrt(fabs(x)), pow(x, 2.0) + y, fmod(x, y == 0 ? 1 : y));
  printf("%lld %lld %lld\n", a / 7, a % 7, a * 31 + (long long)(x * 1000));
  unsigned u = (unsigned)a;
  printf("%u %x %d %g\n", u >> 3, u * 2654435761u, (int)(short)a, (double)a / 3.0);
  printf("%e %.0f %d\n", x * y, floor(y), (int)ceil(x));
  return 0;
}
