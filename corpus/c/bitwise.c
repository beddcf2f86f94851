/* Bitwise operators, shifts and unsigned arithmetic. */
#include <stdio.h>

static unsigned popcount(unsigned v) {
    unsigned n = 0;
    while (v) {
        n += v & 1u;
        v >>= 1;
    }
    return n;
}

int main(void) {
    unsigned flags = 0;
    flags |= 1u << 3;
    flags |= 1u << 5;
    flags ^= 0xFFu;
    unsigned char low = (unsigned char)(flags & 0x0F);
    unsigned bits = popcount(flags);
    unsigned wrapped = 0u - 1u;
    printf("%u %u %u %u\n", flags, low, bits, wrapped >> 28);
    return 0;
}
