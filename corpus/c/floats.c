/* Floating point: Newton's square root, a series and rounding. */
#include <math.h>
#include <stdio.h>

static double newton_sqrt(double v) {
    double x = v;
    for (int i = 0; i < 20; i++) {
        x = 0.5 * (x + v / x);
    }
    return x;
}

static double series(int terms) {
    double s = 0.0;
    float f = 0.0f;
    for (int k = 1; k <= terms; k++) {
        s += 1.0 / ((double)k * k);
        f += 0.1f;
    }
    return s + f;
}

int main(void) {
    double r = newton_sqrt(2.0);
    double s = series(10);
    double rounded = floor(s * 100.0 + 0.5) / 100.0;
    printf("%.3f %.3f %.3f\n", r, s, rounded);
    return 0;
}
