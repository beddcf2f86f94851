/* argv and a file of the preopened directory. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2) { printf("usage\n"); return 3; }
  FILE *f = fopen(argv[1], "r");
  if (!f) { printf("cannot open %s\n", argv[1]); return 4; }
  int c, lines = 0, chars = 0;
  while ((c = fgetc(f)) != EOF) { chars++; if (c == '\n') lines++; }
  fclose(f);
  printf("%s: %d lines, %d chars", argv[1], lines, chars);
  if (argc > 2 && strcmp(argv[2], "-v") == 0) printf(" (verbose)");
  printf("\n");
  FILE *o = fopen("out.txt", "w");
  fprintf(o, "%d\n", lines);
  fclose(o);
  o = fopen("out.txt", "r");
  int back = -1;
  fscanf(o, "%d", &back);
  printf("read back %d\n", back);
  return 0;
}
