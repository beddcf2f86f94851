/* Unions, enums and a tagged union. */
#include <stdio.h>

enum kind { K_INT, K_FLOAT, K_CHAR };

union payload {
    int i;
    float f;
    char c;
};

struct value {
    enum kind kind;
    union payload as;
};

static double to_double(struct value v) {
    switch (v.kind) {
    case K_INT: return v.as.i;
    case K_FLOAT: return v.as.f;
    case K_CHAR: return v.as.c;
    }
    return 0.0;
}

int main(void) {
    struct value vs[3];
    vs[0].kind = K_INT;   vs[0].as.i = 7;
    vs[1].kind = K_FLOAT; vs[1].as.f = 2.5f;
    vs[2].kind = K_CHAR;  vs[2].as.c = 'A';
    double total = 0.0;
    for (int i = 0; i < 3; i++)
        total += to_double(vs[i]);
    enum kind last = vs[2].kind;
    printf("%.3f %d\n", total, (int)last);
    return 0;
}
