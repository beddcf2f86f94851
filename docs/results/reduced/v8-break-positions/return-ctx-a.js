function f(input) {
  var ia = input.split("");
  var p = 0;
  if (p) { p = 1; }
  return ia.join("");
}
f("abc");
