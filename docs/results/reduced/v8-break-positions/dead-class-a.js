function main() {
  var n = 0;
  if (false) { n = 5; }
  class C {}
  n = 1;
}
main();
