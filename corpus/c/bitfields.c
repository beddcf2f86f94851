/* Struct bitfields, arrays of structs and compound literals. */
#include <stdio.h>

struct flags {
    unsigned ready : 1;
    unsigned mode : 3;
    unsigned count : 4;
};

struct item {
    const char *name;
    struct flags f;
};

int main(void) {
    struct item items[3] = {
        {"a", {1, 2, 3}},
        {"b", {0, 5, 9}},
        {"c", {1, 7, 15}},
    };
    unsigned ready = 0, modes = 0;
    for (int i = 0; i < 3; i++) {
        struct flags f = items[i].f;
        ready += f.ready;
        modes += f.mode;
    }
    struct flags lit = (struct flags){.ready = 1, .mode = 1, .count = 2};
    printf("%u %u %u %s\n", ready, modes, lit.count, items[2].name);
    return 0;
}
