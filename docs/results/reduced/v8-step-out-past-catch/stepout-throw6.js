function check(f) {
  try {
    f();
  } catch (e) {
    return 1;
  }
  return 0;
}
function thrower([{ x }] = [null]) {}
function main() {
  check(function () {
    thrower();
  });
  var after = 1;
}
main();
