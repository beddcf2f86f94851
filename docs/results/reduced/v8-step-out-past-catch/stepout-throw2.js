function check(f) {
  try {
    f();
  } catch (e) {
    return 1;
  }
  return 0;
}
function value() {
  return 1;
}
function thrower() {
  var n = value();
  null.x = n;
}
check(thrower);
var done = true;
