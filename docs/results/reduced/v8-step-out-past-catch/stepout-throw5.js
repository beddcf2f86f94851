function check(f) {
  try {
    f();
  } catch (e) {
    return 1;
  }
  return 0;
}
function main() {
  check(function () {
    null.x = 1;
  });
}
main();
