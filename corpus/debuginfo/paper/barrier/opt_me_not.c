void opt_me_not(void) { __asm__ volatile("" ::: "memory"); }
