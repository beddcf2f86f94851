/* Structs: nested, passed by value and by pointer, returned. */
#include <stdio.h>

struct point {
    int x;
    int y;
};

struct rect {
    struct point min;
    struct point max;
};

static struct point add(struct point a, struct point b) {
    struct point r = {a.x + b.x, a.y + b.y};
    return r;
}

static void grow(struct rect *r, int by) {
    r->min.x -= by;
    r->min.y -= by;
    r->max.x += by;
    r->max.y += by;
}

static int area(const struct rect *r) {
    int w = r->max.x - r->min.x;
    int h = r->max.y - r->min.y;
    return w * h;
}

int main(void) {
    struct point p = {1, 2};
    struct point q = {3, 4};
    struct point s = add(p, q);
    struct rect r = {{0, 0}, {2, 3}};
    grow(&r, 1);
    int a = area(&r);
    printf("%d %d %d\n", s.x, s.y, a);
    return 0;
}
