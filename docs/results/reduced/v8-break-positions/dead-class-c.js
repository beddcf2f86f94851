function main() {
  var n = 0;
  class C {}
  n = 1;
}
main();
