function g(x) {
  return x + 1;
}
let s = 0;
s += g(1);
s += g(2);
s += g(3);
console.log(s);
