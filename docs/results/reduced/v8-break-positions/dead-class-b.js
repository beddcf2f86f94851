function main() {
  var n = 0;
  if (false) { n = 5; }
  if (false) { n = 2; }
  class C {}
  n = 1;
}
main();
