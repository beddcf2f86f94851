function f() {
  var x = 1;
  if (false) { x = 2; }
}
f();
