// Direct and mutual recursion.
function fact(n) {
  if (n <= 1) {
    return 1;
  }
  return n * fact(n - 1);
}

function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function isEven(n) {
  if (n === 0) return true;
  return isOdd(n - 1);
}

function isOdd(n) {
  if (n === 0) return false;
  return isEven(n - 1);
}

const f = fact(6);
const g = fib(7);
const even = isEven(10);
console.log(f, g, even);
